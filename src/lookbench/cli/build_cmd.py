"""`lookbench build CONFIG`: collect, dedup, split and publish one release."""

from __future__ import annotations

from pathlib import Path

import typer

from lookbench.cli.common import console, reports_errors


@reports_errors
def build(
    config: Path = typer.Argument(..., help="Release config YAML (release_date, sources, dedup, output)."),
    push: str | None = typer.Option(None, "--push", help="After publishing, upload to hf://owner/name or a folder."),
    show_problems: int = typer.Option(20, "--show-problems", help="How many reported input problems to print."),
) -> None:
    """Build a release into OUT/vYYYYMMDD; a re-run resumes and skips finished stages."""
    from lookbench.release.config import load_config
    from lookbench.release.push import push_release
    from lookbench.release.runner import run_stages
    from lookbench.release.stages import default_stages

    release = load_config(config)
    ctx = run_stages(release, default_stages(release), echo=console.print)
    if ctx.problems:
        console.print(f"[yellow]{len(ctx.problems)} problem(s)[/yellow] (details under {release.work}/):")
        for problem in ctx.problems[:show_problems]:
            console.print(f"  {problem.get('source', '')}: {problem['url']}: {problem['error']}", highlight=False)
    dedup = ctx.stats_of("dedup")
    console.print(
        f"dedup: kept {dedup.get('kept')} of {dedup.get('input')}; excluded as earlier duplicates "
        f"{dedup.get('excluded_as_duplicates_of_earlier_versions')}; merged in batch {dedup.get('merged_within_batch')}"
    )
    audit = ctx.stats_of("audit")
    if audit:
        overall = audit["overall"]
        console.print(
            f"audit: judged accuracy {overall['accuracy']} (Wilson 95% {overall['wilson95']}), "
            f"canaries caught {audit['canaries']['accuracy']}, below floor: {', '.join(audit['below_floor']) or 'none'}"
        )
        if "true_accuracy_all" in audit:
            console.print(f"audit: true accuracy (known labels) {audit['true_accuracy_all']['accuracy']}")
    console.print(f"[green]published[/green] {release.output / release.version}")
    if push:
        console.print(f"[green]pushed[/green] {push_release(release.output, release.version, push)}")


def register(app: typer.Typer) -> None:
    """Attach the build command."""
    app.command("build")(build)
