"""A rich progress bar showing images (or other units) per second, or nothing when progress is off."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, ProgressColumn, Task, TextColumn, TimeRemainingColumn
from rich.text import Text


class RateColumn(ProgressColumn):
    """Units (images) per second."""

    def __init__(self, unit: str = "img") -> None:
        super().__init__()
        self.unit = unit

    def render(self, task: Task) -> Text:
        speed = task.finished_speed or task.speed
        return Text(f"{speed:.1f} {self.unit}/s" if speed else f"- {self.unit}/s")


@contextlib.contextmanager
def image_progress(description: str, total: int, enabled: bool, unit: str = "img") -> Iterator[Callable[[int], None]]:
    """Yield an `advance(n)` callable backed by a progress bar on stderr."""
    if not enabled or total == 0:
        yield lambda n: None
        return
    rate = RateColumn(unit)
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), rate, TimeRemainingColumn())
    with Progress(*columns, console=Console(stderr=True), transient=False) as bar:
        task = bar.add_task(description, total=total)
        yield lambda n: bar.advance(task, n)
