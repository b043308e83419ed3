"""`lookbench synth`: generate a LookBench-Synth snapshot, its contact sheets, or the cached default."""

from __future__ import annotations

import time
from pathlib import Path

import typer
from rich.markup import escape

from lookbench._util.dates import parse_day
from lookbench._util.limits import MAX_PROCESSES, check_count
from lookbench._util.outfolder import claim_output_folder
from lookbench.cli.common import console, reports_errors
from lookbench.datasets.synth.default import default_snapshot
from lookbench.datasets.synth.disjoint import DEFAULT_EXCLUSION
from lookbench.datasets.synth.generate import PURPOSES, generate_snapshot
from lookbench.datasets.synth.parallel import available_cpus
from lookbench.datasets.synth.preview import write_previews
from lookbench.datasets.synth.release import version_name
from lookbench.datasets.synth.sizes import SIZES, size_preset
from lookbench.datasets.synth.training import EXHAUSTED_POLICIES, TRAINING_SIZES, plan_training
from lookbench.errors import LookBenchError


@reports_errors
def synth(
    out: Path = typer.Option(None, "--out", help="Folder to write vYYYYMMDD/ into (required unless --default)."),
    release: str = typer.Option(
        "2026-06-01", "--release", help="Release date YYYY-MM-DD; products are dated in the 30 days before it."
    ),
    size: str = typer.Option("small", "--size", help=f"One of: {', '.join(SIZES)} (real: the released counts)."),
    seed: int = typer.Option(
        0, "--seed", min=0, help="Random seed; same seed and release give byte-identical parquet."
    ),
    preview: bool = typer.Option(False, "--preview", help="Also write contact sheets to OUT/preview/vYYYYMMDD/."),
    overwrite: bool = typer.Option(
        False,
        "--overwrite",
        help="Replace an existing release folder; write into an OUT lookbench has not marked as synth's.",
    ),
    workers: int = typer.Option(
        0, "--workers", min=0, help="Rendering processes (0: one per available CPU); output is the same for any."
    ),
    default: bool = typer.Option(
        False, "--default", help="Generate (if needed) and print the cached default snapshot."
    ),
    purpose: str = typer.Option(
        "eval",
        "--purpose",
        help="eval: a benchmark release; validation: the same kind of release for `lookbench train` to validate on "
        "(another seed and date than the default snapshot, e.g. --seed 1 --release 2026-05-01); train: `train` "
        f"splits of several views per product (sizes {', '.join(TRAINING_SIZES)}), clear of the designs of "
        "--exclude-designs. Date a training release before the evaluation window (e.g. --release 2026-03-01).",
    ),
    exclude_designs: list[str] = typer.Option(
        list(DEFAULT_EXCLUSION),
        "--exclude-designs",
        help="--purpose train: evaluation releases whose query designs (category and every non-colour attribute) "
        "and strict fine matches the training products avoid: default, synth:SEED:YYYY-MM-DD:SIZE or a snapshot "
        "folder; repeatable; none: no exclusion.",
    ),
    exhausted_categories: str = typer.Option(
        "fail",
        "--exhausted-categories",
        help="--purpose train: what to do with a category every design of which --exclude-designs holds: fail "
        "(refuse, the default) or drop (leave it out of the training release; recorded in its manifest).",
    ),
) -> None:
    """Generate a procedurally rendered snapshot with exact labels (four subsets plus noise)."""
    if default:
        console.print(escape(str(default_snapshot())), highlight=False)
        return
    if out is None:
        raise LookBenchError("--out is required (or use --default)")
    try:
        when = parse_day(release)
    except ValueError as exc:
        raise LookBenchError(f"--release: {exc}") from exc
    check_count("--workers", workers, MAX_PROCESSES)
    if purpose not in PURPOSES:
        raise LookBenchError(f"--purpose must be one of {', '.join(PURPOSES)}, got {purpose!r}")
    if exhausted_categories not in EXHAUSTED_POLICIES:
        raise LookBenchError(
            f"--exhausted-categories must be one of {', '.join(EXHAUSTED_POLICIES)}, got {exhausted_categories!r}"
        )
    images = plan_training(seed, when, size).total_images() if purpose == "train" else size_preset(size).total_images()
    target = out / version_name(when)
    with claim_output_folder(out, "synth", overwrite=overwrite).recording() as claim:
        if overwrite:
            claim.refuse_unlisted(target)
        if preview and target.exists() and not overwrite:
            console.print(escape(f"{target} exists; writing contact sheets only"), highlight=False)
        else:
            started = time.perf_counter()
            count = workers or available_cpus()
            console.print(f"generating {purpose} {size} (about {images:,} images) with {count} process(es)")
            generate_snapshot(
                out,
                when,
                size,
                seed,
                overwrite=overwrite,
                workers=count,
                purpose=purpose,
                exclude_designs=exclude_designs,
                exhausted=exhausted_categories,
                progress=lambda msg: console.print(f"[dim]{time.perf_counter() - started:6.0f}s {escape(msg)}[/dim]"),
            )
            console.print(f"[green]wrote[/green] {escape(str(target))} ({time.perf_counter() - started:.0f}s)")
        if preview:
            for path in write_previews(target, out / "preview" / target.name):
                console.print(escape(f"preview {path}"), highlight=False)


def register(app: typer.Typer) -> None:
    """Attach the synth command."""
    app.command("synth")(synth)
