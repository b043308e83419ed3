"""Run a job's shards on an executor: skip the finished ones, run the rest, check what each one left behind."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field

from lookbench.shards.executor import Executor, Progress, ShardError, ShardJob, ShardTask
from lookbench.shards.marker import ShardMarker, read_marker
from lookbench.shards.plan import Shard

Holds = Callable[[ShardTask, ShardMarker], bool]
"""Whether a shard's output still holds what its marker says (files there and whole, vectors in the store)."""
Track = Callable[[int], AbstractContextManager[Progress]]
"""Opens a progress display for this many units of work (images, items) and yields its `advance(n)`."""
Arrived = Callable[[ShardTask, ShardMarker], None]
"""Told of each shard as soon as it is known finished (found done, or reported by its worker), before the others."""


@contextlib.contextmanager
def untracked(_total: int) -> Iterator[Progress]:
    """No progress display."""
    yield lambda _n: None


@dataclass
class ShardRun:
    """What a run of a job did: shards run now and shards found done, with every shard's marker."""

    ran: list[Shard] = field(default_factory=list)
    skipped: list[Shard] = field(default_factory=list)
    markers: dict[Shard, ShardMarker] = field(default_factory=dict)
    seconds: float = 0.0

    def in_order(self) -> list[ShardMarker]:
        """Markers in shard order (by input, then start row): the order outputs are merged in."""
        return [self.markers[s] for s in sorted(self.markers, key=lambda s: (s.job, s.start))]

    def summary(self) -> str:
        """`3 of 12 shards run, 9 already done`."""
        total = len(self.ran) + len(self.skipped)
        return f"{len(self.ran)} of {total} shards run, {len(self.skipped)} already done"


def _key(shard: Shard) -> tuple[str, int, int, str]:
    return (shard.job, shard.start, shard.stop, shard.input_sha256)


def finished(task: ShardTask, holds: Holds) -> ShardMarker | None:
    """The marker of a shard whose marker matches and whose output holds the rows it should; else None."""
    marker = read_marker(task.shard)
    if marker is None:
        return None
    return marker if holds(task, marker) else None


def run_shards(
    executor: Executor,
    job: ShardJob,
    tasks: Sequence[ShardTask],
    holds: Holds,
    track: Track = untracked,
    refresh: Callable[[], None] = lambda: None,
    arrived: Arrived = lambda _task, _marker: None,
) -> ShardRun:
    """Run every task whose shard is not finished, with one progress display over all workers; then check each one
    run (`refresh` first: e.g. re-read a store). `arrived` hears of each finished shard as it finishes (it may raise
    to stop the run).

    A marker that no longer matches, or whose output is gone or corrupt, is removed and its shard run again.
    """
    started = time.monotonic()
    run = ShardRun()
    todo: list[ShardTask] = []
    for task in tasks:
        marker = finished(task, holds)
        if marker is not None:
            run.skipped.append(task.shard)
            run.markers[task.shard] = marker
            arrived(task, marker)
        else:
            task.shard.marker_path.unlink(missing_ok=True)
            todo.append(task)
    by_key = {_key(task.shard): task for task in todo}
    reported: dict[Shard, ShardMarker] = {}

    def done(marker: ShardMarker) -> None:
        task = by_key.get((marker.job, marker.start, marker.stop, marker.input_sha256))
        if task is None or not marker.matches(task.shard):
            raise ShardError(f"{job.name}: a worker returned the marker of another shard ({marker.job})")
        reported[task.shard] = marker
        arrived(task, marker)

    with track(sum(task.units for task in todo)) as progress:
        executor.run(job, todo, done, progress)
    refresh()
    for task in todo:
        marker = reported.get(task.shard)
        if marker is None or not holds(task, marker):
            raise ShardError(
                f"{task.shard.label}: the worker finished but its output does not hold the rows it should "
                f"(is {task.shard.folder} on storage every worker shares?)"
            )
        run.ran.append(task.shard)
        run.markers[task.shard] = marker
    run.seconds = time.monotonic() - started
    return run
