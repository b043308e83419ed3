"""The `lookbench` typer application; each command lives in its own module."""

from __future__ import annotations

import typer

from lookbench.cli import (
    annotate_cmd,
    audit_cmd,
    card_cmd,
    composed_cmd,
    contamination_cmd,
    eval_cmd,
    leaderboard_cmd,
    legacy_cmd,
    models_cmd,
    release_cmd,
    report_cmd,
    scaling_cmd,
    snapshot_cmd,
    submit_cmd,
    synth_cmd,
    tables_cmd,
    taxonomy_cmd,
    train_cmd,
)
from lookbench.cli.common import set_debug

app = typer.Typer(
    name="lookbench",
    help="LookBench: a live, holistic benchmark for fashion image retrieval.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # help texts are plain: `[@rev][/vYYYYMMDD]` is syntax, not rich markup
)


@app.callback()
def main(
    debug: bool = typer.Option(
        False, "--debug", help="Show the Python traceback of an error (also LOOKBENCH_DEBUG=1)."
    ),
) -> None:
    """LookBench: a live, holistic benchmark for fashion image retrieval."""
    set_debug(debug)


eval_cmd.register(app)
tables_cmd.register(app)
snapshot_cmd.register(app)
models_cmd.register(app)
synth_cmd.register(app)
taxonomy_cmd.register(app)
release_cmd.register(app)
annotate_cmd.register(app)
contamination_cmd.register(app)
leaderboard_cmd.register(app)
report_cmd.register(app)
composed_cmd.register(app)
legacy_cmd.register(app)
train_cmd.register(app)
scaling_cmd.register(app)
audit_cmd.register(app)
submit_cmd.register(app)
card_cmd.register(app)

if __name__ == "__main__":
    app()
