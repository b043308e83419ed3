"""Flags of one run for the window its metrics cover."""

from __future__ import annotations

import datetime as dt

import pyarrow as pa

from lookbench.contamination.flags import Flag, contamination_flags
from lookbench.contamination.sources import local_snapshot, snapshot_sources
from lookbench.contamination.window import window_start
from lookbench.dates import lenient_date, snapshot_date
from lookbench.embeddings.facts import ModelFacts
from lookbench.results.schema import ResultFile


def result_window_start(result: ResultFile, per_query: pa.Table | None) -> dt.date | None:
    """The window's first day: its `since`, else the earliest query date, else the snapshot date."""
    window = result.config.window
    if window is not None and window.since:
        return lenient_date(window.since)
    if per_query is not None and per_query.num_rows:
        return window_start(per_query, result.snapshot.id, None)
    fallback = snapshot_date(result.snapshot.id)
    return None if fallback is None else lenient_date(str(fallback))


def assess(result: ResultFile, per_query: pa.Table | None = None, sources: set[str] | None = None) -> list[Flag]:
    """Every contamination flag of a run; sources default to those of its snapshot when it is local."""
    if sources is None:
        sources = snapshot_sources(local_snapshot(result.snapshot.location))
    facts = result.model.card or ModelFacts()
    return contamination_flags(facts, result_window_start(result, per_query), result.snapshot.id, sources)
