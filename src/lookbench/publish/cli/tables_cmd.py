"""`lookbench tables` and `lookbench compare`: read result files, print and write tables and tests."""

from __future__ import annotations

import contextlib
from pathlib import Path

import typer
from rich.markup import escape
from rich.table import Table

from lookbench._util.atomic import write_text_atomic
from lookbench._util.dates import parse_date
from lookbench._util.outfolder import Claim, claim_output_folder
from lookbench._util.safetext import markdown_cell
from lookbench.cli.common import OVERWRITE_HELP, console, reports_errors
from lookbench.errors import ResultError
from lookbench.evaluation.contamination.tables import flag_legend, flagged, windowed_runs
from lookbench.metrics.definitions import DISTRACTOR_METRIC
from lookbench.publish.reports.comparable import identity_labels, run_ids
from lookbench.publish.reports.paper import FORMATS, build_paper_table, paper_file, render
from lookbench.results.compare import compare_results
from lookbench.results.query_sets import QuerySelection
from lookbench.results.tables import (
    DEFAULT_TABLE_METRICS,
    build_tables,
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
    distractors: bool = typer.Option(
        False, "--distractor-share", help=f"Add {DISTRACTOR_METRIC}: the share of queries whose top-1 is noise."
    ),
    since: str | None = typer.Option(
        None, "--since", help="Recompute for queries first seen on or after this date; 'cutoff': after each card's."
    ),
    until: str | None = typer.Option(None, "--until", help="Recompute for queries first seen on or before this date."),
    fmt: str | None = typer.Option(
        None, "--format", help="The paper's table instead (models x subsets): latex, csv or markdown."
    ),
    baseline: str | None = typer.Option(
        None, "--baseline", help="With --format: a run id or label; adds its paired Overall Fine R@1 difference column."
    ),
    overwrite: bool = typer.Option(False, "--overwrite", help=OVERWRITE_HELP),
) -> None:
    """Leaderboard-style tables (percent, 2 decimals) from result files, with contamination flags."""
    if fmt is not None and fmt not in FORMATS:
        raise ResultError(f"--format {fmt!r}: choose one of {', '.join(FORMATS)}")
    claim = None if out is None else claim_output_folder(out, "tables", overwrite=overwrite)
    # a run refused after the claim (a bad result file, say) takes back a folder it made and wrote nothing into
    with claim.recording() if claim is not None else contextlib.nullcontext():
        _tables(results, metrics, claim, ci, since, until, fmt, baseline, distractors)


def _tables(
    results: list[Path],
    metrics: str,
    claim: Claim | None,
    ci: bool,
    since: str | None,
    until: str | None,
    fmt: str | None,
    baseline: str | None,
    distractors: bool,
) -> None:
    """The tables' body: read and window the runs, print the tables, write them into the claimed folder."""
    start = None if since == "cutoff" else parse_date(since, "--since")
    runs = windowed_runs(results, start, parse_date(until, "--until"), since_cutoff=since == "cutoff")
    if fmt is not None:
        text = render(build_paper_table(runs, baseline, distractors), fmt)
        if claim is None:
            print(text, end="")
        else:
            write_text_atomic(paper_file(claim.folder, fmt), text)
            console.print(escape(f"wrote {paper_file(claim.folder, fmt)}"), highlight=False)
        return
    if baseline is not None:
        raise ResultError("--baseline needs --format (it adds a column to the paper's table)")
    loaded, flags = [r.result for r in runs], [r.flags for r in runs]
    wanted = [m.strip() for m in metrics.split(",") if m.strip()]
    if distractors and DISTRACTOR_METRIC not in wanted:
        wanted.append(DISTRACTOR_METRIC)
    ids = run_ids([r.path for r in runs])
    labels = identity_labels([r.evaluated for r in runs], ids)
    tables = [flagged(t, flags) for t in build_tables(loaded, tuple(wanted), labels, ids)]
    if not tables:
        raise ResultError("none of the requested metrics is in the result files")
    for t in tables:
        rich_table = Table(title=escape(f"{t.metric} (%)"))
        widest = max((len(word) for label, _ in t.rows for word in label.split()), default=5)
        for col in t.header():
            if col == "model":  # a long name folds onto a second line rather than ending in '…'
                rich_table.add_column(col, justify="left", overflow="fold", min_width=min(widest, 48))
            else:
                rich_table.add_column(col, justify="right")
        for label, cells in t.rows:
            rich_table.add_row(escape(label), *[percent(cells[s], ci, metric=t.metric) for s in t.scopes])
        for label, numbers in t.references:  # published numbers of a legacy benchmark: labelled, never ranked
            shown = ["-" if numbers[s] is None else f"{100 * numbers[s]:.2f}" for s in t.scopes]  # type: ignore[operator]
            rich_table.add_row(f"[italic]{escape(label)}[/italic]", *shown)
        console.print(rich_table)
    legend = flag_legend(loaded, flags, labels)
    for line in legend:
        console.print(line, highlight=False, markup=False)
    if claim is not None:
        notes = "\n" + "\n".join(f"- {markdown_cell(line)}" for line in legend) + "\n" if legend else ""
        write_text_atomic(claim.folder / "tables.md", "\n".join(to_markdown(t) for t in tables) + notes)
        write_text_atomic(claim.folder / "tables.csv", to_csv(tables))
        console.print(escape(f"wrote {claim.folder / 'tables.md'} and {claim.folder / 'tables.csv'}"), highlight=False)


@reports_errors
def compare_command(
    result_a: Path = typer.Argument(..., help="Result file A."),
    result_b: Path = typer.Argument(..., help="Result file B (same snapshot)."),
    metrics: str = typer.Option("fine_recall@1,coarse_recall@1,ndcg@5", "--metrics"),
    resamples: int = typer.Option(1000, "--resamples", min=1),
    seed: int = typer.Option(0, "--seed", min=0),
    only_queries: Path | None = typer.Option(
        None, "--only-queries", help="Test only these queries: an overlap_queries.json or a list of SUBSET/ROW ids."
    ),
    exclude_queries: Path | None = typer.Option(
        None, "--exclude-queries", help="Leave these queries out: an overlap_queries.json or a list of SUBSET/ROW ids."
    ),
    overlap_class: list[str] = typer.Option(
        [], "--overlap-class", help="The overlap_queries.json classes to read (repeatable; default: every class)."
    ),
) -> None:
    """Paired bootstrap test of A - B over the queries both runs scored (clusters kept whole)."""
    wanted = [m.strip() for m in metrics.split(",") if m.strip()]
    selection = None
    if only_queries is not None or exclude_queries is not None:
        selection = QuerySelection(only=only_queries, exclude=exclude_queries, classes=tuple(overlap_class))
        console.print(escape(f"queries: {selection.describe()}"), highlight=False)
    elif overlap_class:
        raise ResultError("--overlap-class needs --only-queries or --exclude-queries")
    a, b, tests = compare_results(result_a, result_b, wanted, resamples, seed, selection)
    table = Table(title=escape(f"{a.model_name} - {b.model_name} (paired bootstrap, {resamples} resamples)"))
    for col in ("metric", "A %", "B %", "A-B pts", "95% CI", "p", "n"):
        table.add_column(col, justify="right")
    for t in tests:
        table.add_row(
            escape(t.metric),
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
