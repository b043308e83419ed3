"""Bootstrap confidence intervals over queries (whole outfits on street looks), a paired test and a paired ratio."""

from __future__ import annotations

import zlib
from dataclasses import dataclass

import numpy as np

from lookbench._util.limits import check_allocation


def subset_rng(seed: int, subset: str) -> np.random.Generator:
    """A generator that depends only on the seed and the subset name, not on which other subsets run."""
    return np.random.default_rng([seed, zlib.crc32(subset.encode())])


def resample_counts(rng: np.random.Generator, clusters: int, resamples: int) -> np.ndarray:
    """(B, C) how often each cluster is drawn in each resample (C draws with replacement)."""
    check_allocation(  # the int64 draws and their float64 copy
        f"{resamples:,} bootstrap resamples over {clusters:,} queries", 16 * resamples * clusters, "lower --resamples"
    )
    if clusters == 0:
        return np.zeros((resamples, 0), dtype=np.float64)
    return rng.multinomial(clusters, np.full(clusters, 1.0 / clusters), size=resamples).astype(np.float64)


@dataclass(frozen=True)
class ClusterSums:
    """Per-cluster sums of per-query values and per-cluster query counts, ready for resampling."""

    sums: np.ndarray
    sizes: np.ndarray

    @classmethod
    def of(cls, values: np.ndarray, clusters: np.ndarray) -> ClusterSums:
        """Sum (Q, M) values within clusters given (Q,) dense cluster ids."""
        n = int(clusters.max()) + 1 if len(clusters) else 0
        sums = np.zeros((n, values.shape[1]), dtype=np.float64)
        np.add.at(sums, clusters, values)
        return cls(sums=sums, sizes=np.bincount(clusters, minlength=n).astype(np.float64))


def replicate_totals(counts: np.ndarray, sums: ClusterSums) -> tuple[np.ndarray, np.ndarray]:
    """(B, M) resampled value totals and (B,) resampled query counts."""
    return counts @ sums.sums, counts @ sums.sizes


def percentile_interval(replicates: np.ndarray, confidence: float, point: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Percentile interval of (B, M) replicates along the resample axis; no replicates (B = 0): the point itself."""
    if not len(replicates):
        return point, point
    alpha = (1.0 - confidence) / 2.0
    low, high = np.quantile(replicates, [alpha, 1.0 - alpha], axis=0)
    return low, high


@dataclass(frozen=True)
class PairedTest:
    """Difference A - B of one metric with its bootstrap interval and two-sided p-value."""

    metric: str
    mean_a: float
    mean_b: float
    diff: float
    ci_low: float
    ci_high: float
    p_value: float
    n: int


def paired_bootstrap(
    a: np.ndarray,
    b: np.ndarray,
    clusters: np.ndarray,
    metric: str,
    resamples: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
) -> PairedTest:
    """Resample clusters of paired per-query values; p = 2 * min(P(diff* <= 0), P(diff* >= 0)), capped at 1."""
    diff = (a - b)[:, None]
    sums = ClusterSums.of(diff, clusters)
    counts = resample_counts(np.random.default_rng([seed, zlib.crc32(metric.encode())]), len(sums.sizes), resamples)
    totals, sizes = replicate_totals(counts, sums)
    reps = totals[:, 0] / np.maximum(sizes, 1)
    low, high = np.quantile(reps, [(1 - confidence) / 2, 1 - (1 - confidence) / 2])
    p = min(1.0, 2.0 * min(float(np.mean(reps <= 0)), float(np.mean(reps >= 0))))
    return PairedTest(
        metric=metric,
        mean_a=float(a.mean()),
        mean_b=float(b.mean()),
        diff=float(diff.mean()),
        ci_low=float(low),
        ci_high=float(high),
        p_value=p,
        n=len(a),
    )


def ratio_interval(
    numerator: np.ndarray,
    denominator: np.ndarray,
    clusters: np.ndarray,
    rng: np.random.Generator,
    resamples: int = 1000,
    confidence: float = 0.95,
) -> tuple[float, float] | None:
    """Percentile interval of sum(numerator) / sum(denominator) over paired cluster resamples (both sides drawn
    together); None without resamples or when no resample has a positive denominator."""
    if resamples <= 0 or not len(clusters):
        return None
    sums = ClusterSums.of(np.stack([numerator, denominator], axis=1).astype(np.float64), clusters)
    totals, _ = replicate_totals(resample_counts(rng, len(sums.sizes), resamples), sums)
    # a resample without a denominator hit has no ratio; it is dropped rather than counted as infinite
    kept = totals[totals[:, 1] > 0]
    if not len(kept):
        return None
    low, high = np.quantile(kept[:, 0] / kept[:, 1], [(1 - confidence) / 2, 1 - (1 - confidence) / 2])
    return float(low), float(high)
