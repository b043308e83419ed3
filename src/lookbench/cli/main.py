"""The `lookbench` typer application: the core's commands, and the wings' through the `lookbench.commands` entry
points; each command's module is imported only when it runs."""

from __future__ import annotations

import atexit
import importlib
import os
import sys
import threading
from functools import cache
from importlib.metadata import entry_points
from typing import Any, NoReturn

import typer
import typer.core
import typer.main

from lookbench.cli.common import err_console, set_debug

CORE_COMMANDS: dict[str, str] = {
    "eval": "lookbench.cli.eval_cmd",
    "models": "lookbench.cli.models_cmd",
    "taxonomy": "lookbench.cli.taxonomy_cmd",
    "snapshot": "lookbench.cli.snapshot_cmd",
}
"""The core's commands and their modules; `--help` lists them first, then the wings' in entry-point order."""
GROUP = "lookbench.commands"
REMOVED: dict[str, str] = {"build": "release"}
"""Commands that were removed, and the one that replaces each."""

SETTINGS: dict[str, Any] = {
    "no_args_is_help": True,
    "add_completion": False,
    "pretty_exceptions_enable": False,
    "rich_markup_mode": None,  # help texts are plain: `[@rev][/vYYYYMMDD]` is syntax, not rich markup
}


@cache
def commands() -> dict[str, str]:
    """Every command name and the module that registers it: the core's, then each wing's entry point."""
    found = dict(CORE_COMMANDS)
    for point in entry_points(group=GROUP):
        found.setdefault(point.name, point.value)
    return found


def module_commands(module: str) -> typer.core.TyperGroup:
    """The commands one module registers, as a click group."""
    sub = typer.Typer(**SETTINGS)
    importlib.import_module(module).register(sub)
    return typer.main.get_group(sub)


def removed(name: str) -> Any:
    """A command that only says `name` is gone and what replaces it (exit 2)."""

    def gone(args: list[str] = typer.Argument(None, hidden=True)) -> None:
        err_console.print(f"`lookbench {name}` was removed: use `lookbench {REMOVED[name]}` (same arguments)")
        raise typer.Exit(2)

    sub = typer.Typer(**SETTINGS)
    sub.command(name, hidden=True, context_settings={"ignore_unknown_options": True, "allow_extra_args": True})(gone)
    return typer.main.get_command(sub)


class LazyCommands(typer.core.TyperGroup):
    """Imports a command's module when the command is looked up, so `lookbench eval` pays for eval's imports only."""

    def list_commands(self, ctx: Any) -> list[str]:
        return list(commands())

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        if cmd_name in REMOVED:
            return removed(cmd_name)
        module = commands().get(cmd_name)
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
