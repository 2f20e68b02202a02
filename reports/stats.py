"""Uncertainty: task-clustered bootstrap CIs of rates, paired differences with a sign-flip test and the
interval that inverts it, the MDE, and the one rule that calls a difference significant.

Every rate is a ratio estimator over clusters (a cluster = one task; the seeds, epochs and models that ran it
are repeated measures of it): sum of numerators / sum of denominators. The bootstrap is a Poisson bootstrap
whose weight for (cluster, resample) is a hash of the task id, the resample index and the seed: the same task
gets the same weights in every cell, every arm and every run, so every cell of a report comes from one pass
over the data, and nothing depends on the order the tasks were read. Weights are made in blocks of resamples,
so memory stays linear in tasks.

A paired difference is not bootstrapped: its p-value is a within-task sign-flip test and its interval the set
of differences that test keeps (test inversion), so the two agree on which side of 0 the difference lies and
stay valid with few tasks (a percentile bootstrap of a few tasks collapses to a point).
"""

from __future__ import annotations

import functools
import hashlib
import math
from collections.abc import Iterable, Iterator
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
EXACT_UP_TO = 15  # tasks: exact sign-flip enumeration (2^15 sign vectors) up to this many
# Up to this many tasks, random sign flips; beyond, the normal approximation of the sign-flip distribution
# (a sum of that many independent ±uᵢ terms: the approximation is close, and random flips would cost
# resamples × tasks per comparison).
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


# A paired interval needs at least this many tasks: the smallest two-sided p a sign-flip test of n tasks can
# reach is 2/2^n, 0.0625 at n = 5, so with fewer tasks no value could ever be excluded at α = 0.05 and any
# interval would be the whole range ("n too small").
MIN_TASKS_FOR_INTERVAL = 6


@dataclass(frozen=True)
class PValue:
    """A p-value and how it was computed."""

    value: float
    method: str  # "exact" (every sign assignment, or a binomial tail), "random" (random flips), "normal"
    resamples: int = 0  # random flips drawn (method "random"), else 0

    def shown(self) -> str:
        """As printed (format_p)."""
        return format_p(self.value, self.method, self.resamples)


def format_p(value: float, method: str, resamples: int = 0) -> str:
    """A p-value as printed: a random-flip p that no flip beat is only bounded, "< 1/(resamples + 1)"; every
    other p (exact, or random flips that some flips beat, or the normal approximation) to two digits."""
    if not math.isfinite(value):
        return "–"
    if method == "random" and value * (resamples + 1) <= 1.0 + 1e-9:
        return f"< 1/{resamples + 1}"
    return f"{value:.2g}"


def one_sided_p(p_value: float, diff: float, direction: int) -> float:
    """The one-sided p that the difference lies in `direction` (+1: above 0, -1: below) from the two-sided
    p of a symmetric null (the sign-flip distribution is symmetric: -s is an assignment whenever s is)."""
    if not math.isfinite(p_value):
        return float("nan")
    return p_value / 2.0 if diff * direction > 0 else 1.0 - p_value / 2.0


def _method(tasks: int) -> str:
    """How a sign-flip test of this many tasks is computed: exact, random or normal (SignFlipTest)."""
    return "exact" if tasks <= EXACT_UP_TO else "random" if tasks <= PERMUTATION_UP_TO else "normal"


@functools.lru_cache(maxsize=32)
def _sign_rows(tasks: int, resamples: int, seed: int) -> np.ndarray:
    """Sign assignments (rows × tasks, ±1.0) for a sign-flip test of this many tasks: every assignment up to
    EXACT_UP_TO tasks, else `resamples` random ones. They depend on the count and the seed alone, so every
    comparison with that many tasks shares them (read-only)."""
    if tasks <= EXACT_UP_TO:
        bits = (np.arange(2**tasks)[:, None] >> np.arange(tasks)[None, :]) & 1
    else:
        bits = np.random.default_rng([seed, tasks]).integers(0, 2, size=(resamples, tasks))
    signs = 1.0 - 2.0 * bits
    signs.flags.writeable = False
    return signs


class SignFlipTest:
    """The within-task sign-flip test of H0: Σᵢ (cᵢ − δ·wᵢ) = 0, at any δ, on one set of tasks.

    cᵢ is task i's contribution to an estimate Σc / Σw and wᵢ its weight. Under H0 each uᵢ = cᵢ − δ·wᵢ is as
    likely to be +uᵢ as −uᵢ (a task's two sides are exchangeable once one is shifted by δ), so Σ ±uᵢ over
    the sign assignments is the null distribution of Σuᵢ: every assignment when there are at most
    EXACT_UP_TO tasks (an exact test), `resamples` random ones up to PERMUTATION_UP_TO (the observed one
    counted as one more), else the normal approximation N(0, Σuᵢ²). The assignments' sums of c and w are
    made once, so the test at another δ costs one pass over them (what inverting it into an interval
    needs)."""

    def __init__(self, c: np.ndarray, w: np.ndarray, resamples: int = DEFAULT_RESAMPLES,
                 seed: int = DEFAULT_SEED) -> None:  # fmt: skip
        self.c, self.w = np.asarray(c, dtype=float), np.asarray(w, dtype=float)
        self.total_c, self.total_w = float(self.c.sum()), float(self.w.sum())
        self.resamples = resamples
        self.method = _method(len(self.c))
        if self.method != "normal":
            signs = _sign_rows(len(self.c), resamples, seed)
            self.null_c, self.null_w = (signs @ np.column_stack([self.c, self.w])).T
        self.size_c, self.size_w = float(np.abs(self.c).sum()), float(np.abs(self.w).sum())

    def p(self, delta: float = 0.0) -> float:
        """Two-sided p of H0 at `delta`."""
        observed = abs(self.total_c - delta * self.total_w)
        if self.method == "normal":
            u = self.c - delta * self.w
            spread = math.sqrt(float(u @ u))
            return 1.0 if spread == 0 else float(2.0 * special.ndtr(-observed / spread))
        # a null sum equal to the observed one counts as extreme, whatever the rounding of either (the
        # tolerance is a small share of an upper bound of Σ|cᵢ − δ·wᵢ|)
        tolerance = 1e-9 * (self.size_c + abs(delta) * self.size_w)
        found = np.count_nonzero(np.abs(self.null_c - delta * self.null_w) >= observed - tolerance)
        if self.method == "exact":
            return float(found / len(self.null_c))
        return float((found + 1) / (self.resamples + 1))

    def p_value(self) -> PValue:
        """The test at δ = 0, with how it was computed."""
        return PValue(self.p(0.0), self.method, self.resamples if self.method == "random" else 0)

    def rejected_beyond(self, start: float, step: float) -> float:
        """A δ the test rejects, from `start` outwards by `step` doubling; NaN when none is found (the set
        of kept values is unbounded on that side)."""
        for _ in range(64):
            if self.p(start) < ALPHA:
                return start
            start, step = start + step, step * 2.0
        return float("nan")

    def bound(self, kept: float, rejected: float) -> float:
        """The end of the set of kept values (p ≥ α) between a kept and a rejected δ: bisection to 1/10,000
        of the bracket (finer than the 0.1 points a report prints; the kept side is returned, so the interval
        holds only values the test keeps)."""
        if not math.isfinite(rejected):
            return rejected
        width = abs(rejected - kept)
        while abs(rejected - kept) > 1e-4 * width:
            middle = (kept + rejected) / 2.0
            if self.p(middle) >= ALPHA:
                kept = middle
            else:
                rejected = middle
        return kept


def is_significant(p_value: float, lo: float, hi: float, tasks_differ: int) -> bool:
    """The one rule: p < 0.05 **and** the 95% CI excludes 0 **and** at least MIN_TASKS tasks differ."""
    if not all(np.isfinite(x) for x in (p_value, lo, hi)):
        return False
    return p_value < ALPHA and (lo > 0 or hi < 0) and tasks_differ >= MIN_TASKS


@functools.lru_cache(maxsize=16)
def _mde_factor(level: float, power: float) -> float:
    """(z_{1-α/2} + z_power) / z_{1-α/2}: the MDE in half-widths of the interval (scipy.stats.norm.ppf is
    special.ndtri)."""
    z_level = float(special.ndtri(1.0 - (1.0 - level) / 2.0))
    return (z_level + float(special.ndtri(power))) / z_level


def minimum_detectable(lo: float, hi: float, level: float = LEVEL, power: float = POWER) -> float:
    """(z_{1-α/2} + z_power) × SE, the SE read off the interval as its half-width / z_{1-α/2}: the smallest
    difference a test at `level` detects with `power`. NaN without an interval."""
    return (hi - lo) / 2.0 * _mde_factor(level, power)


@dataclass(frozen=True)
class PairedDifference:
    """Rate of A minus rate of B over the same tasks."""

    diff: float
    lo: float  # 95% interval (NaN when fewer than MIN_TASKS_FOR_INTERVAL tasks: "n too small")
    hi: float
    p_value: float  # two-sided (see paired_difference)
    p_method: str  # how p was computed: exact, random or normal (PValue)
    p_resamples: int  # random flips drawn (p_method "random"), else 0
    mde: float  # minimum detectable difference at LEVEL and POWER (minimum_detectable)
    tasks: int  # tasks compared (the metric observed on them)
    tasks_differ: int  # tasks whose two sides differ on this metric

    @property
    def significant(self) -> bool:
        return is_significant(self.p_value, self.lo, self.hi, self.tasks_differ)


def _alike_interval(diff: float, tasks: int, limits: tuple[float, float]) -> tuple[float, float, float]:
    """p, lo and hi when every one of `tasks` tasks shows the same difference `diff`: the tasks have no
    spread for a test to resample, so the interval says what the count of tasks allows. At 97.5%
    confidence (Clopper-Pearson, n of n) at least a share (α/2)^(1/n) of all tasks would show `diff`; the
    others could show anything within `limits` (what one task's difference can be). p: the smallest α at
    which that interval excludes 0, 2·q₀ⁿ with q₀ the share at which the mean reaches 0 (for a difference at
    the end of the range this is the exact sign-flip p, 2/2ⁿ)."""
    low, high = limits
    share = (ALPHA / 2.0) ** (1.0 / tasks)
    lo = max(low, share * diff + (1.0 - share) * low)
    hi = min(high, share * diff + (1.0 - share) * high)
    if diff > 0:
        p_value = min(1.0, 2.0 * (-low / (diff - low)) ** tasks)
    elif diff < 0:
        p_value = min(1.0, 2.0 * (high / (high - diff)) ** tasks)
    else:
        p_value = 1.0
    return p_value, lo, hi


def _inverted_interval(test: SignFlipTest, diff: float, p_zero: float) -> tuple[float, float]:
    """The values δ the sign-flip test keeps (p(δ) ≥ α), every weight being ≥ 0, on the side of 0 that the
    reported p at 0 (`p_zero`) puts them: the interval excludes 0 exactly when p_zero < α.

    An assignment with sums A = Σ±cᵢ and B = Σ±wᵢ reaches the observed |C − δW| (C = Σc, W = Σw) where
    (A − δB)² ≥ (C − δW)²; as |B| ≤ W, that is the interval of δ between the two roots (C − A)/(W − B) and
    (C + A)/(W + B), which holds C/W (the all-plus and all-minus assignments reach it everywhere). So p(δ)
    falls monotonically on either side of C/W, and the kept values run from the k-th smallest lower root to
    the k-th largest upper root, k being the fewest assignments that make p ≥ α. The normal approximation
    keeps where (C − δW)² ≤ z²·Σ(cᵢ − δwᵢ)², a quadratic in δ."""
    total_c, total_w = test.total_c, test.total_w
    if test.method == "normal":
        z2 = float(special.ndtri(1.0 - ALPHA / 2.0)) ** 2
        c, w = test.c, test.w
        a = total_w**2 - z2 * float(w @ w)
        half_b = total_c * total_w - z2 * float(c @ w)
        discriminant = half_b**2 - a * (total_c**2 - z2 * float(c @ c))
        if a <= 0 or discriminant < 0:  # the test keeps values without end: no interval to give
            lo, hi = float("nan"), float("nan")
        else:
            root = math.sqrt(discriminant)
            lo, hi = (half_b - root) / a, (half_b + root) / a
    else:
        assignments = len(test.null_c)
        if test.method == "exact":  # found / R >= α
            need = math.ceil(ALPHA * assignments - 1e-9)
        else:  # (found + 1) / (R + 1) >= α
            need = max(1, math.ceil(ALPHA * (assignments + 1) - 1.0 - 1e-9))
        with np.errstate(divide="ignore", invalid="ignore"):
            first = (total_c - test.null_c) / (total_w - test.null_w)
            second = (total_c + test.null_c) / (total_w + test.null_w)
        lower, upper = np.minimum(first, second), np.maximum(first, second)
        everywhere = (total_w - np.abs(test.null_w)) <= 1e-12 * total_w
        lower[everywhere], upper[everywhere] = -np.inf, np.inf
        lo = float(np.partition(lower, need - 1)[need - 1])
        hi = float(-np.partition(-upper, need - 1)[need - 1])
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return float("nan"), float("nan")
    # The interval is the kept set of the test over every task; the reported p may come from the exact test
    # of the differing tasks alone. Where the two disagree on 0 (rare: random flips against an exact p),
    # the reported p decides: 0 joins the interval, or the bound on its side moves just past it.
    if p_zero >= ALPHA:
        return min(lo, 0.0), max(hi, 0.0)
    if lo <= 0.0 <= hi:
        past = math.nextafter(0.0, diff)
        return (past, hi) if diff > 0 else (lo, past)
    return lo, hi


def paired_difference(
    num_a: np.ndarray, den_a: np.ndarray, num_b: np.ndarray, den_b: np.ndarray, bounded: bool = True,
    resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED,
) -> PairedDifference | None:  # fmt: skip
    """Rate(A) − rate(B) over the same tasks (arrays aligned by task), or None when a side has no
    observation. `bounded`: the metric is a rate (a task's difference lies in [-1, 1]); else a per-task
    mean such as tokens (a task's difference lies between minus B's and plus A's largest task value).

    Each task i contributes cᵢ = num_a,ᵢ/Σden_a − num_b,ᵢ/Σden_b to the difference (Σc = the difference)
    with weight wᵢ = (den_a,ᵢ/Σden_a + den_b,ᵢ/Σden_b) / 2 (Σw = 1). p: the sign-flip test of Σc = 0 on
    the tasks that differ (exact when at most EXACT_UP_TO do). Interval: the δ the same test keeps on
    cᵢ − δ·wᵢ (test inversion: valid with few tasks, and on the side of 0 the p puts it); when every task
    shows the same difference, `_alike_interval`; none below MIN_TASKS_FOR_INTERVAL tasks."""
    num_a, den_a, num_b, den_b = (np.asarray(x, dtype=float) for x in (num_a, den_a, num_b, den_b))
    total_a, total_b = float(den_a.sum()), float(den_b.sum())
    if not (total_a > 0 and total_b > 0):
        return None
    observed = (den_a > 0) | (den_b > 0)
    num_a, den_a, num_b, den_b = num_a[observed], den_a[observed], num_b[observed], den_b[observed]
    c = num_a / total_a - num_b / total_b
    w = (den_a / total_a + den_b / total_b) / 2.0
    diff = float(num_a.sum() / total_a - num_b.sum() / total_b)
    tasks = len(c)
    differ = int(np.count_nonzero((num_a != num_b) | (den_a != den_b)))
    spread = np.abs(c - diff * w)
    if np.all(spread <= 1e-9 * max(float(np.abs(c).max()), abs(diff) * float(w.max()), 1e-300)):
        if bounded:
            limits = (-1.0, 1.0)
        else:  # a task we did not see could differ by as much as the largest task value of either side
            limits = (-float((num_b / np.where(den_b > 0, den_b, 1.0)).max()),
                      float((num_a / np.where(den_a > 0, den_a, 1.0)).max()))  # fmt: skip
        value, lo, hi = _alike_interval(diff, tasks, limits)
        p_value = PValue(value, "exact")
    else:
        every = SignFlipTest(c, w, resamples, seed)
        # At 0 only the tasks that differ move the sum: tested alone when that changes the method (an exact
        # test for up to EXACT_UP_TO of them), else the same test (tasks with uᵢ = 0 add nothing).
        moved = c != 0
        at_zero = every
        if _method(int(np.count_nonzero(moved))) != every.method:
            at_zero = SignFlipTest(c[moved], w[moved], resamples, seed)
        p_value = at_zero.p_value()
        lo = hi = float("nan")
        if tasks >= MIN_TASKS_FOR_INTERVAL:
            lo, hi = _inverted_interval(every, diff, p_value.value)
    if tasks < MIN_TASKS_FOR_INTERVAL:
        lo = hi = float("nan")
    return PairedDifference(diff, lo, hi, p_value.value, p_value.method, p_value.resamples,
                            minimum_detectable(lo, hi), tasks, differ)  # fmt: skip


@dataclass(frozen=True)
class RatioInterval:
    """Σc / Σw with its 95% interval, or why it has none."""

    estimate: float
    lo: float
    hi: float
    tasks: int
    missing: str  # "" (an interval), "n too small", "alike" (every task gives the same ratio),
    # "unbounded" (Σw is not distinguishable from 0: Fieller's case), "undefined" (Σw = 0)


def ratio_interval(
    c: np.ndarray, w: np.ndarray, resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED
) -> RatioInterval:
    """Σc / Σw over tasks (e.g. the share of full memory's benefit an arm keeps) and the values s the
    sign-flip test of Σ(cᵢ − s·wᵢ) = 0 keeps (a Fieller-type interval by test inversion)."""
    c, w = np.asarray(c, dtype=float), np.asarray(w, dtype=float)
    tasks = len(c)
    total_w = float(w.sum())
    if total_w == 0:
        return RatioInterval(float("nan"), float("nan"), float("nan"), tasks, "undefined")
    estimate = float(c.sum()) / total_w
    nothing = float("nan")
    if tasks < MIN_TASKS_FOR_INTERVAL:
        return RatioInterval(estimate, nothing, nothing, tasks, "n too small")
    if np.all(np.abs(c - estimate * w) <= 1e-9 * max(float(np.abs(c).max()), float(np.abs(w).max()))):
        return RatioInterval(estimate, nothing, nothing, tasks, "alike")
    test = SignFlipTest(c, w, resamples, seed)
    step = max(abs(estimate), 1.0)
    lo = test.bound(estimate, test.rejected_beyond(estimate - step, -step))
    hi = test.bound(estimate, test.rejected_beyond(estimate + step, step))
    missing = "" if math.isfinite(lo) and math.isfinite(hi) else "unbounded"
    return RatioInterval(estimate, lo, hi, tasks, missing)
