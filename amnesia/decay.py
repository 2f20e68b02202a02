"""Decay as pure, deterministic functions of (item, now) — seed 000 §5.4.

Age is measured from `last_accessed_at` (sliding renewal, §5.4: every injection/recall restarts the clock),
not from creation as the §8.3 pseudocode does; §5.4 is the behaviour the design argues for
("use it or lose it").

    flat:        s(t) = base                         (until the ttl)
    linear:      s(t) = base * max(0, 1 - t/ttl)
    ebbinghaus:  s(t) = base * exp(-t/tau), tau = ttl/k   (k = Config.decay_k, default 3)
    any curve:   s(t) = 0 once t >= ttl              (idle for a whole ttl; not in rank mode)

Pinned items and items without a ttl do not decay. An item is *stale* when s < stale_strength and *due* (to be
forgotten) when s < forgotten_strength, when it has been idle for a whole ttl, or when its hard `expires_at`
has passed. Which trigger fires first with base strength 1 and the default thresholds (0.3 / 0.05, k=3):

    flat        never stale; forgotten at ttl ("expired")
    linear      stale after 0.70*ttl; forgotten after 0.95*ttl ("stale": decayed out)
    ebbinghaus  stale after ln(1/0.3)/3*ttl ≈ 0.4013*ttl; forgotten after ln(20)/3*ttl ≈ 0.9986*ttl ("stale")

With `decay_mode="rank"` (mem0 platform's decay) the curve only orders the injection: no zeroing at the ttl,
no stale state, nothing forgotten by time alone — only a hard `expires_at` still applies.

Thresholds are strict: s == stale_strength is still active. The formulas exist in a scalar form (one item)
and a numpy form (the whole store at once, for selection and sweeps over 10^5 items); tests check they agree.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from amnesia.config import Config
    from amnesia.item import MemoryItem

CURVE_CODES: dict[str, int] = {"flat": 0, "linear": 1, "ebbinghaus": 2}
FLAT, LINEAR, EBBINGHAUS = 0, 1, 2


SMALL_STORE = 16  # up to this many slots, `decayed` works on Python floats: numpy's per-call cost dominates


def decayed(base, age, ttl, curve, pinned, k: float, *, zero_at_ttl: bool = True):
    """Current strengths for base strengths `base` after `age` seconds idle (numpy arrays, or scalars that
    broadcast; `ttl` inf when absent, `curve` as CURVE_CODES; `zero_at_ttl` False in rank mode).
    `strength()` is the single-item form; a test checks they agree."""
    try:
        aligned = base.ndim == 1 and base.shape == age.shape == ttl.shape == curve.shape == pinned.shape
    except AttributeError:  # a Python scalar among them (a report's figure passes one ttl, curve and pin)
        aligned = False
    if not aligned:
        return _decayed_numpy(*np.broadcast_arrays(base, age, ttl, curve, pinned), k, zero_at_ttl)
    if len(base) <= SMALL_STORE:
        ttls = ttl.tolist()
        if 0.0 not in ttls:  # (a zero ttl is never valid; numpy's inf and nan for it come from numpy)
            return _decayed_small(base, age, ttls, curve, pinned, k, zero_at_ttl)
    return _decayed_numpy(base, age, ttl, curve, pinned, k, zero_at_ttl)


def _decayed_numpy(base, age, ttl, curve, pinned, k: float, zero_at_ttl: bool):
    # Written in place where it can be (a sweep of 10^5 items pays for every pass and every new array), with
    # the operations of the plain formula in its order (a test keeps that formula and compares the bits).
    ratio = np.maximum(age, 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        np.divide(ratio, ttl, out=ratio)
    ratio[~np.isfinite(ttl)] = 0.0
    shaped = np.negative(ratio)
    shaped *= k
    np.exp(shaped, out=shaped)
    shaped *= base
    ebbinghaus = curve == EBBINGHAUS
    if not ebbinghaus.all():  # (the default curve: most stores hold no other)
        shaped = np.where(ebbinghaus, shaped, np.where(curve == LINEAR, base * (1.0 - ratio), base))
    if zero_at_ttl:
        shaped[ratio >= 1.0] = 0.0
    np.copyto(shaped, base, where=pinned)
    return np.clip(shaped, 0.0, 1.0, out=shaped)


def _decayed_small(base, age, ttls: list[float], curve, pinned, k: float, zero_at_ttl: bool):
    """`decayed` on a few items, with the same floating-point operations in the same order, so the same bits
    (a test checks): +, -, *, / and comparisons on Python floats are numpy's, and the exponentials still come
    from np.exp on a float64 array, whose implementation may differ from math.exp's in the last bit."""
    ages = [a if a > 0.0 or a != a else 0.0 for a in age.tolist()]  # np.maximum(age, 0.0), NaN kept
    ratios = [a / t if math.isfinite(t) else 0.0 for a, t in zip(ages, ttls, strict=True)]
    curves = curve.tolist()
    exponents = [-r * k for r, c in zip(ratios, curves, strict=True) if c == EBBINGHAUS]
    powers = iter(np.exp(np.array(exponents, dtype=np.float64)).tolist())
    strengths = []
    for b, r, c, p in zip(base.tolist(), ratios, curves, pinned.tolist(), strict=True):
        s = b * next(powers) if c == EBBINGHAUS else b * (1.0 - r) if c == LINEAR else b
        if p:
            s = b
        elif zero_at_ttl and r >= 1.0:
            s = 0.0
        s = 0.0 if s < 0.0 else s  # np.clip(s, 0.0, 1.0): NaN and -0.0 pass through unchanged
        strengths.append(1.0 if s > 1.0 else s)
    return np.array(strengths, dtype=np.float64)


def idle_forget_after(base, ttl, curve, forgotten_strength: float, k: float):
    """Seconds of idleness after which an unpinned item is due (inf when it never is)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        fraction = np.where(
            curve == EBBINGHAUS,
            np.log(np.maximum(base, 1e-300) / forgotten_strength) / k,
            np.where(curve == LINEAR, 1.0 - forgotten_strength / np.maximum(base, 1e-300), 1.0),
        )
        return np.where(np.isfinite(ttl), ttl * np.clip(fraction, 0.0, 1.0), np.inf)


@lru_cache(maxsize=1024)  # every write asks with base 1.0 and one of three curves (see views.memory_view)
def idle_fraction(base: float, curve: str, threshold: float, k: float) -> float:
    """Fraction of the ttl an item idles before its strength falls below `threshold` (scalar twin of
    `idle_forget_after`: numpy is slow on single values; a test checks they agree)."""
    if curve == "ebbinghaus":
        fraction = math.log(max(base, 1e-300) / threshold) / k
    elif curve == "linear":
        fraction = 1.0 - threshold / max(base, 1e-300)
    else:
        fraction = 1.0
    return min(1.0, max(0.0, fraction))


def forgets_by_time(config: Config) -> bool:
    """Whether decay and idleness forget (and staleness hides); False in rank mode, where they only rank."""
    return config.decay_mode == "forget"


def stale_threshold(config: Config) -> float:
    """Strengths below this are stale (0 in rank mode: no strength is below it)."""
    return config.stale_strength if forgets_by_time(config) else 0.0


def strength(item: MemoryItem, now: float, config: Config) -> float:
    """The item's current strength (pure: nothing is written back)."""
    base = min(1.0, max(0.0, item.strength))
    if not config.auto_expire or item.pinned or item.ttl is None:
        return base
    ratio = max(0.0, now - item.last_accessed_at) / item.ttl
    if ratio >= 1.0 and forgets_by_time(config):
        return 0.0
    if item.curve == "ebbinghaus":
        return base * math.exp(-ratio * config.decay_k)
    if item.curve == "linear":
        return max(0.0, base * (1.0 - ratio))
    return base


def past_deadline(item: MemoryItem, now: float) -> bool:
    """Whether the item's hard `expires_at` has passed (no access moves it)."""
    return item.expires_at is not None and now >= item.expires_at


def due_reason(item: MemoryItem, now: float, config: Config) -> str | None:
    """Why the item must be forgotten now ("expired" or "stale"), or None when it may stay."""
    if item.pinned or not config.auto_expire:
        return None
    if past_deadline(item, now):
        return "expired"
    if not forgets_by_time(config):
        return None
    if item.ttl is not None and now - item.last_accessed_at >= item.ttl:
        return "expired"
    if strength(item, now, config) < config.forgotten_strength:
        return "stale"
    return None


def status(item: MemoryItem, now: float, config: Config) -> str:
    """active | stale | forgotten (due but not yet swept — every read path sweeps it before answering)."""
    if due_reason(item, now, config) is not None:
        return "forgotten"
    return "stale" if strength(item, now, config) < stale_threshold(config) else "active"


def forget_at(item: MemoryItem, config: Config) -> float | None:
    """When the item will be forgotten if nobody touches it (None: never automatically)."""
    return forget_time(
        item.pinned, item.ttl, item.strength, item.curve, item.last_accessed_at, item.expires_at, config
    )


def forget_time(
    pinned: bool,
    ttl: float | None,
    base: float,
    curve: str,
    last_accessed_at: float,
    deadline: float | None,
    config: Config,
) -> float | None:
    """`forget_at` of an item with these fields (a written memory's view keeps them and asks later)."""
    if pinned or not config.auto_expire:
        return None
    when = math.inf
    if ttl is not None and config.decay_mode == "forget":  # forgets_by_time, inline
        when = last_accessed_at + ttl * idle_fraction(base, curve, config.forgotten_strength, config.decay_k)
    if deadline is not None:
        when = min(when, deadline)
    return None if when == math.inf else when  # math.isinf, less a call: `when` is never -inf or nan


def stale_at(item: MemoryItem, config: Config) -> float | None:
    """When the item will turn stale if nobody touches it (None: never; rank mode has no stale state)."""
    if item.pinned or item.ttl is None or not config.auto_expire or item.curve == "flat":
        return None
    if not forgets_by_time(config):
        return None
    fraction = idle_fraction(item.strength, item.curve, config.stale_strength, config.decay_k)
    return item.last_accessed_at + item.ttl * fraction


def boost(current: float, config: Config) -> float:
    """Strength after a touch: min(1, s*1.5 + 0.1) with the default multiplier and increment."""
    return min(1.0, current * config.touch_multiplier + config.touch_increment)


def revived(current: float, config: Config) -> float:
    """Strength after a use: the boost, and at least the stale threshold. Seed §5.3 says a recall hit brings
    a stale or due item back to *active*, which the boost alone (0.1 from a strength of 0) would not."""
    return max(boost(current, config), stale_threshold(config))
