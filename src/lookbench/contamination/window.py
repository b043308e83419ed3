"""Recompute a result for any date window from its per-query table, without re-embedding."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pyarrow as pa

from lookbench.dates import snapshot_date
from lookbench.embeddings.record import ModelRecord
from lookbench.errors import LookBenchError
from lookbench.evaluation.runner import EvalSettings, summarise_table
from lookbench.evaluation.window import outfit_dates, window_mask
from lookbench.results.schema import DateWindow, ResultFile


def query_dates(per_query: pa.Table, snapshot_id: str) -> np.ndarray:
    """datetime64[us] per query as a window sees it: the earliest first_seen_at of its outfit, else the snapshot date.

    Queries of one outfit (same subset and cluster) share one date, so every window keeps or drops whole
    outfits, exactly as `lookbench eval --since/--until` does; NaT where no date is known.
    """
    column = per_query["first_seen_at"].cast(pa.timestamp("us"))
    dates = np.array(column.to_numpy(zero_copy_only=False), dtype="datetime64[us]")
    fallback = snapshot_date(snapshot_id)
    if fallback is not None:
        dates = np.where(np.isnat(dates), fallback, dates)
    outfits = zip(per_query["subset"].to_pylist(), per_query["cluster"].to_pylist(), strict=True)
    return outfit_dates(dates, list(outfits))


def filter_window(
    per_query: pa.Table, snapshot_id: str, since: np.datetime64 | None, until: np.datetime64 | None
) -> pa.Table:
    """The queries dated in [since, until] (inclusive days), as `lookbench eval --since/--until` keeps them."""
    dates = query_dates(per_query, snapshot_id)
    return per_query.filter(pa.array(window_mask(dates, len(dates), since, until, None)))


def window_start(per_query: pa.Table, snapshot_id: str, since: np.datetime64 | None) -> dt.date | None:
    """The first day of a window: `since`, else the earliest query date."""
    if since is not None:
        return dt.date.fromisoformat(str(since)[:10])
    dates = query_dates(per_query, snapshot_id)
    dates = dates[~np.isnat(dates)]
    return dt.date.fromisoformat(str(dates.min())[:10]) if len(dates) else None


def rewindow(
    result: ResultFile, per_query: pa.Table, since: np.datetime64 | None, until: np.datetime64 | None
) -> ResultFile:
    """A copy of `result` whose metrics cover only the queries in the window; counts kept are recorded."""
    kept = filter_window(per_query, result.snapshot.id, since, until)
    if kept.num_rows == 0:
        raise LookBenchError(f"{result.model_name}: no queries in the window (since={since}, until={until})")
    boot = result.config.bootstrap
    settings = EvalSettings(resamples=boot.resamples, seed=boot.seed, confidence=boot.confidence)
    metrics, categories, breakdowns = summarise_table(kept, settings)
    counts = dict(zip(*np.unique(kept["subset"].to_numpy(zero_copy_only=False), return_counts=True), strict=True))
    subsets = {
        name: info.model_copy(update={"queries": int(counts.get(name, 0))})
        for name, info in result.snapshot.subsets.items()
    }
    window = DateWindow(
        since=None if since is None else str(since)[:10],
        until=None if until is None else str(until)[:10],
        kept_queries=kept.num_rows,
        total_queries=result.config.window.total_queries if result.config.window else per_query.num_rows,
    )
    return result.model_copy(
        update={
            "metrics": metrics,
            "per_category": categories,
            "breakdowns": breakdowns,
            "snapshot": result.snapshot.model_copy(update={"subsets": subsets}),
            "config": result.config.model_copy(update={"window": window}),
        }
    )


def cutoff_since(model: ModelRecord) -> np.datetime64:
    """`--since cutoff`: the day after the card's training cutoff (so the cutoff day itself is excluded); where the
    card declares no cutoff, the day after its release date, a bound on it."""
    card = model.card
    bound = None if card is None else card.cutoff_bound()
    if bound is None:
        name = model.name or model.spec or "the model"
        why = "has no model card"
        if card is not None:
            why = f"declares training_cutoff={card.training_cutoff!r} and no release date"
        raise LookBenchError(f"--since cutoff: {name} {why}; give an explicit date (YYYY-MM-DD) instead")
    return np.datetime64(bound[0] + dt.timedelta(days=1), "us")
