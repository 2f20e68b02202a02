"""Paired differences: the sign-flip p-value, the interval that inverts it, and what is printed when there
are too few tasks or no spread (issue 29: zero-width and contradictory intervals, p-values at their floor)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reports.stats import (
    ALPHA,
    EXACT_UP_TO,
    MIN_TASKS_FOR_INTERVAL,
    SignFlipTest,
    format_p,
    one_sided_p,
    paired_difference,
    ratio_interval,
)

ONES = np.ones


def test_a_real_effect_is_found_and_a_null_one_is_not():
    rng = np.random.default_rng(5)
    den = np.full(80, 4.0)
    base = rng.binomial(4, 0.5, 80).astype(float)
    better = np.minimum(base + rng.binomial(1, 0.6, 80), 4)
    effect = paired_difference(better, den, base, den)
    assert effect.lo > 0 and effect.p_value < 0.01 and effect.significant
    null = paired_difference(base, den, base, den)
    assert null.diff == 0 and null.p_value == 1.0 and not null.significant
    # identical results: an interval around 0 that is not a point, and an MDE that is not one probe
    assert null.lo < 0 < null.hi and null.mde > 0.05


def test_too_few_tasks_give_no_interval_whatever_the_effect():
    # Three tasks, all -100 pts: the report printed "-100.0 [-100, -100], p = 0.25".
    result = paired_difference(np.zeros(3), ONES(3), ONES(3), ONES(3))
    assert result.diff == -1.0 and result.p_value == 0.25 and result.p_method == "exact"
    assert math.isnan(result.lo) and math.isnan(result.hi) and math.isnan(result.mde)
    assert not result.significant


def test_every_task_alike_gives_the_clopper_pearson_range_and_the_exact_p():
    # 35 of 35 tasks +100 pts: p is the exact sign-flip p 2/2^35 (it printed the floor 0.0005), and the
    # interval is not the point [100, 100]: at least 0.025^(1/35) of all tasks would show +100 pts.
    result = paired_difference(ONES(35), ONES(35), np.zeros(35), ONES(35))
    share = 0.025 ** (1 / 35)
    assert result.p_value == 2 / 2**35 and result.p_method == "exact"
    assert result.lo == pytest.approx(2 * share - 1) and result.hi == 1.0
    # Identical on 30 tasks: up to 1 - 0.025^(1/30) of the tasks could differ either way.
    same = paired_difference(np.zeros(30), ONES(30), np.zeros(30), ONES(30))
    assert same.p_value == 1.0 and same.hi == pytest.approx(1 - 0.025 ** (1 / 30)) and same.lo == -same.hi


def test_six_of_thirty_tasks_worse_is_the_exact_p_and_an_interval_above_0():
    # The smoke-run case of issue 29: 6 of 30 tasks go from no stale error to one.
    worse = np.r_[ONES(6), np.zeros(24)]
    result = paired_difference(worse, ONES(30), np.zeros(30), ONES(30))
    assert result.diff == pytest.approx(0.2) and result.p_value == 2 / 64 and result.tasks_differ == 6
    assert 0 < result.lo < result.diff < result.hi
    assert one_sided_p(result.p_value, result.diff, +1) == 1 / 64
    assert one_sided_p(result.p_value, result.diff, -1) == 1 - 1 / 64


def _plain_p(u: np.ndarray) -> float:
    """The exact two-sided sign-flip p the plain way: every sign assignment, one by one."""
    observed = abs(u.sum())
    sums = [abs(sum(s * x for s, x in zip(signs, u, strict=True)))
            for signs in itertools.product((1, -1), repeat=len(u))]  # fmt: skip
    return sum(value >= observed - 1e-9 * np.abs(u).sum() for value in sums) / len(sums)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.integers(-4, 4), min_size=1, max_size=10),
    st.lists(st.integers(1, 4), min_size=10, max_size=10),
    st.sampled_from([0.0, 0.1, -0.25, 0.5]),
)
def test_the_exact_test_at_any_shift_is_the_plain_enumeration(c, w, delta):
    c = np.array(c, dtype=float)
    w = np.array(w[: len(c)], dtype=float)
    assert SignFlipTest(c, w).p(delta) == pytest.approx(_plain_p(c - delta * w), abs=1e-12)


@st.composite
def _paired_tasks(draw: st.DrawFn) -> tuple[np.ndarray, ...]:
    """Two arms' per-task counts on up to 60 tasks (rates: probes per task as denominators, the same on
    both sides) or token totals (one per task), many tasks often alike."""
    size = draw(st.integers(1, 60))
    if draw(st.booleans()):
        den = np.array(draw(st.lists(st.integers(1, 4), min_size=size, max_size=size)), dtype=float)
        num_a = np.array([draw(st.integers(0, int(d))) for d in den], dtype=float)
        num_b = np.array([draw(st.integers(0, int(d))) for d in den], dtype=float)
        bounded = True
    else:
        den = ONES(size)
        column = st.lists(st.integers(0, 3000).map(float), min_size=size, max_size=size)
        num_a, num_b = np.array(draw(column)), np.array(draw(column))
        bounded = False
    same = draw(st.integers(0, size))
    num_b[:same] = num_a[:same]
    if draw(st.booleans()):  # every task shows the same difference
        num_b = (
            np.maximum(num_a - draw(st.integers(0, 1)) * den, 0.0)
            if bounded
            else num_a + draw(st.integers(-5, 5))
        )
    return num_a, den, num_b, den.copy(), bounded


@settings(max_examples=300, deadline=None)
@given(_paired_tasks(), st.integers(0, 2**16))
def test_the_interval_and_the_p_value_agree_on_the_side_of_0(tasks, seed):
    """The interval excludes 0 exactly when p < α; it holds the estimate; it is never a point where tasks
    differ (no zero width); it is missing exactly when there are too few tasks."""
    *arrays, bounded = tasks
    result = paired_difference(*arrays, bounded=bounded, resamples=300, seed=seed)
    assert result is not None
    if result.tasks < MIN_TASKS_FOR_INTERVAL:
        assert math.isnan(result.lo) and math.isnan(result.hi)
        return
    assert (result.lo > 0 or result.hi < 0) == (result.p_value < ALPHA)
    assert result.lo <= result.diff <= result.hi
    assert result.lo < result.hi or result.tasks_differ == 0
    assert 0 <= result.p_value <= 1


def test_the_interval_covers_the_true_difference_about_95_percent_of_the_time():
    """30 tasks of 3 probes, task-level random effects shared by both arms, a true difference of 0.1."""
    rng = np.random.default_rng(11)
    covered, trials = 0, 200
    for trial in range(trials):
        level = np.clip(rng.normal(0.5, 0.2, 30), 0.05, 0.85)
        a = rng.binomial(3, np.clip(level + 0.1, 0, 1)).astype(float)
        b = rng.binomial(3, level).astype(float)
        true = float(np.mean(np.clip(level + 0.1, 0, 1) - level))
        result = paired_difference(a, np.full(30, 3.0), b, np.full(30, 3.0), seed=trial)
        covered += result.lo <= true <= result.hi
    assert 0.9 <= covered / trials <= 0.99


def test_random_flips_are_deterministic_for_a_seed_and_printed_with_their_floor():
    a, b = ONES(40), np.r_[np.zeros(39), 1.0]
    first = paired_difference(a, ONES(40), b, ONES(40), seed=3)
    assert first == paired_difference(a, ONES(40), b, ONES(40), seed=3)
    assert first.p_method == "random" and first.p_resamples == 2000
    # 39 of 40 tasks differ, all the same way: no flip beats the observed sum; the p is only bounded.
    assert first.p_value == 1 / 2001 and format_p(first.p_value, "random", 2000) == "< 1/2001"
    assert format_p(0.013, "random", 2000) == "0.013"
    assert format_p(2 / 2**35, "exact") == "5.8e-11"


def test_the_exact_test_is_used_up_to_its_limit_of_differing_tasks():
    differ = EXACT_UP_TO
    a = np.r_[ONES(differ), np.zeros(30)]
    a[0] = 0.0  # one task the other way: not all alike
    b = np.r_[np.zeros(differ), np.zeros(30)]
    b[0] = 1.0
    result = paired_difference(a, ONES(differ + 30), b, ONES(differ + 30))
    assert result.p_method == "exact" and result.tasks_differ == differ
    assert result.p_value == pytest.approx(_plain_p(a[:differ] - b[:differ]))


def test_the_share_of_a_benefit_has_an_interval_or_says_why_not():
    rng = np.random.default_rng(2)
    full = rng.binomial(1, 0.8, 40).astype(float)
    arm = full * rng.binomial(1, 0.7, 40)
    kept = ratio_interval(arm, full)
    assert kept.missing == "" and kept.lo < kept.estimate < kept.hi
    assert ratio_interval(full, full).missing == "alike"  # the arm answers as full memory on every task
    assert ratio_interval(full[:4], full[:4] + 1).missing == "n too small"
    assert ratio_interval(arm, np.zeros(40)).missing == "undefined"


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.integers(-3, 3), min_size=MIN_TASKS_FOR_INTERVAL, max_size=12),
    st.lists(st.integers(1, 3), min_size=12, max_size=12),
)
def test_the_closed_form_ends_are_where_the_test_stops_keeping(c, w):
    """The interval's ends (from the roots of each sign assignment) are the test's own: p(δ) ≥ α at each end
    and < α just beyond it, checked by running the test there."""
    c = np.array(c, dtype=float)
    den = np.array(w[: len(c)], dtype=float)
    result = paired_difference(np.maximum(c, 0), den + 3, np.maximum(-c, 0), den + 3)
    if result.tasks_differ == 0 or math.isnan(result.lo) or result.lo == result.hi:
        return
    total = (den + 3).sum()
    test = SignFlipTest((np.maximum(c, 0) - np.maximum(-c, 0)) / total, (den + 3) / total)
    step = 1e-7
    for end, outward in ((result.lo, -step), (result.hi, step)):
        if end != 0.0:  # an end at 0 may be where the reported p (of the differing tasks) put it
            assert test.p(end) >= ALPHA - 1e-12
            assert test.p(end + outward) < ALPHA
