from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arms.memorybank import retention
from arms.registry import create_arm, resolve
from tasks.spec import RememberSpec

DAY = 86_400.0


def test_retention_formulas():
    assert retention(0, 1) == 1.0
    assert retention(1, 1) == pytest.approx(math.exp(-1))  # the paper: R = e^{-t/S}
    assert retention(2, 4) == pytest.approx(math.exp(-0.5))
    assert retention(5, 2, days_per_strength=5) == pytest.approx(math.exp(-0.5))  # what the code meant
    assert retention(5, 2, formula="as-written", days_per_strength=5) == pytest.approx(
        math.exp(-2)
    )  # what it does


@settings(max_examples=100, deadline=None)
@given(st.floats(min_value=0.5, max_value=60), st.floats(min_value=1, max_value=20), st.floats(0.1, 10))
def test_intended_formula_rewards_strength_and_as_written_punishes_it(days, strength, scale):
    stronger = strength + 1
    assert retention(days, stronger, days_per_strength=scale) > retention(
        days, strength, days_per_strength=scale
    )
    as_written = dict(formula="as-written", days_per_strength=scale)
    assert retention(days, stronger, **as_written) <= retention(days, strength, **as_written)


def test_variants_are_registered():
    assert resolve("memorybank-as-written") == (
        "memorybank",
        {"formula": "as-written", "days_per_strength": 5.0},
    )
    assert resolve("memorybank-code-intended")[1]["formula"] == "intended"
    with pytest.raises(ValueError, match="formula"):
        create_arm("memorybank", {"formula": "exp"})


def run_forgetting(arm_driver, tmp_path, seed, days=12):
    d = arm_driver(create_arm("memorybank"), tmp_path, seed=seed)
    d.start(0)
    d.turn("x", remember=tuple(RememberSpec(f"Fact {i} about topic{i}.") for i in range(30)))
    d.end()
    for day in range(1, days):
        d.start(day * DAY)
        d.end()
    return [(r["item_id"], r["sim_time"]) for r in d.of_type("memory_forget")]


def test_stochastic_forgetting_is_seeded_and_daily(arm_driver, tmp_path):
    first = run_forgetting(arm_driver, tmp_path / "a", seed=3)
    assert first == run_forgetting(arm_driver, tmp_path / "b", seed=3)
    assert first != run_forgetting(arm_driver, tmp_path / "c", seed=4)
    assert 0 < len(first) <= 30


def test_same_day_sessions_draw_once(arm_driver, tmp_path):
    d = arm_driver(create_arm("memorybank"), tmp_path)
    d.start(0)
    d.turn("x", remember=(RememberSpec("The drink is lapsang."),))
    d.end()
    draws = []
    original = d.arm.rng.random
    d.arm.rng.random = lambda: draws.append(1) or original()
    for hour in (25, 26, 27):
        d.start(hour * 3600)
        d.end()
    assert len(draws) <= 1


def test_recall_strengthens_and_resets_the_clock(arm_driver, tmp_path):
    d = arm_driver(create_arm("memorybank"), tmp_path)
    d.start(0)
    written = d.turn("x", remember=(RememberSpec("The verification drink is lapsang."),))
    assert written.block == ""  # not recalled by the turn that wrote it
    d.end()
    d.start(0.5 * DAY)
    block = d.turn("What is the verification drink?").block
    assert "written 12h ago · strength 1 · The verification drink is lapsang." in block
    item = d.arm.items["b-0001"]
    assert item.strength == 2 and item.last_recall_at == 0.5 * DAY
    (touch,) = d.of_type("memory_touch")
    assert (touch["item_id"], touch["strength"], touch["reason"]) == ("b-0001", 2, "recall")
