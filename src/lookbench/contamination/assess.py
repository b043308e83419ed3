"""Flags of one run for the window its metrics cover, and the window a model card asks for (`--since cutoff`)."""

from __future__ import annotations

import datetime as dt
from typing import Any

import numpy as np
import pyarrow as pa

from lookbench.contamination.card import CardFacts
from lookbench.contamination.flags import Flag, contamination_flags
from lookbench.contamination.sources import local_snapshot, snapshot_sources
from lookbench.errors import LookBenchError
from lookbench.evaluation.window import result_window_start
from lookbench.results.schema import ResultFile


def assess(result: ResultFile, per_query: pa.Table | None = None, sources: set[str] | None = None) -> list[Flag]:
    """Every contamination flag of a run; sources default to those of its snapshot when it is local."""
    if sources is None:
        sources = snapshot_sources(local_snapshot(result.snapshot.location))
    facts = CardFacts.of_model(result.model)
    return contamination_flags(facts, result_window_start(result, per_query), result.snapshot.id, sources)


def cutoff_since(described: dict[str, Any]) -> np.datetime64:
    """`--since cutoff`: the day after the card's training cutoff (so the cutoff day itself is excluded); where the
    card declares no cutoff, the day after its release date, a bound on it."""
    card = described.get("card")
    bound = CardFacts.of_model(described).cutoff_bound()
    if bound is None:
        name = described.get("name") or described.get("spec") or "the model"
        raw = card.get("training_cutoff") if isinstance(card, dict) else None
        why = "has no model card"
        if isinstance(card, dict):
            why = f"declares training_cutoff={raw!r} and no release date"
        raise LookBenchError(f"--since cutoff: {name} {why}; give an explicit date (YYYY-MM-DD) instead")
    return np.datetime64(bound[0] + dt.timedelta(days=1), "us")
