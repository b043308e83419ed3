"""Shared CLI helpers: the console, the --debug switch and turning user errors into a clean exit."""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from typing import Any, TypeVar

import typer
from rich.console import Console
from rich.markup import escape

from lookbench.errors import LookBenchError

console = Console()
err_console = Console(stderr=True, soft_wrap=True)

F = TypeVar("F", bound=Callable[..., Any])

_debug = {"on": False}


def set_debug(on: bool) -> None:
    """Show tracebacks for user errors too in this invocation (`lookbench --debug ...` or LOOKBENCH_DEBUG=1)."""
    _debug["on"] = on or os.environ.get("LOOKBENCH_DEBUG", "").lower() in {"1", "true", "yes"}


def reports_errors(func: F) -> F:
    """Print a user error (LookBenchError, or an OS error such as a file that cannot be read) as one red line and
    exit with status 2; tracebacks only with --debug, or for real bugs."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except (LookBenchError, OSError) as exc:
            if _debug["on"]:
                raise
            message = str(exc) if isinstance(exc, LookBenchError) else f"{type(exc).__name__}: {exc}"
            err_console.print(f"[red]error:[/red] {escape(message)}", highlight=False)
            raise typer.Exit(2) from exc

    return wrapper  # type: ignore[return-value]


OVERWRITE_HELP = (
    "Write into a folder lookbench has not marked as this command's; only the files this command writes are replaced."
)
EXECUTOR_HELP = "Where shards run: local (this machine; worker processes with --processes, one per GPU) or ray."
PROCESSES_HELP = "Workers at most: local worker processes (default: one per GPU for a CUDA model, else this process)."
SHARDS_HELP = "Cut each input (each split) into this many shards; default: shards of a fixed size."
RAY_ADDRESS_HELP = "Ray cluster to use with --executor ray (default: RAY_ADDRESS, a running local one, or a new one)."
