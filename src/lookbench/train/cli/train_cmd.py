"""`lookbench train CONFIG --out DIR`: fine-tune an embedding model and export it as `trained:DIR`."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

import typer

from lookbench.cli.common import console, reports_errors
from lookbench.cli.needs import Needs, needs
from lookbench.errors import LookBenchError

TORCH = Needs("train", ("torch",))
"""Checked once the config is read and the folder claimed: config errors, refusals and --guard-only need no torch."""


@needs("train", "imagehash", "numba")
@reports_errors
def train(
    config: Path = typer.Argument(..., help="Training config (YAML); see docs/training.md."),
    out: Path = typer.Option(..., "--out", "-o", help="Run folder: checkpoints, logs and the exported model."),
    set_: list[str] = typer.Option([], "--set", help="Override a config value: KEY.PATH=VALUE (repeatable)."),
    strict: bool = typer.Option(False, "--strict", help="Refuse to train if any training image overlaps evaluation."),
    overwrite: bool = typer.Option(
        False,
        "--overwrite",
        help="Start again in a folder that holds a run, or write into one not marked as a run's (only the run's "
        "own files are replaced).",
    ),
    progress: bool = typer.Option(True, "--progress/--no-progress", help="Show progress bars."),
    guard_only: bool = typer.Option(
        False,
        "--guard-only",
        help="Only measure the overlap: OUT/guard.json and OUT/overlap_queries.json; no training.",
    ),
) -> None:
    """Train from snapshot data; resume automatically from the newest checkpoint in OUT. Multi-GPU: torchrun."""
    from lookbench.train.config import load_config
    from lookbench.train.runfolder import claim_train_folder

    cfg = load_config(config, set_)
    # torchrun starts every rank with this command line: only the first claims the folder
    claim = claim_train_folder(out, cfg, overwrite) if os.environ.get("RANK", "0") == "0" else None
    with claim.recording() if claim is not None else contextlib.nullcontext():
        if guard_only:
            from lookbench.embeddings.store import default_cache_dir
            from lookbench.train.guard import guard_only as measure

            report = measure(cfg.data, cfg.seed, out, default_cache_dir(), overwrite, console.print)
            for line in report.console_lines():
                console.print(line, highlight=False)
            return
        TORCH.check()
        from lookbench.train.loop import Trainer

        try:
            trainer = Trainer(cfg, out, strict=strict, overwrite=overwrite, progress=progress, say=console.print)
            result = trainer.run()
        except KeyboardInterrupt:
            raise LookBenchError(f"interrupted; the same command resumes from the newest checkpoint in {out}") from None
    if result.validation:
        last = result.validation[-1]
        console.print(f"final validation on {last.get('snapshot')}: {last.get('summary')}")


def register(app: typer.Typer) -> None:
    """Attach `train`."""
    app.command("train")(train)
