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
) -> None:
    """A static site (no server, no CDN): tables with ties and flags, a date-window filter, charts."""
    from lookbench.reports.site import build_site

    index = build_site(results, out, published=published, title=title)
    console.print(escape(f"wrote {index} ({index.stat().st_size / 1024:.0f} KiB)"), highlight=False)


def register(app: typer.Typer) -> None:
    """Attach `leaderboard`."""
    app.command("leaderboard")(leaderboard_command)
