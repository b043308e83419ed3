"""Score one task: per-query metric values from a ranking and encoded relevance."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from lookbench.metrics.definitions import DISTRACTOR_METRIC, FineRule, metric_name
from lookbench.metrics.ranking import mrr_at, ndcg_at, recall_at
from lookbench.metrics.relevance import Relevance


@dataclass(frozen=True)
class TaskScores:
    """Per-query values of every metric, plus the flags they were computed from (for per-query files)."""

    values: dict[str, np.ndarray]
    fine: np.ndarray
    coarse: np.ndarray
    item: np.ndarray
    gains: np.ndarray


def score_task(relevance: Relevance, topk: np.ndarray, ks: tuple[int, ...], rule: FineRule) -> TaskScores:
    """Every metric at every k in `ks` for each query; `topk` is (Q, max(ks)) corpus rows, best first."""
    if topk.shape[1] < max(ks):
        raise ValueError(f"ranking has {topk.shape[1]} columns, metrics need {max(ks)}")
    fine = relevance.fine(topk, rule)
    coarse = relevance.coarse(topk)
    item = relevance.item(topk)
    gains = relevance.gains(topk)
    ideal = relevance.ideal_gains(max(ks))
    values: dict[str, np.ndarray] = {}
    for name, flags in (("coarse_recall", coarse), ("fine_recall", fine), ("item_recall", item)):
        for k in ks:
            values[metric_name(name, k)] = recall_at(flags, k)
    for k in ks:
        values[metric_name("mrr", k)] = mrr_at(fine, k)
    for k in ks:
        values[metric_name("ndcg", k)] = ndcg_at(gains, ideal, k)
    values[DISTRACTOR_METRIC] = recall_at(relevance.noise(topk), 1)
    return TaskScores(values=values, fine=fine, coarse=coarse, item=item, gains=gains)
