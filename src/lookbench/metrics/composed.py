"""Per-query metrics of composed retrieval: Recall@K, CIRCO-style mAP@K, Fine/Coarse recall, hard negatives."""

from __future__ import annotations

import numpy as np

from lookbench.metrics.definitions import metric_name
from lookbench.metrics.ranking import recall_at

COMPOSED_METRICS: tuple[str, ...] = ("recall", "map", "fine_recall", "coarse_recall", "hard_negative")
"""Metrics of a composed subset, each at every K of the run."""


def composed_metric_names(ks: tuple[int, ...]) -> list[str]:
    """Every per-query metric of a composed subset, in display order."""
    return [metric_name(m, k) for m in COMPOSED_METRICS for k in ks]


def average_precision_at(relevant: np.ndarray, n_relevant: np.ndarray, k: int) -> np.ndarray:
    """AP@k as CIRCO computes it: Σ_{r≤k} P@r · rel_r / min(|R_q|, k); 0 where the query has no relevant item.

    `relevant` is the (Q, ≥k) flag matrix of the ranking; `n_relevant` counts every relevant item in the corpus.
    """
    top = np.asarray(relevant[:, :k], dtype=np.float64)
    precision = np.cumsum(top, axis=1) / np.arange(1, top.shape[1] + 1, dtype=np.float64)
    total = (precision * top).sum(axis=1)
    denominator = np.minimum(np.asarray(n_relevant, dtype=np.float64), k)
    return np.divide(total, denominator, out=np.zeros_like(total), where=denominator > 0)


def composed_values(
    relevant: np.ndarray,
    hard_negative: np.ndarray,
    fine: np.ndarray,
    coarse: np.ndarray,
    n_relevant: np.ndarray,
    ks: tuple[int, ...],
) -> dict[str, np.ndarray]:
    """Every composed metric at every k, per query, from (Q, K) flags ranked best first."""
    values: dict[str, np.ndarray] = {}
    for k in ks:
        values[metric_name("recall", k)] = recall_at(relevant, k)
    for k in ks:
        values[metric_name("map", k)] = average_precision_at(relevant, n_relevant, k)
    for name, flags in (("fine_recall", fine), ("coarse_recall", coarse), ("hard_negative", hard_negative)):
        for k in ks:
            values[metric_name(name, k)] = recall_at(flags, k)
    return values
