"""`lookbench scaling CONFIG --out DIR`: train over a grid of data fractions and backbones, table and plot."""

from __future__ import annotations

from pathlib import Path

import typer

from lookbench.cli.common import OVERWRITE_HELP, console, reports_errors
from lookbench.cli.needs import needs
from lookbench.train.cli.train_cmd import TORCH


@needs("train", "imagehash", "numba")
@reports_errors
def scaling(
    config: Path = typer.Argument(..., help="Scaling config (YAML): train, set, grid, evaluate; see docs/training.md."),
    out: Path = typer.Option(..., "--out", "-o", help="Study folder: cells/, results/, scaling.{json,md,csv,png}."),
    strict: bool = typer.Option(False, "--strict", help="Refuse cells whose training data overlaps evaluation."),
    overwrite: bool = typer.Option(False, "--overwrite", help=OVERWRITE_HELP),
) -> None:
    """Train and evaluate every cell (resuming an interrupted study), then write the table and the plot."""
    from lookbench._util.outfolder import claim_output_folder
    from lookbench.train.scaling import load_scaling

    study, base = load_scaling(config)
    claim = claim_output_folder(out, "scaling", overwrite=overwrite)
    from lookbench.evaluation.scaling_report import to_markdown, write_report
    from lookbench.train.scaling import run_study

    with claim.recording():
        TORCH.check()
        results = run_study(study, base, out, strict, console.print)
        for path in write_report(results, out):
            console.print(f"wrote {path}")
    console.print(to_markdown(results), markup=False)


def register(app: typer.Typer) -> None:
    """Attach `scaling`."""
    app.command("scaling")(scaling)
