"""Audit statistics: sample size, Wilson intervals, crop-clustered bootstrap, Cohen's kappa and Gwet's AC1."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

Z95 = 1.959963984540054


def sample_size(margin: float, expected: float, population: int, z: float = Z95) -> int:
    """n = n0 / (1 + (n0 - 1) / N) with n0 = z^2 p (1 - p) / e^2 (normal approximation, finite population)."""
    if population <= 0:
        return 0
    n0 = z * z * expected * (1 - expected) / (margin * margin)
    return min(population, math.ceil(n0 / (1 + (n0 - 1) / population)))


def wilson(successes: int, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval of a proportion; (0, 1) when n is 0."""
    if n == 0:
        return 0.0, 1.0
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def clustered_bootstrap(
    correct: Sequence[int], totals: Sequence[int], draws: int, seed: int, level: float = 0.95
) -> tuple[float, float]:
    """Percentile interval of pooled accuracy, resampling whole clusters (crops) with replacement."""
    k = np.asarray(correct, dtype=np.float64)
    n = np.asarray(totals, dtype=np.float64)
    if len(n) == 0 or n.sum() == 0:
        return 0.0, 1.0
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, len(n), size=(draws, len(n)))
    counts = np.zeros((draws, len(n)))
    np.add.at(counts, (np.repeat(np.arange(draws), len(n)), picks.ravel()), 1.0)
    acc = (counts @ k) / np.maximum(counts @ n, 1.0)
    tail = (1 - level) / 2 * 100
    return float(np.percentile(acc, tail)), float(np.percentile(acc, 100 - tail))


def _marginals(a: Sequence[str], b: Sequence[str]) -> tuple[float, list[tuple[float, float]]]:
    if len(a) != len(b) or not a:
        raise ValueError("agreement needs two equally long, non-empty rating lists")
    observed = sum(x == y for x, y in zip(a, b, strict=True)) / len(a)
    cats = sorted(set(a) | set(b))
    return observed, [(list(a).count(c) / len(a), list(b).count(c) / len(b)) for c in cats]


def cohen_kappa(a: Sequence[str], b: Sequence[str]) -> float:
    """(p_o - p_e) / (1 - p_e), p_e from each rater's own marginals; 1.0 if both agree on a single category."""
    observed, margins = _marginals(a, b)
    expected = sum(pa * pb for pa, pb in margins)
    return 1.0 if expected == 1 else (observed - expected) / (1 - expected)


def gwet_ac1(a: Sequence[str], b: Sequence[str], categories: int = 2) -> float:
    """(p_o - p_e) / (1 - p_e) with p_e = sum_k pi_k (1 - pi_k) / (q - 1), pi_k the mean marginal of category k."""
    observed, margins = _marginals(a, b)
    q = max(categories, len(margins))
    expected = sum(((pa + pb) / 2) * (1 - (pa + pb) / 2) for pa, pb in margins) / (q - 1)
    return (observed - expected) / (1 - expected)
