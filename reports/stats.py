"""Uncertainty: task-clustered bootstrap CIs, paired differences with a sign-flip test, McNemar, the MDE, and
the one rule that calls a difference significant.

Every rate is a ratio estimator over clusters (a cluster = one task; the seeds, epochs and models that ran it
are repeated measures of it): sum of numerators / sum of denominators. The bootstrap is a Poisson bootstrap
whose weight for (cluster, resample) is a hash of the task id, the resample index and the seed: the same task
gets the same weights in every cell, every arm and every run, so paired differences come from the same
resampled sums as the rates, every cell of a report from one pass over the data, and nothing depends on the
order the tasks were read. Weights are made in blocks of resamples, so memory stays linear in tasks.
"""

from __future__ import annotations

import functools
import hashlib
import math
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import sparse, special

DEFAULT_RESAMPLES = 2000
DEFAULT_SEED = 20240531
LEVEL = 0.95
ALPHA = 1.0 - LEVEL
POWER = 0.80
# A difference is called significant only when at least this many tasks differ between the two sides: with
# fewer, one or two odd tasks decide the sign, whatever the p-value and the CI say.
MIN_TASKS = 10
EXACT_UP_TO = 15  # discordant tasks: exact sign-flip enumeration (2^15 sign vectors) up to this many
# Up to this many discordant tasks, random swaps; beyond, the normal approximation of the sign-flip
# distribution (a sum of that many independent ±tᵢ terms: the approximation is close, and exact swaps would
# cost resamples × tasks per comparison).
PERMUTATION_UP_TO = 200
_BLOCK_ELEMENTS = 1 << 21  # weights made per block (resamples × clusters): ~16 MB as float64

# Poisson(1) cumulative probabilities: a uniform below CDF[k] draws k.
_POISSON_CDF = np.cumsum([math.exp(-1.0) / math.factorial(k) for k in range(20)])
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


def cluster_keys(ids: Iterable[str]) -> np.ndarray:
    """A stable 64-bit key per cluster id (blake2b, never Python's salted hash())."""
    return np.array(
        [int.from_bytes(hashlib.blake2b(str(i).encode("utf-8"), digest_size=8).digest(), "big") for i in ids],
        dtype=np.uint64,
    )


def _mix(x: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser: a bijection of uint64 that scatters nearby inputs (in place when `x` is a
    fresh array of more than one value)."""
    with np.errstate(over="ignore"):
        if np.ndim(x) == 0:
            x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
            x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
            return x ^ (x >> np.uint64(31))
        for shift, factor in ((30, 0xBF58476D1CE4E5B9), (27, 0x94D049BB133111EB), (31, None)):
            x ^= x >> np.uint64(shift)
            if factor is not None:
                x *= np.uint64(factor)
        return x


_BUCKET_BITS = 16  # a uniform's top bits: in all but a few buckets, every uniform draws the same weight


def _bucket_weights() -> tuple[np.ndarray, np.ndarray]:
    """Per bucket of uniforms (those whose top _BUCKET_BITS bits are its number): the weight its smallest
    uniform draws, and whether its largest draws another (a Poisson CDF value falls inside the bucket)."""
    buckets = np.arange(2**_BUCKET_BITS, dtype=np.float64)
    lowest = buckets * 2.0**-_BUCKET_BITS
    highest = (buckets + 1.0) * 2.0**-_BUCKET_BITS - 2.0**-53  # the largest multiple of 2^-53 in the bucket
    low = np.searchsorted(_POISSON_CDF, lowest, side="right")
    return low.astype(np.float64), low != np.searchsorted(_POISSON_CDF, highest, side="right")


_BUCKET_WEIGHT, _BUCKET_SPLIT = _bucket_weights()


def _weights(keys: np.ndarray, start: int, stop: int, seed: int, by_cluster: bool) -> np.ndarray:
    """`poisson_weights`, or its transpose (clusters × resamples, row-major) when `by_cluster`."""
    with np.errstate(over="ignore"):
        rows = _mix(np.arange(start, stop, dtype=np.uint64) * _GOLDEN + _mix(np.uint64(seed & (2**64 - 1))))
        bits = _mix(keys[:, None] ^ rows[None, :] if by_cluster else rows[:, None] ^ keys[None, :])
    # The uniform is bits >> 11 times 2^-53 and draws searchsorted(CDF, uniform, "right"): looked up by its
    # top bits, worked out only in the buckets a CDF value splits (a few in 65,536): the same weights.
    top = (bits >> np.uint64(64 - _BUCKET_BITS)).view(np.int64)  # below 2^16: the same numbers, not copied
    weights = _BUCKET_WEIGHT[top]
    split = np.flatnonzero(_BUCKET_SPLIT[top])
    if len(split):
        uniform = (bits.ravel()[split] >> np.uint64(11)).astype(np.float64) * 2.0**-53
        weights.ravel()[split] = np.searchsorted(_POISSON_CDF, uniform, side="right")
    return weights


def poisson_weights(keys: np.ndarray, start: int, stop: int, seed: int = DEFAULT_SEED) -> np.ndarray:
    """Weights of resamples start..stop-1 (rows) for the clusters `keys` (columns): Poisson(1) draws, each a
    function of (seed, resample, cluster key) alone."""
    return _weights(keys, start, stop, seed, by_cluster=False)


def bootstrap_sums(
    keys: np.ndarray, values: np.ndarray | sparse.spmatrix, resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> np.ndarray:  # fmt: skip
    """(resamples × columns) resampled column sums of `values` (clusters × columns, dense or sparse)."""
    return bootstrap_column_sums(keys, values, resamples, seed).T


def bootstrap_column_sums(
    keys: np.ndarray, values: np.ndarray | sparse.spmatrix, resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> np.ndarray:  # fmt: skip
    """`bootstrap_sums` as (columns × resamples), row-major: each column's resamples side by side, as the
    sparse product makes them (no transposed copy), and as a table's cells are summed and divided."""
    clusters = len(keys)
    columns = values.shape[1]
    out = np.zeros((columns, resamples))
    if clusters == 0 or columns == 0:
        return out
    transposed = None  # columns x clusters, row-major: a column-major matrix's transpose, without a copy
    if sparse.issparse(values):
        transposed = values.T if values.format == "csc" else sparse.csr_matrix(values).T.tocsr()
    step = max(1, _BLOCK_ELEMENTS // clusters)
    for start in range(0, resamples, step):
        stop = min(resamples, start + step)
        if transposed is not None:  # the weights made clusters x resamples: the product reads them so
            out[:, start:stop] = transposed @ _weights(keys, start, stop, seed, by_cluster=True)
        else:
            out[:, start:stop] = (poisson_weights(keys, start, stop, seed) @ values).T
    return out


def ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """num / den, NaN where den is 0."""
    if np.ndim(num) == 0 and np.ndim(den) == 0:  # one rate (most calls): the same IEEE division, in Python
        num, den = float(num), float(den)
        return np.float64(num / den if den > 0 else np.nan)
    num, den = np.asarray(num, dtype=float), np.asarray(den, dtype=float)
    # inf on overflow, as the scalar path; a division by 0 or NaN is replaced by NaN
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        quotient = np.divide(num, den)
    if den.ndim == 0:  # one denominator (the sign-flip nulls when the denominators agree)
        return quotient if den > 0 else np.full(quotient.shape, np.nan)
    np.copyto(quotient, np.nan, where=~(den > 0))
    return quotient


def percentile_ci(samples: np.ndarray, level: float = LEVEL) -> tuple[np.ndarray, np.ndarray]:
    """Percentile interval along axis 0, ignoring NaN resamples; NaN where every resample is NaN (or NaN
    and infinite)."""
    tail = (1.0 - level) / 2.0 * 100.0
    columns = np.ascontiguousarray(np.asarray(samples, dtype=float).reshape(len(samples), -1).T)
    lo = np.full(len(columns), np.nan)
    hi = np.full(len(columns), np.nan)
    missing = np.isnan(columns)
    # np.percentile of a column without NaN (infinities included), np.nanpercentile of the others that have
    # a finite value
    wanted = ~missing.any(axis=1) | np.isfinite(columns).any(axis=1)
    for members, values in _by_count(columns, missing, wanted):
        lo[members], hi[members] = np.percentile(values, [tail, 100.0 - tail], axis=1)
    return lo, hi


def _by_count(
    rows: np.ndarray, gone: np.ndarray, wanted: np.ndarray
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """The `wanted` rows of the row-major `rows` without their `gone` values, grouped by how many values they
    keep: (their positions, a row-major (members × kept) array of their kept values in order) per count
    kept > 0.

    np.percentile or np.std of one row's kept values (what np.nanpercentile does to a column with NaN: it
    drops them and takes the percentile of the rest), done to the rows of each group along axis 1, gives the
    same numbers: the same order statistics, the same pairwise sum over each row's contiguous values. One
    call per group instead of one per row (a report's paired differences have hundreds of columns with NaN
    resamples: a cell with few tasks often resamples none of them), and along the rows, not down strided
    columns, which np.percentile's partition does faster."""
    kept = rows.shape[1] - gone.sum(axis=1)
    for count in np.unique(kept[wanted & (kept > 0)]):
        members = np.flatnonzero(wanted & (kept == count))
        values = rows if len(members) == len(rows) else rows[members]
        if count < rows.shape[1]:  # each member keeps exactly `count` values: row-major, they stay rows
            values = values[~gone[members]].reshape(len(members), count)
        yield members, values


@dataclass(frozen=True)
class Estimate:
    """A rate with its 95% percentile CI."""

    value: float
    lo: float
    hi: float


def ratio_cis(
    num: np.ndarray, den: np.ndarray, keys: np.ndarray, resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> list[Estimate]:  # fmt: skip
    """Point estimates and CIs of several ratio metrics at once; num/den: (clusters × metrics), one row per
    cluster key."""
    num = np.asarray(num, dtype=float).reshape(len(num), -1)
    den = np.asarray(den, dtype=float).reshape(len(den), -1)
    sums = bootstrap_sums(keys, np.hstack([num, den]), resamples, seed)
    metrics = num.shape[1]
    lo, hi = percentile_ci(ratio(sums[:, :metrics], sums[:, metrics:]))
    point = ratio(num.sum(axis=0), den.sum(axis=0))
    return [Estimate(float(p), float(a), float(b)) for p, a, b in zip(point, lo, hi, strict=True)]


def sign_flip_p(
    num_a: np.ndarray, den_a: np.ndarray, num_b: np.ndarray, den_b: np.ndarray,
    resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED, totals: Sequence[float] | None = None,
) -> tuple[float, int]:  # fmt: skip
    """Two-sided p-value of rate(A) − rate(B) under the null that A and B are exchangeable within each task
    (swap a task's two sides with probability 1/2), and the number of tasks whose two sides differ.

    Only those discordant tasks can move the statistic: exact enumeration of every swap when there are at most
    EXACT_UP_TO of them, `resamples` random swaps up to PERMUTATION_UP_TO, else the normal approximation of
    the linearised statistic (Σ ±tᵢ with tᵢ the task's contribution to the difference). `totals`: the four
    arrays' sums, when the caller has them (float arrays, each summed by its `.sum()`)."""
    num_a, den_a, num_b, den_b = (np.asarray(x, dtype=float) for x in (num_a, den_a, num_b, den_b))
    if totals is None:
        totals = (num_a.sum(), den_a.sum(), num_b.sum(), den_b.sum())
    total_na, total_da, total_nb, total_db = totals
    observed = float(ratio(total_na, total_da) - ratio(total_nb, total_db))
    differ = (num_a != num_b) | (den_a != den_b)
    discordant = np.count_nonzero(differ)
    if not math.isfinite(observed):
        return float("nan"), discordant
    if discordant == 0:
        return 1.0, 0
    dn, dd = (num_b - num_a)[differ], (den_b - den_a)[differ]
    if discordant > PERMUTATION_UP_TO:
        pooled = (total_na + total_nb) / (total_da + total_db)
        contribution = (num_a - num_b - pooled * (den_a - den_b))[differ]
        spread = math.sqrt(float(np.sum(contribution**2)))
        if spread == 0:
            return 1.0, discordant
        z = float(contribution.sum()) / spread
        return float(2.0 * special.ndtr(-abs(z))), discordant  # = scipy.stats.norm.sf(|z|)
    counts = None  # how many assignments each row of moved_num stands for (None: one each)
    moved_den: float | np.ndarray = 0.0
    if discordant <= EXACT_UP_TO and not np.count_nonzero(dd) and _few_sums(dn, 2**discordant):
        # Every assignment, grouped by the sum it moves: an assignment's null value depends on that sum alone,
        # and integer sums below 2^53 are the product's to the bit, so each distinct null value is the one
        # the plain enumeration makes, counted as often as it occurs there (2^n rows become a few dozen).
        moved_num, counts = _subset_sum_counts(dn)
        extra = 0
    else:
        swaps, extra = _swaps(discordant, resamples, seed)
        weights = swaps.astype(float, copy=False)  # what `@` would make of bytes: made once for both products
        moved_num = weights @ dn
        # The denominators mostly agree (both arms answer the same probes): nothing moves, and a product of
        # zeros would add +0 to each sum, which changes no bit of it.
        if np.count_nonzero(dd):
            moved_den = weights @ dd
    swapped_a = ratio(total_na + moved_num, total_da + moved_den)
    swapped_b = ratio(total_nb - moved_num, total_db - moved_den)
    null = swapped_a - swapped_b
    finite = np.isfinite(null)
    extreme = finite & (np.abs(null) >= abs(observed) - 1e-12)
    if counts is None:
        found, total = np.count_nonzero(extreme), np.count_nonzero(finite)
    else:
        found, total = int(counts[extreme].sum()), int(counts[finite].sum())
    return float((found + extra) / (total + extra)), discordant


def _few_sums(values: np.ndarray, most: int) -> bool:
    """Whether `values` (a few: looked at one by one) are integers whose subsets have fewer than `most`
    possible sums (the span of their absolute values), all exact in float64."""
    listed = values.tolist()
    span = sum(abs(value) for value in listed)  # integers: exact in any order while below 2^53
    return span < most and span < 2.0**53 and all(value.is_integer() for value in listed)


def _subset_sum_counts(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every sum of a subset of the integer `values` (fewer than 64 of them, as floats, ascending) and how
    many subsets have it: the 2^n assignments of an exact sign-flip test, grouped by the sum they move."""
    listed = [int(value) for value in values.tolist()]
    low = sum(value for value in listed if value < 0)  # the sum of the subset of every negative value
    # The count of the subsets summing to low + k is the coefficient of x^k in the product of (1 + x^|v|)
    # over the values (a negative value counts when left out). Each coefficient is at most 2^n, below
    # 2^(8 x slot): packed `slot` bytes apiece into one integer, a factor is a shift and an addition.
    slot = 2 if len(listed) < 16 else 4 if len(listed) < 32 else 8
    packed = 1
    for value in listed:
        packed += packed << (8 * slot * abs(value))
    span = sum(abs(value) for value in listed)
    counts = np.frombuffer(packed.to_bytes(slot * (span + 1), "little"), dtype=f"<u{slot}")
    sums = np.flatnonzero(counts)
    return (sums + low).astype(float), counts[sums].astype(np.int64)


@functools.lru_cache(maxsize=64)
def _swaps(discordant: int, resamples: int, seed: int) -> tuple[np.ndarray, int]:
    """The swap assignments of `sign_flip_p` for this many discordant tasks (rows: assignments), and 1 when
    they are random (the observed assignment then counts as one more). They depend on the count alone, so
    every comparison with that count shares them (read-only). Random ones are kept as bytes, not floats: the
    cache holds up to 64 of them (2,000 x 200 each: 3.2 MB as floats, 0.4 MB as bytes), alive until the
    report ends; exact ones as floats (all 15 take 8 MB; made only for differences that are not small
    integers: sign_flip_p counts the others by their sums)."""
    if discordant <= EXACT_UP_TO:
        # every assignment, in itertools.product((0, 1), repeat=discordant)'s order: row i is i in binary
        bits = np.arange(discordant - 1, -1, -1, dtype=np.int64)
        swaps = ((np.arange(2**discordant, dtype=np.int64)[:, None] >> bits) & 1).astype(np.float64)
        extra = 0
    else:
        rng = np.random.default_rng([seed, discordant])
        swaps = rng.integers(0, 2, size=(resamples, discordant)).astype(np.uint8)
        extra = 1  # the observed assignment counts as one of the permutations
    swaps.flags.writeable = False
    return swaps, extra


@functools.lru_cache(maxsize=16)
def _z_sum(level: float, power: float) -> float:
    """z_{1-α/2} + z_power (scipy.stats.norm.ppf is special.ndtri)."""
    return float(special.ndtri(1.0 - (1.0 - level) / 2.0) + special.ndtri(power))


def minimum_detectable(se: float, observations: float, level: float = LEVEL, power: float = POWER) -> float:
    """(z_{1-α/2} + z_power) × SE; never below one observation's weight, since rates move in steps of 1/n."""
    z = _z_sum(level, power)
    if not np.isfinite(se):
        return float("nan")
    return float(max(z * se, 1.0 / max(observations, 1.0)))


def is_significant(p_value: float, lo: float, hi: float, tasks_differ: int) -> bool:
    """The one rule: p < 0.05 **and** the 95% CI excludes 0 **and** at least MIN_TASKS tasks differ."""
    if not all(np.isfinite(x) for x in (p_value, lo, hi)):
        return False
    return p_value < ALPHA and (lo > 0 or hi < 0) and tasks_differ >= MIN_TASKS


@dataclass(frozen=True)
class PairedDifference:
    """Rate of A minus rate of B over the same tasks."""

    diff: float
    lo: float
    hi: float
    p_value: float  # two-sided sign-flip test (see sign_flip_p)
    se: float  # bootstrap standard error of the difference
    mde: float  # minimum detectable difference at LEVEL and POWER for this many tasks
    clusters: int  # tasks compared
    tasks_differ: int  # tasks whose two sides differ on this metric

    @property
    def significant(self) -> bool:
        return is_significant(self.p_value, self.lo, self.hi, self.tasks_differ)


def paired_from_samples(
    diff: float, samples: np.ndarray, p_value: float, tasks_differ: int, clusters: int, observations: float
) -> PairedDifference:
    """A PairedDifference from the point difference, its bootstrap samples and its sign-flip test."""
    column = samples.reshape(-1, 1)
    return paired_from_columns([diff], column, [p_value], [tasks_differ], [clusters], [observations])[0]


def paired_from_columns(
    diffs: list[float], samples: np.ndarray, p_values: list[float], tasks_differ: list[int],
    clusters: list[int], observations: list[float],
) -> list[PairedDifference]:  # fmt: skip
    """`paired_from_samples` of many differences at once, `samples` holding one column of resamples each:
    their CIs in one percentile pass (each column's numbers are those it gets alone)."""
    lo, hi = percentile_ci(samples)
    # each column's SE: np.std of its finite resamples (NaN when there are none)
    columns = np.ascontiguousarray(samples.T)
    se = np.full(len(columns), np.nan)
    for members, values in _by_count(columns, ~np.isfinite(columns), np.ones(len(columns), dtype=bool)):
        se[members] = np.std(values, axis=1)
    found = []
    for j, diff in enumerate(diffs):
        mde = minimum_detectable(float(se[j]), observations[j])
        interval = float(lo[j]), float(hi[j])
        differ = tasks_differ[j]
        found.append(
            PairedDifference(float(diff), *interval, p_values[j], float(se[j]), mde, clusters[j], differ)
        )
    return found


def paired_difference(
    num_a: np.ndarray, den_a: np.ndarray, num_b: np.ndarray, den_b: np.ndarray,
    keys: np.ndarray | None = None, resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED,
) -> PairedDifference:  # fmt: skip
    """Task-paired difference of two ratio rates (arrays aligned by task; `keys` default: the positions)."""
    num_a, den_a, num_b, den_b = (np.asarray(x, dtype=float) for x in (num_a, den_a, num_b, den_b))
    keys = cluster_keys(range(len(num_a))) if keys is None else keys
    sums = bootstrap_sums(keys, np.column_stack([num_a, den_a, num_b, den_b]), resamples, seed)
    boot = ratio(sums[:, 0], sums[:, 1]) - ratio(sums[:, 2], sums[:, 3])
    observed = float(ratio(num_a.sum(), den_a.sum()) - ratio(num_b.sum(), den_b.sum()))
    p_value, differ = sign_flip_p(num_a, den_a, num_b, den_b, resamples, seed)
    probes = float(max(den_a.sum(), den_b.sum(), 1.0))
    return paired_from_samples(observed, boot, p_value, differ, len(num_a), probes)


@dataclass(frozen=True)
class McNemar:
    """Exact McNemar test on paired binary outcomes (e.g. a probe answered by two arms)."""

    only_a: int  # pairs where the event happened for A only
    only_b: int
    p_value: float  # exact two-sided binomial test on the discordant pairs


def mcnemar_counts(only_a: int, only_b: int) -> McNemar:
    """McNemar from the discordant counts."""
    discordant = only_a + only_b
    p_value = 1.0 if discordant == 0 else binomial_test_half(int(only_a), int(discordant))
    return McNemar(int(only_a), int(only_b), p_value)


@functools.lru_cache(maxsize=4096)
def binomial_test_half(k: int, n: int) -> float:
    """Exact two-sided binomial test of k successes in n trials against p = 1/2 (what
    `scipy.stats.binomtest(k, n, 0.5)` computes). The distribution is symmetric, so the p-value is
    2 * P(X <= min(k, n - k)), or 1 when k = n/2; the tail is summed in integers and divided once, so the
    result is the correctly rounded value, the same on every platform and scipy version."""
    if 2 * k == n:
        return 1.0
    tail, term = 0, 1  # term = C(n, i), exact
    for i in range(min(k, n - k) + 1):
        tail += term
        term = term * (n - i) // (i + 1)
    return min(1.0, 2 * tail / 2**n)


def mcnemar(event_a: np.ndarray, event_b: np.ndarray) -> McNemar:
    """McNemar from two aligned boolean outcome arrays."""
    event_a = np.asarray(event_a, dtype=bool)
    event_b = np.asarray(event_b, dtype=bool)
    return mcnemar_counts(int(np.sum(event_a & ~event_b)), int(np.sum(event_b & ~event_a)))
