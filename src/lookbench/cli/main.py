"""The `lookbench` typer application: the core's commands, and the wings' through the `lookbench.commands` entry
points; each command's module is imported only when it runs."""

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

from lookbench._util.entrypoints import warn_once
from lookbench.cli.common import err_console, set_debug
from lookbench.cli.plugins import CommandEntry, CommandTable, command_table

CORE_COMMANDS: dict[str, str] = {
    "eval": "lookbench.cli.eval_cmd",
    "models": "lookbench.cli.models_cmd",
    "taxonomy": "lookbench.cli.taxonomy_cmd",
    "snapshot": "lookbench.cli.snapshot_cmd",
}
"""The core's commands and their modules; `--help` lists them first, then the wings', then plugins' by name."""
REMOVED: dict[str, str] = {"build": "release"}
"""Commands that were removed, and the one that replaces each."""

SETTINGS: dict[str, Any] = {
    "no_args_is_help": True,
    "add_completion": False,
    "pretty_exceptions_enable": False,
    "rich_markup_mode": None,  # help texts are plain: `[@rev][/vYYYYMMDD]` is syntax, not rich markup
}


def table() -> CommandTable:
    """The installed commands (plugins that break the rules left out, with a warning)."""
    return command_table(tuple(CORE_COMMANDS.items()), frozenset(REMOVED))


def commands() -> dict[str, str]:
    """Every command name and the module that registers it, in `--help` order."""
    return {name: entry.module for name, entry in table().entries.items()}


def module_command(entry: CommandEntry) -> Any:
    """The command `entry` names, from its module's `register(app)`; a plugin whose module fails to import, or that
    does not register that name, is left out with a one-line warning."""
    sub = typer.Typer(**SETTINGS)
    try:
        importlib.import_module(entry.module).register(sub)
        found = typer.main.get_group(sub).commands.get(entry.name)
    except Exception as exc:  # a plugin may fail in any way; lookbench's own modules import on the bare install
        if not entry.plugin:
            raise
        warn_once(f"plugin command {entry.name!r} from {entry.distribution} left out: {type(exc).__name__}: {exc}")
        return None
    if found is None:
        warn_once(f"plugin command {entry.name!r} from {entry.distribution} left out: its module does not register it")
    return found


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
        return list(table().entries)

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        if cmd_name in REMOVED:
            return removed(cmd_name)
        entry = table().entries.get(cmd_name)
        if entry is None:
            return None
        if cmd_name not in self.commands:
            found = module_command(entry)
            if found is None:
                return None
            self.commands[cmd_name] = found
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
