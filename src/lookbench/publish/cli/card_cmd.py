"""`lookbench card`: a result's numbers as `model-index` metadata for a Hub model card."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.markup import escape

from lookbench.cli.common import console, reports_errors
from lookbench.errors import SubmissionError


@reports_errors
def card_command(
    result: Path = typer.Argument(..., help="A result JSON."),
    readme: Path | None = typer.Option(
        None, "--readme", help="README.md to merge into (created if absent); default: print the front matter."
    ),
    dataset: str | None = typer.Option(
        None, "--dataset", help="Hub dataset id (owner/name); default: from the result's hf:// snapshot location."
    ),
    push: str | None = typer.Option(None, "--push", help="Hub model repo id whose card metadata to update."),
    dry_run: bool = typer.Option(True, "--dry-run/--no-dry-run", help="With --push: only show what would be sent."),
) -> None:
    """Write `model-index` (task, dataset id and revision, metrics with names and values) into a README."""
    try:
        import huggingface_hub  # noqa: F401
    except ImportError as exc:
        raise SubmissionError("lookbench card needs huggingface_hub: pip install 'lookbench[hub]'") from exc
    from lookbench.publish.submissions.modelcard import card_text, dataset_of, push_card, write_card
    from lookbench.results.io import load_result

    loaded = load_result(result)
    ref = dataset_of(loaded, result, dataset)
    if readme is not None:
        write_card(loaded, readme, ref)
        console.print(escape(f"wrote the model-index of {loaded.model_name} into {readme}"), highlight=False)
    if push is None:
        if readme is None:
            typer.echo(card_text(loaded, "", "(new card)", ref), nl=False)  # plain: YAML must not be wrapped
        return
    if dry_run:
        console.print(escape(f"dry run: would update the model-index of {push} with:"), highlight=False)
        typer.echo(card_text(loaded, "", push, ref), nl=False)
        console.print("pass --no-dry-run to push", highlight=False)
        return
    console.print(escape(f"pushed: {push_card(loaded, push, ref)}"), highlight=False)


def register(app: typer.Typer) -> None:
    """Attach `card`."""
    app.command("card")(card_command)
