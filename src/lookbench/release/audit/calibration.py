"""The calibrated gallery-vs-noise test: a permutation null for the largest cross-validated AUC over the statistic
groups, and the smallest planted brightness shift the same test flags.

The statistic is a ridge discriminant (least squares on the 0/1 label, the direction of a regularised LDA) rather
than the logistic probe: its out-of-fold scores are linear in the labels, so every permutation is one matrix product
on the same folds, and hundreds of shuffles cost about one fit.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from lookbench.release.audit.statistics import GROUPS, StatisticGroup

RIDGE = 1.0
PERMUTATIONS = 200
ALPHA = 0.01
PLANTED_BRIGHTNESS = (1.005, 1.01, 1.02, 1.03, 1.05, 1.1)
"""Brightness factors planted into the sampled noise images' pixels, tried smallest first (docs/audit.md#method)."""
ALL_STATISTICS = "all statistics"


@dataclass(frozen=True)
class Outcome:
    """The observed statistic, the group that gave it, its null's (1 - alpha) quantile and its permutation p-value."""

    statistic: float
    statistic_group: str
    null_quantile: float
    p_value: float


def column_aucs(scores: np.ndarray, positive: np.ndarray) -> np.ndarray:
    """(k,) AUC of each column of (n, k) scores against one (n,) bool labelling per column (ties counted half)."""
    from scipy.stats import rankdata

    ranks = rankdata(scores, axis=0)
    n_pos = int(positive[:, 0].sum())
    n_neg = len(positive) - n_pos
    return np.asarray(((ranks * positive).sum(axis=0) - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def ridge_out_of_fold(x: np.ndarray, labels: np.ndarray, folds: np.ndarray) -> np.ndarray:
    """(n, k) out-of-fold ridge-discriminant scores of (n, d) features for each of the k label columns (n, k)."""
    scale = x.std(axis=0)
    z = (x - x.mean(axis=0)) / np.where(scale > 1e-12, scale, 1.0)
    scores = np.empty(labels.shape, dtype=np.float64)
    for fold in np.unique(folds):
        held = folds == fold
        train = z[~held]
        centre = train.mean(axis=0)
        centred = train - centre
        gram = centred.T @ centred + RIDGE * np.eye(z.shape[1])
        weights = np.linalg.solve(gram, centred.T @ labels[~held])
        scores[held] = (z[held] - centre) @ weights
    return scores


def max_aucs(x: np.ndarray, labels: np.ndarray, folds: np.ndarray, groups: Sequence[StatisticGroup]) -> np.ndarray:
    """(len(groups) + 1, k) cross-validated AUC per group (all statistics last) and label column."""
    positive = labels.astype(bool)
    rows = [column_aucs(ridge_out_of_fold(x[:, g.columns], labels, folds), positive) for g in groups]
    rows.append(column_aucs(ridge_out_of_fold(x, labels, folds), positive))
    return np.asarray(rows)


def permutation_test(
    x: np.ndarray, noise: np.ndarray, permutations: int, alpha: float, seed: int, folds: int
) -> Outcome:
    """Max-statistic permutation test of gallery vs noise: the largest AUC over the groups and all statistics,
    against the same maximum under `permutations` label shuffles; p = (1 + #null >= observed) / (1 + permutations)."""
    rng = np.random.default_rng([seed, 3])
    assignment = rng.permutation(len(noise)) % folds  # label-free folds: every shuffle is scored on the same ones
    shuffled = [rng.permutation(noise) for _ in range(permutations)]
    labels = np.column_stack([noise, *shuffled]).astype(np.float64)
    aucs = max_aucs(x, labels, assignment, GROUPS)
    names = [g.name for g in GROUPS] + [ALL_STATISTICS]
    observed = aucs[:, 0]
    best = int(np.argmax(observed))
    null = aucs[:, 1:].max(axis=0)
    return Outcome(
        statistic=float(observed[best]),
        statistic_group=names[best],
        null_quantile=float(np.quantile(null, 1.0 - alpha)),
        p_value=float((1 + np.sum(null >= observed[best])) / (1 + permutations)),
    )


def brightened(pixels: np.ndarray, factor: float) -> np.ndarray:
    """uint8 pixels as [0, 1] values multiplied by `factor`, clipped at white."""
    return np.asarray(np.minimum(pixels / 255.0 * factor, 1.0))
