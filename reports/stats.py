"""Uncertainty: cluster bootstrap CIs, paired differences with a sign-flip test, McNemar, and the MDE.

Every rate is a ratio estimator over clusters (a cluster = one task in one run): sum of numerators / sum of
denominators. The bootstrap resamples whole clusters (a task's probes are not independent), all B resamples at
once as a (B × clusters) weight matrix, so one matrix product gives every resampled rate (seeded).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats as scipy_stats

DEFAULT_RESAMPLES = 2000
DEFAULT_SEED = 20240531
LEVEL = 0.95
POWER = 0.80


def bootstrap_weights(
    clusters: int, resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED
) -> np.ndarray:
    """(resamples × clusters) multinomial counts: how often each cluster is drawn in each resample."""
    rng = np.random.default_rng(seed)
    if clusters == 0:
        return np.zeros((resamples, 0))
    return rng.multinomial(clusters, np.full(clusters, 1.0 / clusters), size=resamples).astype(float)


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)


def _percentiles(samples: np.ndarray, level: float = LEVEL) -> tuple[np.ndarray, np.ndarray]:
    tail = (1.0 - level) / 2.0 * 100.0
    finite = np.isfinite(samples).any(axis=0)
    lo = np.full(samples.shape[1:], np.nan)
    hi = np.full(samples.shape[1:], np.nan)
    if finite.any():
        lo[finite] = np.nanpercentile(samples[:, finite], tail, axis=0)
        hi[finite] = np.nanpercentile(samples[:, finite], 100.0 - tail, axis=0)
    return lo, hi


@dataclass(frozen=True)
class Estimate:
    value: float
    lo: float
    hi: float


def ratio_cis(num: np.ndarray, den: np.ndarray, weights: np.ndarray) -> list[Estimate]:
    """Point estimates and percentile CIs of several ratio metrics at once; num/den: (clusters × metrics)."""
    num = np.asarray(num, dtype=float).reshape(len(num), -1)
    den = np.asarray(den, dtype=float).reshape(len(den), -1)
    point = _ratio(num.sum(axis=0), den.sum(axis=0))
    lo, hi = _percentiles(_ratio(weights @ num, weights @ den))
    return [Estimate(float(p), float(a), float(b)) for p, a, b in zip(point, lo, hi, strict=True)]


@dataclass(frozen=True)
class PairedDifference:
    """Rate of A minus rate of B over the same clusters."""

    diff: float
    lo: float
    hi: float
    p_value: float  # two-sided sign-flip (within-cluster swap) permutation test
    se: float  # bootstrap standard error of the difference
    mde: float  # minimum detectable difference at LEVEL and POWER for this many clusters
    clusters: int


def paired_difference(
    num_a: np.ndarray,
    den_a: np.ndarray,
    num_b: np.ndarray,
    den_b: np.ndarray,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> PairedDifference:
    """Cluster-paired difference of two ratio rates (arrays aligned by cluster)."""
    num_a, den_a, num_b, den_b = (np.asarray(x, dtype=float) for x in (num_a, den_a, num_b, den_b))
    clusters = len(num_a)
    observed = float(_ratio(num_a.sum(), den_a.sum()) - _ratio(num_b.sum(), den_b.sum()))
    weights = bootstrap_weights(clusters, resamples, seed)
    boot = _ratio(weights @ num_a, weights @ den_a) - _ratio(weights @ num_b, weights @ den_b)
    lo, hi = _percentiles(boot[:, None])
    se = float(np.nanstd(boot)) if np.isfinite(boot).any() else float("nan")
    # Null: A and B are exchangeable within a cluster; swap each cluster's pair with probability 1/2.
    swap = np.random.default_rng(seed + 1).integers(0, 2, size=(resamples, clusters)).astype(float)
    keep = 1.0 - swap
    null = _ratio(keep @ num_a + swap @ num_b, keep @ den_a + swap @ den_b) - _ratio(
        keep @ num_b + swap @ num_a, keep @ den_b + swap @ den_a
    )
    if np.isfinite(observed):
        extreme = np.sum(np.abs(null[np.isfinite(null)]) >= abs(observed) - 1e-12)
        p_value = float((1 + extreme) / (1 + np.isfinite(null).sum()))
    else:
        p_value = float("nan")
    probes = float(max(den_a.sum(), den_b.sum(), 1.0))
    return PairedDifference(
        observed, float(lo[0]), float(hi[0]), p_value, se, minimum_detectable(se, probes), clusters
    )


def minimum_detectable(se: float, observations: float, level: float = LEVEL, power: float = POWER) -> float:
    """(z_{1-α/2} + z_power) × SE; never below one observation's weight, since rates move in steps of 1/n."""
    z = scipy_stats.norm.ppf(1.0 - (1.0 - level) / 2.0) + scipy_stats.norm.ppf(power)
    if not np.isfinite(se):
        return float("nan")
    return float(max(z * se, 1.0 / observations))


@dataclass(frozen=True)
class McNemar:
    only_a: int  # pairs where A is correct and B is not
    only_b: int
    p_value: float  # exact two-sided binomial test on the discordant pairs


def mcnemar(correct_a: np.ndarray, correct_b: np.ndarray) -> McNemar:
    correct_a = np.asarray(correct_a, dtype=bool)
    correct_b = np.asarray(correct_b, dtype=bool)
    only_a = int(np.sum(correct_a & ~correct_b))
    only_b = int(np.sum(correct_b & ~correct_a))
    discordant = only_a + only_b
    p_value = 1.0 if discordant == 0 else float(scipy_stats.binomtest(only_a, discordant, 0.5).pvalue)
    return McNemar(only_a, only_b, p_value)
