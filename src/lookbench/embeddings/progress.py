"""A rich progress bar showing images per second, or nothing when progress is off."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, ProgressColumn, Task, TextColumn, TimeRemainingColumn
from rich.text import Text


class RateColumn(ProgressColumn):
    """Images per second."""

    def render(self, task: Task) -> Text:
        speed = task.finished_speed or task.speed
        return Text(f"{speed:.1f} img/s" if speed else "- img/s")


@contextlib.contextmanager
def image_progress(description: str, total: int, enabled: bool) -> Iterator[Callable[[int], None]]:
    """Yield an `advance(n)` callable backed by a progress bar on stderr."""
    if not enabled or total == 0:
        yield lambda n: None
        return
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), RateColumn(), TimeRemainingColumn())
    with Progress(*columns, console=Console(stderr=True), transient=False) as bar:
        task = bar.add_task(description, total=total)
        yield lambda n: bar.advance(task, n)
