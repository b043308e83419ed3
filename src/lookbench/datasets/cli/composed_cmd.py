"""`lookbench composed`: build composed-retrieval query sets and list the composition methods."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.markup import escape
from rich.table import Table

from lookbench._util.outfolder import claim_output_folder
from lookbench.cli.common import console, reports_errors
from lookbench.datasets.composed import derive_synth_composed
from lookbench.evaluation.composed.methods import METHODS
from lookbench.snapshot import open_snapshot
from lookbench.snapshot.named import DEFAULT_SNAPSHOT, open_location
from lookbench.snapshot.source import HUB_FORMS

app = typer.Typer(
    help="Composed retrieval: like this, but with short sleeves.", no_args_is_help=True, rich_markup_mode=None
)


@app.command("derive")
@reports_errors
def derive(
    out: Path = typer.Option(..., "--out", help="Folder to write vYYYYMMDD/ into (the source plus composed/)."),
    snapshot: str | None = typer.Option(
        None, "--snapshot", "-s", help=f"A LookBench-Synth snapshot folder, {HUB_FORMS} or `default`; default: default."
    ),
    validation: float = typer.Option(0.2, "--validation", help="Fraction of products held out for tuning."),
    seed: int = typer.Option(0, "--seed", min=0, help="Seed of the query/validation split."),
    overwrite: bool = typer.Option(
        False,
        "--overwrite",
        help="Replace an existing folder; write into an OUT lookbench has not marked as composed derive's.",
    ),
    render: bool = typer.Option(
        True, "--render/--no-render", help="Also re-render each query product's design with two groups changed."
    ),
    workers: int = typer.Option(1, "--workers", min=1, help="Processes rendering the re-drawn designs."),
) -> None:
    """Add a composed subset of exact pairs (a product and its variants, re-rendered designs) to a Synth copy."""
    source = open_location(snapshot or DEFAULT_SNAPSHOT)
    with claim_output_folder(out, "composed derive", overwrite=overwrite).recording():
        target = derive_synth_composed(
            source, out, validation=validation, seed=seed, overwrite=overwrite, render=render, workers=workers
        )
    derived = open_snapshot(target)
    counts = ", ".join(
        f"{split} {derived.num_rows('composed', split)}"
        for split in ("query", "validation", "gallery")
        if derived.has_split("composed", split)
    )
    console.print(f"[green]wrote[/green] {escape(str(target))} (composed: {counts})", highlight=False)


@app.command("methods")
@reports_errors
def methods() -> None:
    """List the composition methods `lookbench eval --compose` accepts."""
    table = Table(title="composition methods")
    table.add_column("method")
    table.add_column("what it does")
    for name, text in METHODS.items():
        table.add_row(name, text)
    console.print(table)


def register(root: typer.Typer) -> None:
    """Attach `composed derive` and `composed methods`."""
    root.add_typer(app, name="composed")
