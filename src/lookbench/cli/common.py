"""Shared CLI helpers: the console and turning LookBenchError into a clean exit."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

import typer
from rich.console import Console

from lookbench.errors import LookBenchError

console = Console()
err_console = Console(stderr=True, soft_wrap=True)

F = TypeVar("F", bound=Callable[..., Any])


def reports_errors(func: F) -> F:
    """Print a LookBenchError as one red line and exit with status 2, instead of a traceback."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except LookBenchError as exc:
            err_console.print(f"[red]error:[/red] {exc}", highlight=False, markup=True)
            raise typer.Exit(2) from exc

    return wrapper  # type: ignore[return-value]
