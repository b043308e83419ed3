"""Means per subset and overall (query-count weighted), with bootstrap intervals and per-category breakdowns."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from lookbench.metrics.bootstrap import ClusterSums, percentile_interval, replicate_totals, resample_counts, subset_rng
from lookbench.metrics.definitions import OUTFIT_METRIC

OVERALL = "overall"
COMPOSED_OVERALL = "composed_overall"
"""The query-weighted mean over several composed subsets (kept apart from the image subsets' `overall`)."""
AVERAGE = "average"
"""The unweighted mean over a legacy protocol's categories (FashionIQ's 'Avg')."""


@dataclass(frozen=True)
class Estimate:
    """A mean with its bootstrap interval over `n` units (queries, or outfits for outfit recall)."""

    value: float
    ci_low: float
    ci_high: float
    n: int


@dataclass(frozen=True)
class SubsetValues:
    """Per-query metric values of one subset and the clusters that are resampled together."""

    name: str
    values: dict[str, np.ndarray]
    clusters: np.ndarray
    categories: list[str]
    outfit_values: np.ndarray | None = None
    """Per-cluster outfit recall@1 for street-look subsets, else None."""


def _estimates(names: list[str], point: np.ndarray, low: np.ndarray, high: np.ndarray, n: int) -> dict[str, Estimate]:
    return {name: Estimate(float(point[j]), float(low[j]), float(high[j]), n) for j, name in enumerate(names)}


def summarise(
    subsets: list[SubsetValues],
    resamples: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
    overall: str | None = OVERALL,
) -> dict[str, dict[str, Estimate]]:
    """Every metric per subset and under `overall` (None: left out) the query-count-weighted mean of the subsets."""
    if not subsets:
        return {}
    names = list(subsets[0].values)
    out: dict[str, dict[str, Estimate]] = {}
    total_sums = np.zeros((resamples, len(names)))
    total_sizes = np.zeros(resamples)
    outfit_sums = np.zeros(resamples)
    outfit_n = 0
    outfit_point = 0.0
    all_values = []
    for subset in subsets:
        matrix = np.column_stack([subset.values[name] for name in names])
        all_values.append(matrix)
        sums = ClusterSums.of(matrix, subset.clusters)
        counts = resample_counts(subset_rng(seed, subset.name), len(sums.sizes), resamples)
        totals, sizes = replicate_totals(counts, sums)
        total_sums += totals
        total_sizes += sizes
        reps = totals / np.maximum(sizes, 1)[:, None]
        point = matrix.mean(axis=0)
        low, high = percentile_interval(reps, confidence, point)
        out[subset.name] = _estimates(names, point, low, high, len(matrix))
        if subset.outfit_values is not None:
            o = subset.outfit_values
            o_reps = counts @ o
            lo, hi = percentile_interval((o_reps / max(len(o), 1))[:, None], confidence, np.array([o.mean()]))
            out[subset.name][OUTFIT_METRIC] = Estimate(float(o.mean()), float(lo[0]), float(hi[0]), len(o))
            outfit_sums += o_reps
            outfit_n += len(o)
            outfit_point += float(o.sum())
    if overall is None:
        return out
    stacked = np.concatenate(all_values)
    point = stacked.mean(axis=0)
    low, high = percentile_interval(total_sums / np.maximum(total_sizes, 1)[:, None], confidence, point)
    out[overall] = _estimates(names, point, low, high, len(stacked))
    if outfit_n:
        lo, hi = percentile_interval((outfit_sums / outfit_n)[:, None], confidence, np.array([outfit_point / outfit_n]))
        out[overall][OUTFIT_METRIC] = Estimate(outfit_point / outfit_n, float(lo[0]), float(hi[0]), outfit_n)
    return out


def per_category(subset: SubsetValues) -> dict[str, dict[str, tuple[float, int]]]:
    """Mean of every metric per query category: {category: {metric: (mean, n)}}."""
    cats = np.asarray(subset.categories)
    out: dict[str, dict[str, tuple[float, int]]] = {}
    for cat in sorted(set(subset.categories)):
        mask = cats == cat
        n = int(mask.sum())
        out[cat] = {name: (float(vals[mask].mean()), n) for name, vals in subset.values.items()}
    return out
