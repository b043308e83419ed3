"""`lookbench leaderboard`: build the static leaderboard site from result files."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.markup import escape

from lookbench.cli.common import console, reports_errors


@reports_errors
def leaderboard_command(
    results: list[Path] = typer.Argument(..., help="Result JSON files (with their per-query parquet files)."),
    out: Path = typer.Option(..., "--out", "-o", help="Folder for index.html and data.json."),
    published: bool = typer.Option(True, "--published/--no-published", help="Show the authors' v2601 numbers."),
    title: str = typer.Option("LookBench leaderboard", "--title", help="Page title."),
    scaling: Path | None = typer.Option(
        None, "--scaling", help="A `lookbench scaling` study folder (or its scaling.json): adds its section."
    ),
    audit: list[Path] = typer.Option(
        [], "--audit", help="A `lookbench audit` JSON to show (repeatable); the results' snapshots' AUDIT.json too."
    ),
) -> None:
    """A static site (no server, no CDN): tables with ties and flags, a date-window filter, charts."""
    from lookbench.reports.site import build_site

    index = build_site(results, out, published=published, title=title, scaling=scaling, audits=audit)
    console.print(escape(f"wrote {index} ({index.stat().st_size / 1024:.0f} KiB)"), highlight=False)


def register(app: typer.Typer) -> None:
    """Attach `leaderboard`."""
    app.command("leaderboard")(leaderboard_command)
