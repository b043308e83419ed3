"""Metric names, default cut-offs and the fine-match rules."""

from __future__ import annotations

from enum import Enum

DEFAULT_KS: tuple[int, ...] = (1, 5, 10, 20)

RECALL_METRICS: tuple[str, ...] = ("coarse_recall", "fine_recall", "item_recall")
"""Metrics defined at every K as 'some item in the top K matches'."""

RANKED_METRICS: tuple[str, ...] = ("mrr", "ndcg")
OUTFIT_METRIC = "outfit_recall@1"
DISTRACTOR_METRIC = "distractor_share@1"
"""1 where a query's top-1 item is a noise row (a distractor), else 0: lower is better."""


class FineRule(str, Enum):
    """How a corpus item counts as a fine match for a query."""

    MAIN = "main"
    """Category and main attribute equal: reproduces the published leaderboard."""
    STRICT = "strict"
    """Category equal and every query attribute present in the item: the paper's wording."""


def metric_name(metric: str, k: int) -> str:
    """The canonical key, e.g. `fine_recall@5`."""
    return f"{metric}@{k}"


def per_query_metric_names(ks: tuple[int, ...]) -> list[str]:
    """Every per-query metric computed for the cut-offs `ks`, in display order."""
    return [metric_name(m, k) for m in (*RECALL_METRICS, *RANKED_METRICS) for k in ks]
