"""Decay curves: hypothesis properties, exact boundaries, and the scalar/vector forms agreeing."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from amnesia import Amnesia, Config, MemoryItem, SimulatedClock
from amnesia.columns import ItemColumns
from amnesia.decay import (
    CURVE_CODES,
    decayed,
    due_reason,
    forget_at,
    idle_forget_after,
    idle_fraction,
    stale_threshold,
    status,
)
from amnesia.decay import strength as strength_of

CONFIG = Config()
curves = st.sampled_from(["flat", "linear", "ebbinghaus"])
ttls = st.floats(min_value=1.0, max_value=1e8)
bases = st.floats(min_value=0.0, max_value=1.0)
MODES = ("forget", "rank")


def make(
    curve: str, ttl: float | None, base: float = 1.0, at: float = 0.0, pinned: bool = False
) -> MemoryItem:
    return MemoryItem(
        id="m-1", content="x", curve=curve, ttl=ttl, strength=base, last_accessed_at=at, pinned=pinned
    )  # type: ignore[arg-type]


@settings(max_examples=150, deadline=None)
@given(curves, ttls, bases, st.floats(min_value=0.0, max_value=3.0), st.floats(min_value=0.0, max_value=3.0))
def test_strength_in_unit_interval_non_increasing_and_zero_at_ttl(curve, ttl, base, f1, f2):
    item = make(curve, ttl, base)
    early, late = sorted((f1 * ttl, f2 * ttl))
    s_early, s_late = strength_of(item, early, CONFIG), strength_of(item, late, CONFIG)
    assert 0.0 <= s_late <= s_early <= 1.0
    assert strength_of(item, ttl, CONFIG) == 0.0
    assert strength_of(item, early, CONFIG) == s_early  # deterministic: same input, same output


@settings(max_examples=150, deadline=None)
@given(curves, ttls, bases, st.floats(min_value=0.0, max_value=2.0), st.booleans(), st.sampled_from(MODES))
def test_scalar_and_vector_forms_agree(curve, ttl, base, fraction, pinned, mode):
    config = Config(decay_mode=mode)
    item = make(curve, ttl, base, pinned=pinned)
    now = fraction * ttl
    vector = decayed(np.array([base]), np.array([now]), np.array([ttl]), np.array([CURVE_CODES[curve]]),
                     np.array([pinned]), CONFIG.decay_k, zero_at_ttl=mode == "forget")  # fmt: skip
    assert math.isclose(float(vector[0]), strength_of(item, now, config), rel_tol=1e-12, abs_tol=1e-15)
    for threshold in (CONFIG.stale_strength, CONFIG.forgotten_strength):
        idle = idle_forget_after(
            np.array([base]), np.array([ttl]), np.array([CURVE_CODES[curve]]), threshold, 3.0
        )
        assert math.isclose(float(idle[0]), ttl * idle_fraction(base, curve, threshold, 3.0), rel_tol=1e-12)


@settings(max_examples=200, deadline=None)
@given(
    curves,
    ttls,
    bases,
    st.floats(min_value=0.0, max_value=3.0),
    st.booleans(),
    st.sampled_from(MODES),
    st.booleans(),
    st.none() | st.floats(min_value=0.0, max_value=3.0),
)
def test_columns_agree_with_scalar_status_and_forget_time(
    curve, ttl, base, fraction, pinned, mode, auto_expire, deadline
):
    config = Config(decay_mode=mode, auto_expire=auto_expire)
    item = make(curve, ttl, 1.0 if pinned else base, pinned=pinned)  # a pinned item is written at 1 and stays
    item.expires_at = None if deadline is None or pinned else deadline * ttl  # pinned: no deadline
    now = fraction * ttl
    columns = ItemColumns(auto_expire=auto_expire, rank_only=mode == "rank")
    columns.upsert(item)
    current = float(columns.strengths(now, config.decay_k, auto_expire)[0])
    assert math.isclose(current, strength_of(item, now, config), rel_tol=1e-12, abs_tol=1e-15)
    for threshold in (config.stale_strength, config.forgotten_strength):
        assume(abs(current - threshold) > 1e-9)  # ulp-level disagreement at a threshold is not a bug
    due, expired = columns.due(
        now, columns.strengths(now, config.decay_k, auto_expire), config.forgotten_strength
    )
    due_now = auto_expire and bool(due[0])  # the engine consults `due` only when auto_expire is on
    reason = due_reason(item, now, config)
    assert (reason is not None) == due_now
    if due_now:
        assert reason == ("expired" if expired[0] else "stale")
    stale = not pinned and current < stale_threshold(config)
    assert status(item, now, config) == ("forgotten" if due_now else "stale" if stale else "active")
    vector_at = float(columns.forget_times(config.forgotten_strength, config.decay_k)[0])
    scalar_at = forget_at(item, config)
    assert (scalar_at is None) == math.isinf(vector_at)
    if scalar_at is not None:
        assert math.isclose(vector_at, scalar_at, rel_tol=1e-12)


@pytest.mark.parametrize(
    ("curve", "stale_fraction", "forget_fraction", "reason"),
    [
        ("ebbinghaus", math.log(1 / 0.3) / 3, math.log(20) / 3, "stale"),
        ("linear", 0.7, 0.95, "stale"),
        ("flat", None, 1.0, "expired"),
    ],
)
def test_exact_boundaries_per_curve(curve, stale_fraction, forget_fraction, reason):
    ttl = 1000.0
    item = make(curve, ttl)
    eps = 1e-6
    if stale_fraction is not None:
        assert status(item, stale_fraction * ttl - eps, CONFIG) == "active"
        assert status(item, stale_fraction * ttl + eps, CONFIG) == "stale"
    else:
        assert status(item, ttl - eps, CONFIG) == "active"  # flat never goes stale
    assert due_reason(item, forget_fraction * ttl - eps, CONFIG) is None
    assert due_reason(item, forget_fraction * ttl + eps, CONFIG) == reason
    assert forget_at(item, CONFIG) == pytest.approx(forget_fraction * ttl)


def test_ebbinghaus_numbers_from_the_issue():
    assert math.log(1 / 0.3) / 3 == pytest.approx(0.4013, abs=1e-4)
    assert math.log(20) / 3 == pytest.approx(0.9986, abs=1e-4)


def test_pinned_and_no_auto_expire_never_decay():
    assert strength_of(make("ebbinghaus", None, pinned=True), 1e9, CONFIG) == 1.0
    assert due_reason(make("ebbinghaus", 10.0, pinned=True), 1e9, CONFIG) is None
    keep = Config(auto_expire=False)
    assert strength_of(make("linear", 10.0), 1e9, keep) == 1.0
    assert due_reason(make("linear", 10.0), 1e9, keep) is None


def test_touch_resets_clock_and_boosts_without_compounding():
    clock = SimulatedClock(0)
    engine = Amnesia(clock=clock, config=Config(renew_on_inject="none"))
    view = engine.remember("The kettle is in the left cupboard.", ttl=300)
    clock.advance(150)  # ebbinghaus: 1 * exp(-1.5) ≈ 0.2231 (stale)
    assert engine.inspect(view.id).status == "stale"
    for _ in range(3):  # reads and sweeps never write a decayed value back as the new base
        engine.sweep()
        assert engine.inspect(view.id).base_strength == 1.0
    touched = engine.touch(view.id)
    assert touched.strength == pytest.approx(min(1.0, math.exp(-1.5) * 1.5 + 0.1))
    detail = engine.inspect(view.id)
    assert detail.last_accessed_at == 150 and detail.access_count == 1 and detail.status == "active"
    clock.advance(299)  # the clock restarted at the touch: idle for < ttl... but decayed below 0.05
    assert engine.inspect(view.id) is None


def test_promote_after_accesses_extends_ttl_once():
    clock = SimulatedClock(0)
    engine = Amnesia(clock=clock, config=Config(promote_after_accesses=2, promote_ttl_factor=4))
    view = engine.remember("Standup is at 9:30.", ttl=100)
    engine.touch(view.id)
    assert engine.inspect(view.id).ttl == 100
    engine.touch(view.id)
    assert engine.inspect(view.id).ttl == 400
    engine.touch(view.id)
    assert engine.inspect(view.id).ttl == 400
