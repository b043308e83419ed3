"""Runs as the pages read them: a result, its per-query table, and which runs scored the same queries."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa

from lookbench.errors import ResultError
from lookbench.evaluation.contamination.tables import load_with_per_query
from lookbench.publish.reports.encode import scope_mask
from lookbench.results.schema import ResultFile


@dataclass
class LoadedRun:
    """A result, its per-query table and where it came from."""

    path: Path
    result: ResultFile
    per_query: pa.Table


def load_runs(paths: list[Path]) -> list[LoadedRun]:
    """Load result files that have per-query tables (the page recomputes windows from them)."""
    runs = []
    for path in paths:
        result, per_query = load_with_per_query(path)
        if per_query is None:
            raise ResultError(f"{path}: the leaderboard needs the run's per-query file (run `lookbench eval` again)")
        filled = [c for c in per_query.column_names if "@" not in c or per_query[c].null_count < per_query.num_rows]
        runs.append(LoadedRun(path, result, per_query.select(filled)))
    if not runs:
        raise ResultError("no result files given")
    return runs


def query_set_groups(runs: list[LoadedRun], scope: str) -> list[list[int]]:
    """Runs (indices) that scored exactly the same queries of one scope on the same snapshot.

    Groups come largest query set first; runs keep their order within a group. Runs in different groups are
    never ranked against or tested with each other.
    """
    groups: dict[tuple[str, tuple[tuple[str, int], ...]], list[int]] = {}
    for i, run in enumerate(runs):
        if scope not in run.result.metrics:
            continue
        table = run.per_query
        subsets = table["subset"].to_pylist()
        keys = zip(subsets, table["query_row"].to_pylist(), scope_mask(subsets, scope), strict=True)
        scoped = tuple(sorted((s, r) for s, r, inside in keys if inside))
        if not scoped:
            continue
        groups.setdefault((run.result.snapshot.content_hash, scoped), []).append(i)
    ordered = sorted(groups.items(), key=lambda item: (-len(item[0][1]), item[1][0]))
    return [members for _, members in ordered]
