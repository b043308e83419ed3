"""`lookbench submit` and `lookbench verify`: verifiable submissions in a results-repository layout."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.markup import escape

from lookbench.cli.common import OVERWRITE_HELP, console, reports_errors
from lookbench.errors import LookBenchError


@reports_errors
def submit_command(
    result: Path = typer.Argument(..., help="A result JSON (its per-query parquet file beside it)."),
    out: Path = typer.Option(..., "--out", "-o", help="The results repository to add the bundle to."),
    embeddings: Path | None = typer.Option(
        None, "--embeddings", help="The run's embeddings (DIR/<subset>/{query,gallery}.npy, DIR/noise/gallery.npy)."
    ),
    embed: bool = typer.Option(
        False, "--embed", help="Bundle the model run's vectors: from its embedding cache, else computed again."
    ),
    trust_code: bool = typer.Option(
        False, "--trust-code", help="With --embed: allow a python: model spec (imports and runs the module it names)."
    ),
    overwrite: bool = typer.Option(False, "--overwrite", help=OVERWRITE_HELP),
) -> None:
    """Bundle a result as <model>/<revision>/<release> with its card, environment and a sha256 manifest."""
    import tempfile

    from lookbench._util.outfolder import output_folder
    from lookbench.publish.submissions.bundle import write_bundle
    from lookbench.publish.submissions.vectors import export_run_vectors
    from lookbench.results.io import load_result

    if embed and embeddings is not None:
        raise LookBenchError("give --embeddings DIR or --embed, not both")
    if trust_code and not embed:
        raise LookBenchError("--trust-code goes with --embed (it allows importing the model's code)")
    with output_folder(out, "submit", overwrite=overwrite):
        if not embed:
            folder = write_bundle(result, embeddings, out)
        else:
            with tempfile.TemporaryDirectory(dir=out, prefix=".vectors-") as scratch:
                vectors = export_run_vectors(load_result(result), result, Path(scratch), trust_code)
                folder = write_bundle(result, vectors, out)
    console.print(escape(f"wrote {folder}"), highlight=False)


@reports_errors
def verify_command(
    bundle: Path = typer.Argument(..., help="A bundle folder written by `lookbench submit`."),
    snapshot: str = typer.Option(..., "--snapshot", "-s", help="The snapshot the bundle declares."),
) -> None:
    """Check the bundle's files, re-score it on the snapshot and compare every number; show contamination flags."""
    from lookbench.publish.submissions.verify import verify_bundle
    from lookbench.snapshot.named import open_location

    outcome = verify_bundle(bundle, open_location(snapshot))
    console.print(escape(f"{bundle}: {outcome.status.value}, {outcome.note}"), highlight=False)
    for flag in outcome.flags:
        console.print(escape(f"  flag {flag.mark} {flag.reason}"), highlight=False)


def register(app: typer.Typer) -> None:
    """Attach `submit` and `verify`."""
    app.command("submit")(submit_command)
    app.command("verify")(verify_command)
