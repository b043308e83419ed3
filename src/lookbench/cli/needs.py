"""What a command needs beyond the core install: its extra and the modules that extra provides, checked before the
command does anything, so a missing extra is one line (exit 2) and nothing is written."""

from __future__ import annotations

import functools
import importlib.util
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import typer

from lookbench.cli.common import err_console
from lookbench.errors import LookBenchError

F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True)
class Needs:
    """A command's extra (`pip install 'lookbench[extra]'`) and the top-level modules it imports from that extra."""

    extra: str
    modules: tuple[str, ...]

    def missing(self) -> list[str]:
        """The modules that cannot be found in this environment (found without importing them)."""
        return [name for name in self.modules if importlib.util.find_spec(name) is None]

    def refusal(self, missing: list[str]) -> str:
        """The one line that tells what to install."""
        hint = f"pip install 'lookbench[{self.extra}]'"
        return f"this command needs the {self.extra} extra: {hint} (missing: {', '.join(missing)})"

    def check(self) -> None:
        """Raise the refusal where a command finds out late that it needs these (after its config is read)."""
        missing = self.missing()
        if missing:
            raise LookBenchError(self.refusal(missing))


DECLARED: dict[Callable[..., Any], Needs] = {}
"""Each gated command callback and what it needs (read by the help texts' tests and the install matrix)."""


def needs(extra: str, *modules: str) -> Callable[[F], F]:
    """Decorate a command: refuse it in one line (exit 2) when a module of `extra` is missing, before it runs."""
    declared = Needs(extra, modules)

    def wrap(func: F) -> F:
        @functools.wraps(func)
        def checked(*args: Any, **kwargs: Any) -> Any:
            missing = declared.missing()
            if missing:
                err_console.print(f"error: {declared.refusal(missing)}", highlight=False, markup=False)
                raise typer.Exit(2)
            return func(*args, **kwargs)

        DECLARED[checked] = declared
        return checked  # type: ignore[return-value]

    return wrap
