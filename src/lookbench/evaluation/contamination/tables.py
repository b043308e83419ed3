"""Result files for the `tables` command: recomputed for a date window and labelled with flags."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pyarrow as pa

from lookbench.evaluation.contamination.assess import assess, cutoff_since
from lookbench.evaluation.contamination.flags import Flag, marks
from lookbench.evaluation.window import filter_window, rewindow
from lookbench.results.io import load_with_per_query, per_query_path
from lookbench.results.per_query import read_per_query
from lookbench.results.schema import ResultFile
from lookbench.results.tables import MetricTable, run_label


@dataclass(frozen=True)
class WindowedRun:
    """A result recomputed for a window, the per-query rows it kept (None: no per-query file) and its flags."""

    path: Path
    result: ResultFile
    per_query: pa.Table | None
    flags: list[Flag]
    evaluated: ResultFile
    """The result as the run wrote it (its own window)."""


def windowed_runs(
    paths: list[Path], since: np.datetime64 | None, until: np.datetime64 | None, since_cutoff: bool = False
) -> list[WindowedRun]:
    """Each result (recomputed for the window when one is given) with the queries it kept and its flags.

    With `since_cutoff`, each run's window starts the day after its own card's training cutoff.
    """
    runs = []
    for path in paths:
        evaluated, per_query = load_with_per_query(path)
        result = evaluated
        start = cutoff_since(result.model) if since_cutoff else since
        if start is not None or until is not None:
            if per_query is None:
                per_query = read_per_query(per_query_path(path, result))
            result = rewindow(result, per_query, start, until)
            per_query = filter_window(per_query, result.snapshot.id, start, until)
        runs.append(WindowedRun(path, result, per_query, assess(result, per_query), evaluated))
    return runs


def windowed_results(
    paths: list[Path], since: np.datetime64 | None, until: np.datetime64 | None, since_cutoff: bool = False
) -> tuple[list[ResultFile], list[list[Flag]]]:
    """Each result (recomputed for the window when one is given) and its contamination flags."""
    runs = windowed_runs(paths, since, until, since_cutoff)
    return [r.result for r in runs], [r.flags for r in runs]


def flagged(table: MetricTable, flags: list[list[Flag]]) -> MetricTable:
    """The same table with each row label followed by its flag marks."""
    rows = [(f"{label} {marks(f)}".rstrip(), cells) for (label, cells), f in zip(table.rows, flags, strict=True)]
    return replace(table, rows=rows)


def flag_legend(results: list[ResultFile], flags: list[list[Flag]], labels: list[str] | None = None) -> list[str]:
    """One line per flag: mark, run (its label in `labels` where given) and reason."""
    names = labels if labels is not None else [run_label(r) for r in results]
    return [f"{f.mark} {name}: {f.reason}" for name, fs in zip(names, flags, strict=True) for f in fs]
