"""`lookbench snapshot validate|info|verify`: check, summarise and verify a snapshot."""

from __future__ import annotations

import numpy as np
import typer
from rich.markup import escape
from rich.table import Table

from lookbench.cli.common import console, reports_errors
from lookbench.errors import SnapshotError
from lookbench.snapshot import NOISE
from lookbench.snapshot.manifest import MANIFEST_NAME, manifest_problems, read_manifest
from lookbench.snapshot.named import open_location
from lookbench.snapshot.source import HUB_FORMS, resolve_snapshot_dir

snapshot_app = typer.Typer(help="Inspect LookBench snapshots.", no_args_is_help=True, rich_markup_mode=None)


@snapshot_app.command("validate")
@reports_errors
def validate(
    path: str = typer.Argument(..., help=f"Snapshot folder, {HUB_FORMS}, `default` or `validation`."),
    images: bool = typer.Option(False, "--images", help="Also decode every image fully, as eval does."),
) -> None:
    """Check columns, labels, ids and (with --images) that every image decodes."""
    snap = open_location(path)
    for line in snap.validate(check_images=images):
        console.print(escape(line), highlight=False)
    for warning in snap.warnings:
        console.print(f"[yellow]warning:[/yellow] {escape(warning)}", highlight=False)
    console.print(f"[green]ok[/green] {escape(str(snap.root))}", highlight=False)


@snapshot_app.command("info")
@reports_errors
def info(path: str = typer.Argument(..., help=f"Snapshot folder, {HUB_FORMS}, `default` or `validation`.")) -> None:
    """Summarise a snapshot: subsets, row counts, categories and date range."""
    snap = open_location(path)
    table = Table(title=escape(f"snapshot {snap.snapshot_id} ({snap.root})"))
    for col in ("subset", "queries", "gallery", "corpus", "categories", "first seen"):
        table.add_column(col)
    noise_rows = snap.num_rows(NOISE, "gallery") if snap.has_noise else 0
    for subset in snap.subsets:
        snap.check_task(subset, snap.kinds[subset])
        q = snap.labels(subset, "query")
        g = snap.num_rows(subset, "gallery")
        span = "-"
        if q.first_seen_at is not None:
            valid = q.first_seen_at[~np.isnat(q.first_seen_at)]
            if len(valid):
                span = f"{str(valid.min())[:10]} .. {str(valid.max())[:10]}"
        table.add_row(subset, str(len(q)), str(g), str(g + noise_rows), str(len(set(q.category))), span)
    for warning in snap.warnings:
        console.print(f"[yellow]warning:[/yellow] {escape(warning)}", highlight=False)
    console.print(table)
    console.print(f"noise rows: {noise_rows}")
    manifest = read_manifest(snap.root)
    if manifest is not None:
        release = manifest.get("release", {})
        tools = manifest.get("tool_versions", {})
        built = escape(str(tools.get("lookbench", "?")))
        console.print(f"manifest: {len(manifest['files'])} files, built by lookbench {built}", highlight=False)
        if release:
            sources = ", ".join(f"{s['name']} ({s['kind']})" for s in release.get("sources", []))
            excluded = release.get("dedup", {}).get("excluded_as_duplicates_of_earlier_versions", {})
            console.print(escape(f"release {release.get('release_date')}; sources: {sources}"), highlight=False)
            console.print(escape(f"duplicates of earlier versions excluded: {excluded or 'none'}"), highlight=False)


@snapshot_app.command("verify")
@reports_errors
def verify(
    path: str = typer.Argument(..., help="Snapshot folder (a vYYYYMMDD folder or a folder of versions)."),
) -> None:
    """Check every file of a snapshot against its MANIFEST.json (sha256, size, row counts)."""
    root = resolve_snapshot_dir(path)
    manifest = read_manifest(root)
    if manifest is None:
        raise SnapshotError(f"{root}: no {MANIFEST_NAME} to verify against")
    problems = manifest_problems(root, manifest)
    for problem in problems:
        console.print(f"[red]mismatch[/red] {escape(problem)}", highlight=False)
    if problems:
        raise SnapshotError(f"{root}: {len(problems)} file(s) disagree with {MANIFEST_NAME}")
    console.print(f"[green]ok[/green] {escape(str(root))}: {len(manifest['files'])} files match {MANIFEST_NAME}")


def register(app: typer.Typer) -> None:
    """Attach the snapshot command group."""
    app.add_typer(snapshot_app, name="snapshot")
