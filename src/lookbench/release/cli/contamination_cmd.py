"""`lookbench contamination --snapshot S --against FOLDER`: snapshot samples that also occur in an image folder."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import typer
from rich.markup import escape
from rich.table import Table

from lookbench._util.atomic import write_text_atomic
from lookbench._util.outfolder import refuse_foreign_file
from lookbench._util.safetext import csv_cell
from lookbench.cli.common import console, reports_errors
from lookbench.cli.needs import needs
from lookbench.errors import LookBenchError

DEFAULT_THRESHOLD = 24
"""Same as the release config's `dedup.phash_threshold` default (checked by the tests)."""
DEFAULT_COLOUR_THRESHOLD = 0.01
"""Same as the release config's `dedup.colour_threshold` default (checked by the tests)."""


MATCH_COLUMNS = ["subset", "split", "row", "item_ID", "tier", "distance", "file"]


def is_match_list(path: Path) -> bool:
    """Whether `path` reads as a match list this command wrote (its header first)."""
    try:
        with path.open(encoding="utf-8", newline="") as handle:
            return handle.readline().rstrip("\r\n") == ",".join(MATCH_COLUMNS)
    except (OSError, UnicodeDecodeError):
        return False


@needs("release", "imagehash", "scipy", "numba")
@reports_errors
def contamination(
    snapshot: str = typer.Option(..., "--snapshot", help="Snapshot folder, hf:// location, `default` or `validation`."),
    against: Path = typer.Option(..., "--against", help="Image folder to check against (searched recursively)."),
    threshold: int = typer.Option(
        DEFAULT_THRESHOLD, "--threshold", help="Max pHash Hamming distance of 256 bits (docs/release.md)."
    ),
    colour_threshold: float = typer.Option(
        DEFAULT_COLOUR_THRESHOLD,
        "--colour-threshold",
        help="Max share of thumbnail pixels whose colour may differ in a perceptual match (docs/release.md).",
    ),
    output: Path | None = typer.Option(None, "--output", help="Write every match to this CSV file."),
    fail_on_match: bool = typer.Option(False, "--fail-on-match", help="Exit with status 1 if anything matches."),
    overwrite: bool = typer.Option(False, "--overwrite", help="Replace a file at --output that is not a match list."),
) -> None:
    """Report which snapshot rows match an image in FOLDER exactly or perceptually (mirror-robust)."""
    from lookbench.release.contamination import find_contamination
    from lookbench.snapshot.named import open_location

    if not against.is_dir():
        raise LookBenchError(f"--against {against}: not a folder")
    if output is not None:
        refuse_foreign_file(output, ours=is_match_list(output), overwrite=overwrite)
    snap = open_location(snapshot)
    report = find_contamination(snap, against, threshold, colour_threshold)
    table = Table(title=escape(f"{snap.snapshot_id} against {against}"))
    for col in ("subset", "split", "exact", "perceptual"):
        table.add_column(col)
    counts: dict[tuple[str, str], dict[str, int]] = {}
    for match in report.matches:
        key = (str(match["subset"]), str(match["split"]))
        tiers = counts.setdefault(key, {"exact": 0, "perceptual": 0})
        tiers[str(match["tier"])] += 1
    for (subset, split), tiers in sorted(counts.items()):
        table.add_row(subset, split, str(tiers["exact"]), str(tiers["perceptual"]))
    console.print(table)
    for problem in report.unreadable:
        console.print(f"[yellow]unreadable[/yellow] {escape(str(problem))}", highlight=False)
    found = len(report.matches)
    console.print(f"{found} of {report.snapshot_rows} snapshot rows occur among {report.folder_images} folder images")
    if output is not None:
        buffer = io.StringIO(newline="")
        writer = csv.DictWriter(buffer, MATCH_COLUMNS)
        writer.writeheader()
        writer.writerows({key: csv_cell(value) for key, value in match.items()} for match in report.matches)
        write_text_atomic(output, buffer.getvalue())
    if fail_on_match and report.matches:
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    """Attach the contamination command."""
    app.command("contamination")(contamination)
