"""`lookbench tables` and `lookbench compare`: read result files, print and write tables and tests."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import typer
from rich.markup import escape
from rich.table import Table

from lookbench.atomic import write_text_atomic
from lookbench.cli.common import console, reports_errors
from lookbench.contamination.tables import flag_legend, flagged, windowed_results
from lookbench.dates import parse_date
from lookbench.errors import ResultError
from lookbench.metrics.bootstrap import paired_bootstrap
from lookbench.results.compare import pair_queries
from lookbench.results.io import load_with_per_query
from lookbench.results.per_query import metric_columns
from lookbench.results.schema import ResultFile
from lookbench.results.tables import (
    DEFAULT_TABLE_METRICS,
    build_tables,
    markdown_cell,
    percent,
    to_csv,
    to_markdown,
)


@reports_errors
def tables_command(
    results: list[Path] = typer.Argument(..., help="Result JSON files."),
    metrics: str = typer.Option(",".join(DEFAULT_TABLE_METRICS), "--metrics", help="Comma-separated metric keys."),
    out: Path | None = typer.Option(None, "--out", help="Folder for tables.md and tables.csv."),
    ci: bool = typer.Option(False, "--ci", help="Show 95% intervals in the printed tables."),
    since: str | None = typer.Option(
        None, "--since", help="Recompute for queries first seen on or after this date; 'cutoff': after each card's."
    ),
    until: str | None = typer.Option(None, "--until", help="Recompute for queries first seen on or before this date."),
) -> None:
    """Leaderboard-style tables (percent, 2 decimals) from result files, with contamination flags."""
    start = None if since == "cutoff" else parse_date(since, "--since")
    loaded, flags = windowed_results(results, start, parse_date(until, "--until"), since_cutoff=since == "cutoff")
    tables = [
        flagged(t, flags) for t in build_tables(loaded, tuple(m.strip() for m in metrics.split(",") if m.strip()))
    ]
    if not tables:
        raise ResultError("none of the requested metrics is in the result files")
    for t in tables:
        rich_table = Table(title=escape(f"{t.metric} (%)"))
        for col in t.header():
            rich_table.add_column(col, justify="left" if col == "model" else "right")
        for label, cells in t.rows:
            rich_table.add_row(escape(label), *[percent(cells[s], ci) for s in t.scopes])
        for label, numbers in t.references:  # published numbers of a legacy benchmark: labelled, never ranked
            shown = ["-" if numbers[s] is None else f"{100 * numbers[s]:.2f}" for s in t.scopes]  # type: ignore[operator]
            rich_table.add_row(f"[italic]{escape(label)}[/italic]", *shown)
        console.print(rich_table)
    legend = flag_legend(loaded, flags)
    for line in legend:
        console.print(line, highlight=False, markup=False)
    if out is not None:
        notes = "\n" + "\n".join(f"- {markdown_cell(line)}" for line in legend) + "\n" if legend else ""
        write_text_atomic(out / "tables.md", "\n".join(to_markdown(t) for t in tables) + notes)
        write_text_atomic(out / "tables.csv", to_csv(tables))
        console.print(escape(f"wrote {out / 'tables.md'} and {out / 'tables.csv'}"), highlight=False)


def _run_with_per_query(path: Path) -> tuple[ResultFile, pa.Table]:
    result, per_query = load_with_per_query(path)
    if per_query is None:
        raise ResultError(f"{path}: the result has no per-query file; a paired test needs one")
    return result, per_query


@reports_errors
def compare_command(
    result_a: Path = typer.Argument(..., help="Result file A."),
    result_b: Path = typer.Argument(..., help="Result file B (same snapshot)."),
    metrics: str = typer.Option("fine_recall@1,coarse_recall@1,ndcg@5", "--metrics"),
    resamples: int = typer.Option(1000, "--resamples", min=1),
    seed: int = typer.Option(0, "--seed"),
) -> None:
    """Paired bootstrap test of A - B over the queries both runs scored (clusters kept whole)."""
    a, ta = _run_with_per_query(result_a)
    b, tb = _run_with_per_query(result_b)
    if a.snapshot.content_hash != b.snapshot.content_hash:
        raise ResultError(f"{result_a} and {result_b} were computed on different snapshots; a paired test needs one")
    ia, ib, clusters = pair_queries(ta, tb)
    table = Table(title=escape(f"{a.model_name} - {b.model_name} (paired bootstrap, {resamples} resamples)"))
    for col in ("metric", "A %", "B %", "A-B pts", "95% CI", "p", "n"):
        table.add_column(col, justify="right")
    available = set(metric_columns(ta)) & set(metric_columns(tb))
    for metric in (m.strip() for m in metrics.split(",") if m.strip()):
        if metric not in available:
            raise ResultError(f"metric {metric!r} is not in both per-query files")
        values_a = ta[metric].to_numpy(zero_copy_only=False)[ia].astype(np.float64)
        values_b = tb[metric].to_numpy(zero_copy_only=False)[ib].astype(np.float64)
        both = ~(np.isnan(values_a) | np.isnan(values_b))  # composed and image subsets fill different metrics
        if not both.any():
            raise ResultError(f"metric {metric!r}: no query has a value in both runs")
        _, dense = np.unique(clusters[both], return_inverse=True)
        t = paired_bootstrap(values_a[both], values_b[both], dense, metric, resamples, seed)
        table.add_row(
            escape(metric),
            f"{100 * t.mean_a:.2f}",
            f"{100 * t.mean_b:.2f}",
            f"{100 * t.diff:+.2f}",
            f"[{100 * t.ci_low:+.2f}, {100 * t.ci_high:+.2f}]",
            f"{t.p_value:.4f}",
            str(t.n),
        )
    console.print(table)


def register(app: typer.Typer) -> None:
    """Attach `tables` and `compare`."""
    app.command("tables")(tables_command)
    app.command("compare")(compare_command)
