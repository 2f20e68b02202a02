"""The task-clustered bootstrap of rates and the significance rule (paired tests: test_paired_stats.py)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reports.stats import (
    LEVEL,
    MIN_TASKS,
    bootstrap_column_sums,
    bootstrap_sums,
    cluster_keys,
    is_significant,
    percentile_ci,
    poisson_weights,
    ratio,
    ratio_cis,
)


def _simulate(rng, tasks, rate=0.3, probes_per_task=3, task_sd=0.15):
    # Task-level random effects make a task's probes correlated (the reason to cluster).
    task_rates = np.clip(rng.normal(rate, task_sd, tasks), 0, 1)
    return rng.binomial(probes_per_task, task_rates).astype(float), np.full(tasks, float(probes_per_task))


def test_ci_shrinks_with_more_tasks():
    rng = np.random.default_rng(1)
    widths = []
    for tasks in (20, 80, 320):
        num, den = _simulate(rng, tasks)
        estimate = ratio_cis(num, den, cluster_keys(range(tasks)), 1000, seed=3)[0]
        widths.append(estimate.hi - estimate.lo)
    assert widths[0] > widths[1] > widths[2]


def test_ci_covers_the_true_rate_about_95_percent_of_the_time():
    rng = np.random.default_rng(7)
    true_rate, trials = 0.3, 200
    keys = cluster_keys(range(60))
    covered = 0
    for trial in range(trials):
        num, den = _simulate(rng, 60, rate=true_rate, task_sd=0.0)
        estimate = ratio_cis(num, den, keys, 500, seed=trial)[0]
        covered += estimate.lo <= true_rate <= estimate.hi
    assert 0.88 <= covered / trials <= 0.99


def test_weights_depend_only_on_task_resample_and_seed():
    keys = cluster_keys(["a", "b", "c", "d"])
    whole = poisson_weights(keys, 0, 50, seed=9)
    # The same task gets the same weight whatever other tasks are resampled with it or in which block.
    assert np.array_equal(poisson_weights(keys[[3, 1]], 0, 50, seed=9), whole[:, [3, 1]])
    assert np.array_equal(poisson_weights(keys, 20, 50, seed=9), whole[20:])
    assert not np.array_equal(poisson_weights(keys, 0, 50, seed=10), whole)
    big = poisson_weights(cluster_keys(range(2000)), 0, 200)
    assert abs(big.mean() - 1.0) < 0.01 and abs(big.var() - 1.0) < 0.02  # Poisson(1)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.text(max_size=8), min_size=1, max_size=40), st.integers(0, 500), st.integers(0, 2**64 - 1))
def test_weights_are_the_poisson_draws_of_their_uniforms(ids, start, seed):
    """The weights looked up by a uniform's top bits are those `searchsorted` gives every uniform."""
    from reports.stats import _GOLDEN, _POISSON_CDF, _mix, _weights

    keys = cluster_keys(ids)
    with np.errstate(over="ignore"):
        rows = _mix(np.arange(start, start + 30, dtype=np.uint64) * _GOLDEN + _mix(np.uint64(seed)))
        bits = _mix(rows[:, None] ^ keys[None, :])
    uniform = (bits >> np.uint64(11)).astype(np.float64) * 2.0**-53
    expected = np.searchsorted(_POISSON_CDF, uniform, side="right").astype(np.float64)
    assert np.array_equal(poisson_weights(keys, start, start + 30, seed), expected)
    assert np.array_equal(_weights(keys, start, start + 30, seed, by_cluster=True), expected.T)


def test_weights_at_the_bucket_edges_are_those_of_their_uniforms():
    """Every Poisson CDF value falls inside a bucket of uniforms: the uniforms around it draw as
    `searchsorted` says (the buckets it splits are worked out one uniform at a time)."""
    from reports.stats import _BUCKET_BITS, _BUCKET_SPLIT, _BUCKET_WEIGHT, _POISSON_CDF

    for value in _POISSON_CDF:
        exact = int(value * 2.0**53)  # the uniform just below or at the CDF value, as a 53-bit integer
        for m in (m for m in (exact - 1, exact, exact + 1) if m < 2**53):  # a uniform is below 1
            uniform = m * 2.0**-53
            bucket = m >> (53 - _BUCKET_BITS)
            drawn = np.searchsorted(_POISSON_CDF, uniform, side="right")
            assert _BUCKET_SPLIT[bucket] or _BUCKET_WEIGHT[bucket] == drawn


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 5), st.integers(1, 5)), min_size=2, max_size=30), st.integers(0, 99))
def test_sums_are_the_same_dense_sparse_and_by_block(cells, seed):
    from scipy import sparse

    values = np.array([[min(a, b), b] for a, b in cells], dtype=float)
    keys = cluster_keys(range(len(cells)))
    dense = bootstrap_sums(keys, values, 120, seed)
    assert np.allclose(dense, bootstrap_sums(keys, sparse.csr_matrix(values), 120, seed))
    assert np.array_equal(dense.T, bootstrap_column_sums(keys, values, 120, seed))
    assert np.allclose(dense, poisson_weights(keys, 0, 120, seed) @ values)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 5), st.integers(1, 5)), min_size=2, max_size=30), st.integers(0, 99))
def test_ci_contains_the_point_estimate_and_is_deterministic(cells, seed):
    num = np.array([min(a, b) for a, b in cells], dtype=float)
    den = np.array([b for _, b in cells], dtype=float)
    keys = cluster_keys(range(len(cells)))
    first = ratio_cis(num, den, keys, 200, seed)[0]
    assert first == ratio_cis(num, den, keys, 200, seed)[0]
    assert first.lo - 1e-9 <= first.value <= first.hi + 1e-9


def test_the_rule_needs_all_three_conditions():
    assert is_significant(0.01, 0.1, 0.3, MIN_TASKS)
    assert not is_significant(0.06, 0.1, 0.3, MIN_TASKS)  # p too large
    assert not is_significant(0.01, -0.1, 0.3, MIN_TASKS)  # CI includes 0
    assert not is_significant(0.01, 0.1, 0.3, MIN_TASKS - 1)  # too few tasks differ
    assert is_significant(0.01, -0.3, -0.1, MIN_TASKS)  # a loss is significant by the same rule


@given(
    num=st.floats(allow_nan=False, allow_infinity=False, width=64),
    den=st.one_of(st.just(0.0), st.floats(allow_nan=False, allow_infinity=False, width=64)),
)
def test_one_rate_is_the_same_number_as_in_an_array(num, den):
    alone, within = ratio(num, den), ratio(np.array([num, 1.0]), np.array([den, 1.0]))[0]
    assert np.array_equal(np.array([alone]), np.array([within]), equal_nan=True)


_RATE_PARTS = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True, width=64),
    st.sampled_from([0.0, -0.0, 1.0, 3.0, float("nan")]),
)


@given(
    num=st.lists(_RATE_PARTS, min_size=1, max_size=8),
    den=st.one_of(_RATE_PARTS, st.lists(_RATE_PARTS, min_size=1, max_size=8)),
)
def test_rates_of_arrays_are_the_plain_definition(num, den):
    """ratio on arrays (one denominator or one each) is, bit for bit, num / den where den > 0, else NaN."""
    num_array = np.array(num)
    den_array = np.array(den) if isinstance(den, list) else np.float64(den)
    if den_array.ndim:
        num_array = np.resize(num_array, den_array.shape)  # same length
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        plain = np.where(den_array > 0, num_array / np.where(den_array > 0, den_array, 1.0), np.nan)
    found = ratio(num_array, den_array)
    assert found.shape == plain.shape
    # every bit, the NaNs and the signs of zeros too
    assert np.array_equal(found.view(np.uint64), plain.view(np.uint64))


@st.composite
def _resample_table(draw: st.DrawFn) -> np.ndarray:
    """A (resamples × columns) table of resampled differences, row- or column-major, whose columns have
    NaN resamples in varied numbers (often equal ones), a few infinities, ties and signed zeros."""
    resamples, columns = draw(st.integers(1, 60)), draw(st.integers(1, 12))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    table = rng.choice([-0.5, 0.0, 0.25, 1.0], size=(resamples, columns)) if draw(st.booleans()) else (
        rng.normal(size=(resamples, columns)) * 10.0 ** rng.integers(-3, 4, columns))  # fmt: skip
    for j in range(columns):
        nan = draw(st.sampled_from([0, 0, 1, 2, resamples // 2, resamples - 1, resamples]))
        table[rng.permutation(resamples)[:nan], j] = np.nan
        if draw(st.integers(0, 9)) == 0:
            table[rng.integers(resamples), j] = draw(st.sampled_from([np.inf, -np.inf]))
    return np.asfortranarray(table) if draw(st.booleans()) else table


# The tables hold a few infinities: numpy's percentile interpolation then takes inf - inf, the plain way as
# ours, and warns (a report's rates reach infinity only on overflow).
@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")
@settings(max_examples=300, deadline=None)
@given(_resample_table())
def test_percentile_cis_are_each_columns_own_percentiles(table):
    """percentile_ci groups the columns by their number of NaN resamples and takes each group's percentiles
    along its rows: the numbers of np.percentile on a column without NaN and np.nanpercentile on a column
    with some (NaN when no resample is finite), one column at a time, to the bit."""
    lo, hi = percentile_ci(table)
    tail = (1.0 - LEVEL) / 2.0 * 100.0  # as percentile_ci has it (2.500000000000002)
    for j in range(table.shape[1]):
        column = table[:, j].copy()
        if np.isnan(column).any():
            plain = (
                np.nanpercentile(column, [tail, 100 - tail]) if np.isfinite(column).any() else [np.nan] * 2
            )
        else:
            plain = np.percentile(column, [tail, 100 - tail])
        assert np.array([lo[j], hi[j]]).tobytes() == np.array(plain, dtype=float).tobytes()


# The tables hold a few infinities: numpy's percentile interpolation then takes inf - inf, the plain way as
# ours, and warns (a report's rates reach infinity only on overflow).
