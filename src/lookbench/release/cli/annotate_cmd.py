"""`lookbench annotate batch-export|batch-import`: run the annotation job offline with `vllm run-batch`."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.markup import escape

from lookbench.cli.common import console, reports_errors
from lookbench.cli.needs import needs

if TYPE_CHECKING:
    from lookbench.release.label.base import Item
    from lookbench.release.label.openai import OpenAIAnnotator

app = typer.Typer(
    help="Annotation as an OpenAI batch job (e.g. `vllm run-batch` on a GPU box).",
    no_args_is_help=True,
    rich_markup_mode=None,
)


def _annotator_and_items(config_path: Path) -> tuple[OpenAIAnnotator, list[Item]]:
    from lookbench.errors import ReleaseError
    from lookbench.release.config import load_config
    from lookbench.release.label.openai import OpenAIAnnotator
    from lookbench.release.pipeline import release_context, run_stages, stages_for
    from lookbench.release.records import read_samples
    from lookbench.release.stages.annotate import AnnotateStage, items_of

    release = load_config(config_path)
    if release.annotate is None or release.annotate.backend != "openai":
        raise ReleaseError(f"{config_path}: batch files need `annotate: {{backend: openai, api: ...}}`")
    stages = stages_for(release)
    position = [s.name for s in stages].index("annotate")
    run_stages(release, stages[:position], echo=lambda line: console.print(escape(line), highlight=False))
    samples = read_samples(release.work / stages[position - 1].name / "samples.parquet")
    stage = stages[position]
    assert isinstance(stage, AnnotateStage)
    annotator = stage.annotator(stage.cache(release_context(release)))
    if not isinstance(annotator, OpenAIAnnotator):
        raise ReleaseError("batch files are for the openai backend")
    return annotator, items_of(samples)


@app.command("batch-export")
@needs("release", "openai", "httpx", "tenacity", "imagehash", "scipy")
@reports_errors
def batch_export(
    config: Path = typer.Argument(..., help="Release config with an `annotate` section (backend openai)."),
    out: Path = typer.Argument(..., help="Batch input file to write (JSONL: custom_id, method, url, body)."),
    overwrite: bool = typer.Option(False, "--overwrite", help="Replace a file at OUT that is not a batch input."),
) -> None:
    """Run the stages before annotate (resumable) and write one request per crop not yet in the answer cache."""
    from lookbench._util.outfolder import refuse_foreign_file
    from lookbench.release.label.batch import is_batch_input, write_batch

    refuse_foreign_file(out, ours=is_batch_input(out), overwrite=overwrite)
    annotator, items = _annotator_and_items(config)
    count = write_batch(annotator, items, out)
    console.print(
        escape(
            f"wrote {count} request(s) to {out}; run e.g. `vllm run-batch -i {out.name} -o results.jsonl --model ...`"
        ),
        highlight=False,
    )


@app.command("batch-import")
@needs("release", "openai", "httpx", "tenacity", "imagehash", "scipy")
@reports_errors
def batch_import(
    config: Path = typer.Argument(..., help="The same release config."),
    results: Path = typer.Argument(..., help="Batch output file (JSONL: custom_id, response{status_code, body})."),
) -> None:
    """Validate the batch answers into the answer cache; `lookbench release` then labels from the cache."""
    from lookbench.release.label.batch import import_batch

    annotator, items = _annotator_and_items(config)
    counts = import_batch(annotator, items, results)
    console.print(", ".join(f"{name} {count}" for name, count in counts.items()))


def register(root: typer.Typer) -> None:
    """Attach the annotate command group."""
    root.add_typer(app, name="annotate")
