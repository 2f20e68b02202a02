"""The cluster bootstrap: CIs shrink with more tasks and cover the true rate in a simulation."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from reports.stats import bootstrap_weights, mcnemar, paired_difference, ratio_cis


def _simulate(rng, tasks, rate=0.3, probes_per_task=3, task_sd=0.15):
    # Task-level random effects make a task's probes correlated (the reason to cluster).
    task_rates = np.clip(rng.normal(rate, task_sd, tasks), 0, 1)
    return rng.binomial(probes_per_task, task_rates).astype(float), np.full(tasks, float(probes_per_task))


def test_ci_shrinks_with_more_tasks():
    rng = np.random.default_rng(1)
    widths = []
    for tasks in (20, 80, 320):
        num, den = _simulate(rng, tasks)
        estimate = ratio_cis(num, den, bootstrap_weights(tasks, 1000, seed=3))[0]
        widths.append(estimate.hi - estimate.lo)
    assert widths[0] > widths[1] > widths[2]


def test_ci_covers_the_true_rate_about_95_percent_of_the_time():
    rng = np.random.default_rng(7)
    true_rate, trials = 0.3, 200
    weights = bootstrap_weights(60, 500, seed=11)
    covered = 0
    for _ in range(trials):
        num, den = _simulate(rng, 60, rate=true_rate, task_sd=0.0)
        estimate = ratio_cis(num, den, weights)[0]
        covered += estimate.lo <= true_rate <= estimate.hi
    assert 0.88 <= covered / trials <= 0.99


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 5), st.integers(1, 5)), min_size=2, max_size=30), st.integers(0, 99))
def test_ci_contains_the_point_estimate_and_is_deterministic(cells, seed):
    num = np.array([min(a, b) for a, b in cells], dtype=float)
    den = np.array([b for _, b in cells], dtype=float)
    first = ratio_cis(num, den, bootstrap_weights(len(cells), 200, seed))[0]
    again = ratio_cis(num, den, bootstrap_weights(len(cells), 200, seed))[0]
    assert first == again
    assert first.lo - 1e-9 <= first.value <= first.hi + 1e-9


def test_paired_difference_detects_a_real_effect_and_not_a_null_one():
    rng = np.random.default_rng(5)
    den = np.full(80, 4.0)
    base = rng.binomial(4, 0.5, 80).astype(float)
    better = np.minimum(base + rng.binomial(1, 0.6, 80), 4)
    effect = paired_difference(better, den, base, den, resamples=1000)
    assert effect.lo > 0 and effect.p_value < 0.01
    null = paired_difference(base, den, base, den, resamples=1000)
    assert null.diff == 0 and null.p_value == 1.0 and null.mde >= 1 / 320


def test_mcnemar_counts_discordant_pairs():
    result = mcnemar([True, True, True, False, True], [False, False, False, False, True])
    assert (result.only_a, result.only_b) == (3, 0)
    assert result.p_value == 0.25
