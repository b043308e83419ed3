"""`lookbench leaderboard`: build the static leaderboard site from result files."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.markup import escape

from lookbench.cli.common import OVERWRITE_HELP, console, err_console, reports_errors


@reports_errors
def leaderboard_command(
    results: list[Path] = typer.Argument(
        ..., help="Result JSON files (with their per-query parquet files) or results repositories (`lookbench submit`)."
    ),
    out: Path = typer.Option(..., "--out", "-o", help="Folder for index.html and data.json."),
    published: bool = typer.Option(True, "--published/--no-published", help="Show the authors' v2601 numbers."),
    title: str = typer.Option("LookBench leaderboard", "--title", help="Page title."),
    scaling: Path | None = typer.Option(
        None, "--scaling", help="A `lookbench scaling` study folder (or its scaling.json): adds its section."
    ),
    snapshot: list[str] = typer.Option(
        [], "--snapshot", "-s", help="Snapshots to verify repository bundles on (default: each bundle's own, if local)."
    ),
    audit: list[Path] = typer.Option(
        [], "--audit", help="A `lookbench audit` JSON to show (repeatable); the results' snapshots' AUDIT.json too."
    ),
    reports: Path | None = typer.Option(
        None, "--reports", help="Folder of `lookbench report` pages, one RUN_ID/ each; the site links those found."
    ),
    overwrite: bool = typer.Option(False, "--overwrite", help=OVERWRITE_HELP),
) -> None:
    """A static site (no server, no CDN): tables with ties and flags, a date-window filter, charts.

    A results repository's bundles are verified first and marked verified or unverified; a bundle that
    fails its check is left out with a warning."""
    from lookbench._util.outfolder import claim_output_folder
    from lookbench.publish.reports.site import build_site
    from lookbench.publish.submissions.repository import scan_repository
    from lookbench.snapshot.named import open_location

    claim = claim_output_folder(out, "leaderboard", overwrite=overwrite)
    snapshots = [open_location(s) for s in snapshot]
    paths: list[Path] = []
    verification: dict[Path, tuple[str, str]] = {}
    for path in results:
        if not path.is_dir():
            paths.append(path)
            continue
        scan = scan_repository(path, snapshots)
        for message in scan.refused:
            err_console.print(f"[yellow]left out:[/yellow] {escape(message)}", highlight=False)
        for row in scan.rows:
            paths.append(row.result_path)
            verification[row.result_path] = (row.status.value, row.note)
    with claim.recording():
        index = build_site(
            paths,
            out,
            published=published,
            title=title,
            scaling=scaling,
            verification=verification,
            audits=audit,
            reports=reports,
        )
    console.print(escape(f"wrote {index} ({index.stat().st_size / 1024:.0f} KiB)"), highlight=False)


def register(app: typer.Typer) -> None:
    """Attach `leaderboard`."""
    app.command("leaderboard")(leaderboard_command)
