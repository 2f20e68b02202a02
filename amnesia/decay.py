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


def decayed(base, age, ttl, curve, pinned, k: float, *, zero_at_ttl: bool = True):
    """Current strengths for base strengths `base` after `age` seconds idle (numpy arrays; `ttl` inf when
    absent, `curve` as CURVE_CODES; `zero_at_ttl` False in rank mode). `strength()` is the single-item form;
    a test checks they agree."""
    age = np.maximum(age, 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(np.isfinite(ttl), age / ttl, 0.0)
    shaped = np.where(
        curve == EBBINGHAUS, base * np.exp(-ratio * k), np.where(curve == LINEAR, base * (1.0 - ratio), base)
    )
    if zero_at_ttl:
        shaped = np.where(ratio >= 1.0, 0.0, shaped)
    return np.clip(np.where(pinned, base, shaped), 0.0, 1.0)


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


def due_reason(item: MemoryItem, now: float, config: Config) -> str | None:
    """Why the item must be forgotten now ("expired" or "stale"), or None when it may stay."""
    if item.pinned or not config.auto_expire:
        return None
    if item.expires_at is not None and now >= item.expires_at:
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
    if item.pinned or not config.auto_expire:
        return None
    when = math.inf
    if item.ttl is not None and config.decay_mode == "forget":  # forgets_by_time, inline: every write asks
        idle = item.ttl * idle_fraction(item.strength, item.curve, config.forgotten_strength, config.decay_k)
        when = item.last_accessed_at + idle
    if item.expires_at is not None:
        when = min(when, item.expires_at)
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
