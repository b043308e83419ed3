"""Date windows, in one place: which queries a window keeps (an evaluation's `--since/--until` and a result
re-windowed by `lookbench tables --since` alike), the window a result records, and a result recomputed for another
window from its per-query table without re-embedding. Dates are parsed in `lookbench._util.dates`."""

from __future__ import annotations

import datetime as dt
from collections.abc import Collection, Hashable, Sequence

import numpy as np
import pyarrow as pa

from lookbench._util.arrow import from_numpy, to_datetimes
from lookbench._util.dates import day_of, lenient_date, snapshot_date
from lookbench.errors import LookBenchError
from lookbench.evaluation.summary import summarise_table
from lookbench.results.schema import DateWindow, ResultFile
from lookbench.results.tables import composed_scopes
from lookbench.snapshot.labels import SplitLabels


def outfit_dates(dates: np.ndarray, outfits: Sequence[Hashable | None]) -> np.ndarray:
    """Each row's date replaced by the earliest known date of its outfit; rows without an outfit keep their own.

    The crops of one street photo are one unit (scored and resampled together), so a window keeps or drops
    them together: the outfit counts as first seen when its earliest crop was.
    """
    out = dates.copy()
    members: dict[Hashable, list[int]] = {}
    for row, key in enumerate(outfits):
        if key is not None:
            members.setdefault(key, []).append(row)
    for rows in members.values():
        if len(rows) > 1:
            known = dates[rows][~np.isnat(dates[rows])]
            if len(known):
                out[rows] = known.min()
    return out


def window_mask(
    dates: np.ndarray | None,
    count: int,
    since: np.datetime64 | None,
    until: np.datetime64 | None,
    fallback: np.datetime64 | None,
    outfits: Sequence[Hashable | None] | None = None,
) -> np.ndarray:
    """Rows whose date lies in [since, until + 1 day); all rows if no bounds.

    A row's date is its own, else `fallback`; with `outfits` (a key per row, None for none) it is its outfit's
    earliest date, so whole outfits are kept or dropped.
    """
    keep = np.ones(count, dtype=bool)
    if since is None and until is None:
        return keep
    if dates is None:
        dates = np.full(count, np.datetime64("NaT"), dtype="datetime64[us]")
    if fallback is not None:
        dates = np.where(np.isnat(dates), fallback, dates)
    if outfits is not None:
        dates = outfit_dates(dates, outfits)
    known = ~np.isnat(dates)
    if since is not None:
        keep &= known & (dates >= since)
    if until is not None:
        keep &= known & (dates < until + np.timedelta64(1, "D"))
    return keep


def kept_rows(
    queries: SplitLabels,
    skipped: Collection[int],
    since: np.datetime64 | None,
    until: np.datetime64 | None,
    fallback: np.datetime64 | None,
) -> np.ndarray:
    """The query rows a run scores, ascending: those its window keeps (whole outfits), less the skipped ones."""
    outfits = [None if row in skipped else key for row, key in enumerate(queries.outfit_key)]
    keep = window_mask(queries.first_seen_at, len(queries), since, until, fallback, outfits)
    if skipped:
        keep[list(skipped)] = False
    return np.flatnonzero(keep)


def date_window(
    since: np.datetime64 | None, until: np.datetime64 | None, kept_queries: int, total_queries: int
) -> DateWindow | None:
    """The window a result records (ISO days; None: unbounded), or None when neither bound is given."""
    if since is None and until is None:
        return None
    return DateWindow(
        since=None if since is None else str(since)[:10],
        until=None if until is None else str(until)[:10],
        kept_queries=kept_queries,
        total_queries=total_queries,
    )


def query_dates(per_query: pa.Table, snapshot_id: str) -> np.ndarray:
    """datetime64[us] per query as a window sees it: the earliest first_seen_at of its outfit, else the snapshot date.

    Queries of one outfit (same subset and cluster) share one date, so every window keeps or drops whole
    outfits, exactly as `lookbench eval --since/--until` does; NaT where no date is known.
    """
    dates = to_datetimes(per_query["first_seen_at"])
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
    return per_query.filter(from_numpy(window_mask(dates, len(dates), since, until, None)))


def window_start(per_query: pa.Table, snapshot_id: str, since: np.datetime64 | None) -> dt.date | None:
    """The first day of a window: `since`, else the earliest query date."""
    if since is not None:
        return day_of(since)
    dates = query_dates(per_query, snapshot_id)
    dates = dates[~np.isnat(dates)]
    return day_of(dates.min()) if len(dates) else None


def result_window_start(result: ResultFile, per_query: pa.Table | None) -> dt.date | None:
    """The first day a result's metrics cover: its window's `since`, else the earliest query date, else the
    snapshot date."""
    window = result.config.window
    if window is not None and window.since:
        return lenient_date(window.since)
    if per_query is not None and per_query.num_rows:
        return window_start(per_query, result.snapshot.id, None)
    fallback = snapshot_date(result.snapshot.id)
    return None if fallback is None else lenient_date(str(fallback))


def rewindow(
    result: ResultFile, per_query: pa.Table, since: np.datetime64 | None, until: np.datetime64 | None
) -> ResultFile:
    """A copy of `result` whose metrics cover only the queries in the window; counts kept are recorded."""
    kept = filter_window(per_query, result.snapshot.id, since, until)
    if kept.num_rows == 0:
        raise LookBenchError(f"{result.model_name}: no queries in the window (since={since}, until={until})")
    composed = composed_scopes(result.snapshot.subsets)
    summary = summarise_table(kept, result.config.bootstrap, composed)
    counts = dict(zip(*np.unique(kept["subset"].to_numpy(zero_copy_only=False), return_counts=True), strict=True))
    subsets = {
        name: info.model_copy(update={"queries": int(counts.get(name, 0))})
        for name, info in result.snapshot.subsets.items()
    }
    total = result.config.window.total_queries if result.config.window else per_query.num_rows
    return result.model_copy(
        update={
            **summary.fields(),
            "snapshot": result.snapshot.model_copy(update={"subsets": subsets}),
            "config": result.config.model_copy(update={"window": date_window(since, until, kept.num_rows, total)}),
        }
    )
