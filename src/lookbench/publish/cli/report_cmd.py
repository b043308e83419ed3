"""`lookbench report`: a self-contained visual retrieval report for one run."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

import typer
from rich.markup import escape

from lookbench.cli.common import OVERWRITE_HELP, console, reports_errors
from lookbench.errors import LookBenchError


def parse_query(text: str) -> tuple[str, int]:
    """`SUBSET:ROW` as a (subset, query row) pair."""
    subset, sep, row = text.rpartition(":")
    if not sep or not subset or not row.isdigit():
        raise LookBenchError(f"--query: expected SUBSET:ROW (e.g. real_studio_flat:12), got {text!r}")
    return subset, int(row)


def board_link(text: str) -> str:
    """A link back to the leaderboard: relative (e.g. `../index.html`) or an http(s) URL."""
    if urlsplit(text).scheme not in ("", "http", "https") or not text.strip():
        raise LookBenchError(f"--board: expected a relative link or an http(s) URL, got {text!r}")
    return text


@reports_errors
def report_command(
    result: Path = typer.Argument(..., help="Result JSON file (with its per-query parquet file)."),
    out: Path = typer.Option(..., "--out", "-o", help="Folder for index.html."),
    query: list[str] = typer.Option([], "--query", "-q", help="Show this SUBSET:ROW query (repeatable)."),
    per_subset: int = typer.Option(12, "--per-subset", min=1, help="Sampled queries per subset (worst first)."),
    per_category: int = typer.Option(2, "--per-category", min=1, help="Sampled queries per category."),
    snapshot: str | None = typer.Option(
        None,
        "--snapshot",
        "-s",
        help="Read the snapshot here (it moved since the run); default: where the run read it.",
    ),
    audit: Path | None = typer.Option(
        None, "--audit", help="A `lookbench audit` JSON to show; default: the snapshot's AUDIT.json, if any."
    ),
    board: str | None = typer.Option(
        None, "--board", help="Link back to the leaderboard: relative (e.g. ../index.html) or an http(s) URL."
    ),
    overwrite: bool = typer.Option(False, "--overwrite", help=OVERWRITE_HELP),
) -> None:
    """Query crops beside their top-5 results with match marks, attribute confusions and filters."""
    from lookbench._util.outfolder import claim_output_folder
    from lookbench.publish.reports.report import build_report

    chosen = [parse_query(q) for q in query] or None
    link = None if board is None else board_link(board)
    claim = claim_output_folder(out, "report", overwrite=overwrite)
    with claim.recording():
        index = build_report(result, out, chosen, per_subset, per_category, snapshot, audit, link)
    console.print(escape(f"wrote {index} ({index.stat().st_size / 1024:.0f} KiB)"), highlight=False)


def register(app: typer.Typer) -> None:
    """Attach `report`."""
    app.command("report")(report_command)
