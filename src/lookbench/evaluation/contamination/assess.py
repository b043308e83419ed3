"""Flags of one run for the window its metrics cover, and the window a model card asks for (`--since cutoff`)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from lookbench._util.dates import day_after
from lookbench.errors import LookBenchError
from lookbench.evaluation.contamination.flags import Flag, contamination_flags
from lookbench.evaluation.contamination.sources import local_snapshot, snapshot_sources
from lookbench.evaluation.window import result_window_start
from lookbench.models.meta import ModelRun
from lookbench.results.schema import ResultFile


def assess(result: ResultFile, per_query: pa.Table | None = None, sources: set[str] | None = None) -> list[Flag]:
    """Every contamination flag of a run; sources default to those of its snapshot when it is local."""
    if sources is None:
        sources = snapshot_sources(local_snapshot(result.snapshot.location))
    meta = result.model.meta
    return contamination_flags(meta, result_window_start(result, per_query), result.snapshot.id, sources)


def cutoff_since(model: ModelRun) -> np.datetime64:
    """`--since cutoff`: the day after the card's training cutoff (so the cutoff day itself is excluded); where the
    card declares no cutoff, the day after its release date, a bound on it."""
    meta = model.meta
    bound = meta.cutoff_bound()
    if bound is None:
        name = model.name or model.spec or "the model"
        why = "has no model card"
        if meta.has_facts:
            why = f"declares training_cutoff={meta.training_cutoff!r} and no release date"
        raise LookBenchError(f"--since cutoff: {name} {why}; give an explicit date (YYYY-MM-DD) instead")
    try:
        return np.datetime64(day_after(bound[0]), "us")
    except ValueError as exc:
        raise LookBenchError(f"--since cutoff: {model.name or model.spec or 'the model'}'s card: {exc}") from exc
