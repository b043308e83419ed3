"""`lookbench release CONFIG`: collect, dedup, (crop, annotate, audit, distractors,) split and publish one release."""

from __future__ import annotations

import contextlib
from pathlib import Path

import typer
from rich.markup import escape

from lookbench.cli.common import (
    EXECUTOR_HELP,
    OVERWRITE_HELP,
    PROCESSES_HELP,
    RAY_ADDRESS_HELP,
    SHARDS_HELP,
    console,
    reports_errors,
)
from lookbench.cli.needs import needs


@needs(
    "release",
    "httpx",
    "tenacity",
    "protego",
    "openai",
    "imagehash",
    "scipy",
    "warcio",
    "huggingface_hub",
    "faiss",
    "numba",
)
@reports_errors
def release(
    config: Path = typer.Argument(..., help="Release config YAML (release_date, sources, dedup, output)."),
    push: str | None = typer.Option(None, "--push", help="After publishing, upload to hf://owner/name or a folder."),
    show_problems: int = typer.Option(20, "--show-problems", help="How many reported input problems to print."),
    executor: str = typer.Option("local", "--executor", help=EXECUTOR_HELP),
    processes: int | None = typer.Option(None, "--processes", help=PROCESSES_HELP),
    shards: int | None = typer.Option(None, "--shards", help=SHARDS_HELP),
    ray_address: str | None = typer.Option(None, "--ray-address", help=RAY_ADDRESS_HELP),
    overwrite: bool = typer.Option(False, "--overwrite", help=OVERWRITE_HELP),
) -> None:
    """Build a release into OUT/vYYYYMMDD; a re-run resumes and skips finished stages (and finished shards)."""
    from lookbench._util.outfolder import claim_output_folder
    from lookbench.release.config import load_config
    from lookbench.release.pipeline import Sharding, run_release
    from lookbench.release.push import push_release
    from lookbench.release.stages.audit import AuditStats
    from lookbench.release.stages.dedup import DedupStats
    from lookbench.shards.executor import check_options
    from lookbench.shards.make import make_executor

    check_options(executor, processes, ray_address, shards)
    release = load_config(config)
    claim = claim_output_folder(release.output, "release", overwrite=overwrite)
    mirror = None
    if push and not push.startswith("hf://"):
        mirror = claim_output_folder(Path(push).expanduser(), "release push", overwrite=overwrite)
    runner = make_executor(executor, processes, ray_address)
    try:
        with claim.recording():
            run = run_release(
                release,
                echo=lambda line: console.print(escape(line), highlight=False),
                sharding=Sharding(runner, shards, progress=True),
            )
    finally:
        runner.close()
    if run.problems:
        console.print(f"[yellow]{len(run.problems)} problem(s)[/yellow] (details under {escape(str(release.work))}/):")
        for problem in run.problems[:show_problems]:
            console.print(escape(f"  {problem.source}: {problem.url}: {problem.error}"), highlight=False)
    dedup = run.stats(DedupStats)
    if dedup is not None:
        console.print(
            escape(
                f"dedup: kept {dedup.kept} of {dedup.input}; excluded as earlier duplicates "
                f"{dedup.excluded_as_duplicates_of_earlier_versions}; merged in batch {dedup.merged_within_batch}; "
                f"kept apart by colour {dedup.kept_apart_by_colour}"
            ),
            highlight=False,
        )
    audit = run.stats(AuditStats)
    if audit is not None:
        overall = audit.overall
        console.print(
            escape(
                f"audit: judged accuracy {overall.accuracy} (Wilson 95% {overall.wilson95}), "
                f"canaries caught {audit.canaries.accuracy}, below floor: {', '.join(audit.below_floor) or 'none'}"
            ),
            highlight=False,
        )
        if audit.true_accuracy_all is not None:
            console.print(f"audit: true accuracy (known labels) {audit.true_accuracy_all.accuracy}")
    console.print(f"[green]published[/green] {escape(str(release.output / release.version))}")
    if push:
        with mirror.recording() if mirror is not None else contextlib.nullcontext():
            pushed = push_release(release.output, release.version, push)
        console.print(f"[green]pushed[/green] {escape(pushed)}")


def register(app: typer.Typer) -> None:
    """Attach `release`."""
    app.command("release")(release)
