"""The `lookbench` typer application; each command lives in its own module, imported only when it runs."""

from __future__ import annotations

import atexit
import importlib
import os
import sys
import threading
from typing import Any, NoReturn

import typer
import typer.core
import typer.main

from lookbench.cli.common import set_debug
from lookbench.gcpause import paused_gc

COMMANDS: dict[str, str] = {
    "eval": "eval_cmd",
    "tables": "tables_cmd",
    "compare": "tables_cmd",
    "models": "models_cmd",
    "synth": "synth_cmd",
    "taxonomy": "taxonomy_cmd",
    "release": "release_cmd",
    "build": "release_cmd",
    "contamination": "contamination_cmd",
    "leaderboard": "leaderboard_cmd",
    "report": "report_cmd",
    "train": "train_cmd",
    "scaling": "scaling_cmd",
    "audit": "audit_cmd",
    "submit": "submit_cmd",
    "verify": "submit_cmd",
    "card": "card_cmd",
    "snapshot": "snapshot_cmd",
    "annotate": "annotate_cmd",
    "composed": "composed_cmd",
    "legacy": "legacy_cmd",
}
"""Each command's module in `lookbench.cli`, in the order `--help` lists them (commands, then groups)."""

SETTINGS: dict[str, Any] = {
    "no_args_is_help": True,
    "add_completion": False,
    "pretty_exceptions_enable": False,
    "rich_markup_mode": None,  # help texts are plain: `[@rev][/vYYYYMMDD]` is syntax, not rich markup
}


def module_commands(module: str) -> typer.core.TyperGroup:
    """The commands one `lookbench.cli` module registers, as a click group."""
    sub = typer.Typer(**SETTINGS)
    with paused_gc():  # a command's imports build thousands of objects; collecting them midway finds nothing
        loaded = importlib.import_module(f"lookbench.cli.{module}")
    loaded.register(sub)
    return typer.main.get_group(sub)


class LazyCommands(typer.core.TyperGroup):
    """Imports a command's module when the command is looked up, so `lookbench eval` pays for eval's imports only."""

    def list_commands(self, ctx: Any) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        module = COMMANDS.get(cmd_name)
        if module is None:
            return None
        if cmd_name not in self.commands:
            self.commands.update(module_commands(module).commands)
        return self.commands[cmd_name]


app = typer.Typer(
    name="lookbench",
    help="LookBench: a live, holistic benchmark for fashion image retrieval.",
    cls=LazyCommands,
    **SETTINGS,
)


@app.callback()
def main(
    debug: bool = typer.Option(
        False, "--debug", help="Show the Python traceback of an error (also LOOKBENCH_DEBUG=1)."
    ),
) -> None:
    """LookBench: a live, holistic benchmark for fashion image retrieval."""
    set_debug(debug)


def run() -> NoReturn:
    """The `lookbench` console script: the app, Python's own exit steps, then the process ends at once.

    Python's steps (waiting for its non-daemon threads, thread-pool and atexit hooks, flushing) all run; what is
    skipped is the C++ static destruction after them, where Arrow's global thread pools are torn down and a worker
    still alive aborts the process (SIGABRT, 'terminate called without an active exception') after its message.
    """
    code: int | str | None = 0
    try:
        app()
    except SystemExit as stop:
        code = stop.code
    threading._shutdown()  # type: ignore[attr-defined]  # what Py_Finalize does first: join threads, run their hooks
    atexit._run_exitfuncs()
    if isinstance(code, str):
        print(code, file=sys.stderr)
        code = 1
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe (`| head`): status 120, as Python's own exit gives
            code = code or 120
    os._exit(code or 0)


if __name__ == "__main__":
    run()
