"""`lookbench legacy`: import a legacy fashion benchmark from its official files; list what is known."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.markup import escape
from rich.table import Table

from lookbench.cli.common import console, reports_errors

legacy_app = typer.Typer(
    help="Legacy fashion benchmarks: import from their official files, list them.", no_args_is_help=True
)


@legacy_app.command("import")
@reports_errors
def import_command(
    name: str = typer.Argument(
        ...,
        help="Dataset: inshop, deepfashion2, street2shop, fashion200k, fashioniq, fashion-mnist or "
        "fashion-mnist-validation.",
    ),
    src: Path = typer.Argument(..., help="The dataset's folder, as downloaded and unpacked."),
    out: Path = typer.Option(..., "--out", "-o", help="Folder to write the snapshot into (as OUT/NAME)."),
    snapshot_name: str | None = typer.Option(None, "--name", help="Snapshot folder name; default: the dataset name."),
    train: bool = typer.Option(True, "--train/--no-train", help="Also write the dataset's training rows as 'train'."),
    skip_missing: bool = typer.Option(
        False, "--skip-missing", help="Leave out rows whose image is missing or unreadable (counted in the card)."
    ),
    detections: Path | None = typer.Option(
        None, "--detections", help="deepfashion2: detector boxes (COCO results JSON) instead of ground-truth boxes."
    ),
    tirg_queries: Path | None = typer.Option(
        None, "--tirg-queries", help="fashion200k: TIRG's test_queries.txt (default: SRC/test_queries.txt)."
    ),
    unpinned: bool = typer.Option(
        False, "--unpinned", help="fashion-mnist: accept files that are not the pinned release (noted in the card)."
    ),
    overwrite: bool = typer.Option(
        False,
        "--overwrite",
        help="Replace an existing snapshot of that name; write into an OUT not marked as legacy import's.",
    ),
) -> None:
    """Read a benchmark's official files and write a lookbench snapshot with its card and protocol."""
    from lookbench._util.outfolder import claim_output_folder
    from lookbench.datasets.legacy.context import ImportOptions
    from lookbench.datasets.legacy.registry import import_dataset
    from lookbench.snapshot.card import read_card
    from lookbench.snapshot.schema import is_composed_subset

    if snapshot_name is not None and (not snapshot_name or "/" in snapshot_name or snapshot_name.startswith(".")):
        raise typer.BadParameter("--name must be a plain folder name")
    options = ImportOptions(
        train=train, skip_missing=skip_missing, detections=detections, tirg_queries=tirg_queries, unpinned=unpinned
    )
    with claim_output_folder(out, "legacy import", overwrite=overwrite).recording():
        target = import_dataset(name, src, out, options, snapshot_name, overwrite)
    card = read_card(target)
    assert card is not None
    table = Table(title=escape(f"{card.title} -> {target}"))
    for column in ("subset", "query", "gallery", "train"):
        table.add_column(column, justify="left" if column == "subset" else "right")
    for subset, entry in card.subsets.items():
        table.add_row(escape(subset), *[str(entry.splits.get(s, 0)) for s in ("query", "gallery", "train")])
    console.print(table)
    for note in card.notes:
        console.print(f"[yellow]note:[/yellow] {escape(note)}", highlight=False)
    compose = " [--compose image|text|sum]" if any(is_composed_subset(s) for s in card.subsets) else ""
    console.print(escape(f"evaluate: lookbench eval --snapshot {target} --model MODEL{compose}"), highlight=False)


@legacy_app.command("list")
@reports_errors
def list_command() -> None:
    """The benchmarks `legacy import` reads, their protocols, licences and reference numbers."""
    from lookbench.datasets.legacy.registry import DATASETS
    from lookbench.results.references import load_references

    references = load_references()
    table = Table(title="legacy benchmarks")
    for column in ("name", "protocol (cut-offs)", "reads", "licence", "reference rows"):
        table.add_column(column)
    for dataset in DATASETS.values():
        protocol = dataset.protocol
        table.add_row(
            dataset.name,
            escape(f"{protocol.title} (K = {', '.join(map(str, protocol.ks))})"),
            escape(dataset.reads),
            escape(dataset.licence),
            str(sum(1 for r in references if r.dataset == dataset.name)),
        )
    console.print(table)


def register(app: typer.Typer) -> None:
    """Attach `legacy import` and `legacy list`."""
    app.add_typer(legacy_app, name="legacy")
