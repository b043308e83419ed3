"""What readers see: run titles with their windows, and human metric names with one-line definitions."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import PurePath
from typing import Any

from lookbench.results.naming import window_text
from lookbench.results.schema import ResultFile
from lookbench.results.tables import run_label


def shown_location(location: str) -> str:
    """A snapshot location as a published page shows it: a hub or URL location whole, a local path by its last
    part only (the page travels; the folders of the machine that built it do not)."""
    if "://" in location:
        return location
    return PurePath(location).name or location


@dataclass(frozen=True)
class MetricInfo:
    """A metric family as the page names and defines it."""

    name: str
    """Human name without the cut-off, e.g. 'Fine Recall'."""
    definition: str
    """One line, with K for the cut-off."""
    per_k: bool = True
    """False where K does not apply (outfit recall is at rank 1 only)."""


METRICS: dict[str, MetricInfo] = {
    "fine_recall": MetricInfo(
        "Fine Recall",
        "share of queries with a fine match in the top K: a result of the query's category with its main attribute "
        "(under the strict rule: with every query attribute)",
    ),
    "coarse_recall": MetricInfo("Coarse Recall", "share of queries with an item of the same category in the top K"),
    "item_recall": MetricInfo("Item Recall", "share of queries whose exact product (same item ID) is in the top K"),
    "recall": MetricInfo(
        "Recall",
        "share of queries with a correct item in the top K: for composed queries any relevant item (the changed "
        "attributes at their target values, the others kept, or an explicit target); for a legacy benchmark its "
        "official rule (with DeepFashion2's detected boxes, a query whose item the detector missed fails at every K)",
    ),
    "map": MetricInfo(
        "mAP",
        "composed queries: CIRCO's average precision over the top K, divided by min(relevant items, K)",
    ),
    "mrr": MetricInfo("MRR", "mean of 1/rank of the first fine match within the top K (0 when there is none)"),
    "ndcg": MetricInfo(
        "graded nDCG",
        "top-K ranking quality: each same-category result gains the share of the query's attributes it has, "
        "discounted by log2(rank + 1), divided by the best possible over the whole corpus",
    ),
    "outfit_recall": MetricInfo(
        "Outfit Recall",
        "share of street photos (outfits) whose every garment is a fine match at rank 1",
        per_k=False,
    ),
}
"""Families in display order; exact definitions in docs/metrics.md."""


OFF_BOARD_NAMES = {"hard_negative": "Hard negative"}
"""Families reports show but the leaderboard does not rank (lower is better for hard negatives)."""


def metric_title(key: str) -> str:
    """`fine_recall@5` -> `Fine Recall@5`; `outfit_recall@1` -> `Outfit Recall@1`."""
    family, _, k = key.partition("@")
    info = METRICS.get(family)
    name = info.name if info else OFF_BOARD_NAMES.get(family, family)
    return f"{name}@{k}" if k else name


def metric_infos() -> dict[str, dict[str, Any]]:
    """The families as JSON-ready dicts, for the page."""
    return {family: asdict(info) for family, info in METRICS.items()}


def run_window(result: ResultFile) -> str | None:
    """The dates a run kept queries from (`results.naming.window_text`); None for a run over every date."""
    window = result.config.window
    return window_text(window.since, window.until) if window else None


def run_title(result: ResultFile) -> str:
    """The run's label everywhere on the pages: model (and fine rule), then its window, if any, in brackets."""
    window = run_window(result)
    return run_label(result) + (f" [{window}]" if window else "")
