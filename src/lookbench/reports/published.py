"""The authors' published LookBench v2601 numbers, shipped as package data."""

from __future__ import annotations

import json
from importlib import resources

from lookbench.metrics.definitions import metric_name

SOURCE = "SerendipityOneInc/look-bench-page, configs/release_v2601/benchmark.json"
TABS = {
    "Real Studio": "real_studio_flat",
    "AI-Gen Studio": "aigen_studio",
    "Real StreetLook": "real_streetlook",
    "AI-Gen StreetLook": "aigen_streetlook",
}
"""Leaderboard tabs of the image-retrieval subsets; text-to-image tabs are skipped."""
METRICS = {"Coarse Recall": "coarse_recall", "Fine Recall": "fine_recall", "nDCG": "ndcg"}


def load_published() -> dict[str, dict[str, dict[str, float]]]:
    """{subset: {model: {metric@k: fraction}}} from the shipped leaderboard file."""
    text = resources.files("lookbench.reports").joinpath("data/lookbench_leaderboard_v2601.json").read_text("utf-8")
    raw = json.loads(text)
    out: dict[str, dict[str, dict[str, float]]] = {}
    for tab, subset in TABS.items():
        for model, families in raw.get(tab, {}).items():
            values = out.setdefault(subset, {}).setdefault(model, {})
            for family, at_k in families.items():
                if family in METRICS:
                    for k, value in at_k.items():
                        values[metric_name(METRICS[family], int(k.lstrip("@")))] = float(value) / 100.0
    return out
