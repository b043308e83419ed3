"""Jobs whose shards each write a parquet file of one output row per input item, merged in item order."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import pyarrow as pa
import pyarrow.parquet as pq

from lookbench._util.atomic import atomic_path
from lookbench._util.hashing import file_sha256
from lookbench.shards.executor import Executor, Needs, Progress, ShardError, ShardTask
from lookbench.shards.marker import ShardMarker, new_marker, write_marker
from lookbench.shards.plan import Shard, shard_ranges, text_fingerprint
from lookbench.shards.runner import ShardRun, Track, run_shards, untracked


@dataclass
class Mapped:
    """A shard's output rows (one per item, in item order), the items left out and why, its counters and problems."""

    rows: list[dict[str, Any]]
    bad: dict[int, str] = field(default_factory=dict)
    stats: dict[str, float] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)


class RowFunction(Protocol):
    """An opened mapper: a shard's items in, its `Mapped` rows out."""

    def __call__(self, items: list[Any], progress: Progress, /) -> Mapped:
        """Map the items of one shard."""
        ...

    def close(self) -> None:
        """Release clients and models."""
        ...


class RowMapper(Protocol):
    """Picklable: what to do to each item; opened once per worker (`slots`: its share of an endpoint's requests)."""

    def open(self, slots: int) -> RowFunction:
        """Load what mapping needs."""
        ...


@dataclass(frozen=True)
class TableJob:
    """Items -> rows of `schema`, written as `<shard>.parquet` beside its marker."""

    name: str
    needs: Needs
    schema: pa.Schema
    mapper: RowMapper

    def open(self, slots: int) -> TableWorker:
        """Open the mapper in this worker."""
        return TableWorker(self, self.mapper.open(slots))


class TableWorker:
    """Runs shards of a TableJob: map, write the parquet file atomically, then the marker."""

    def __init__(self, job: TableJob, function: RowFunction) -> None:
        self.job = job
        self.function = function

    def run(self, task: ShardTask, progress: Progress) -> ShardMarker:
        """Map the shard's items and write its output, then its marker."""
        started = time.monotonic()
        shard = task.shard
        mapped = self.function(list(task.payload), progress)
        if len(mapped.rows) != shard.rows:
            raise ShardError(f"{shard.label}: {len(mapped.rows)} output rows for {shard.rows} items")
        path = shard.output_path()
        with atomic_path(path) as tmp:
            pq.write_table(pa.Table.from_pylist(mapped.rows, schema=self.job.schema), tmp, compression="zstd")
        marker = new_marker(
            shard,
            len(mapped.rows),
            output_sha256=file_sha256(path),
            bad=mapped.bad,
            stats=mapped.stats,
            problems=mapped.problems,
            seconds=round(time.monotonic() - started, 3),
        )
        return write_marker(shard, marker)

    def close(self) -> None:
        """Close the mapper."""
        self.function.close()


def table_holds(task: ShardTask, marker: ShardMarker) -> bool:
    """The output file is there, unchanged since its marker was written, with a row per item."""
    path = task.shard.output_path()
    try:
        return marker.output_rows == task.shard.rows and file_sha256(path) == marker.output_sha256
    except OSError:
        return False


@dataclass
class MapResult:
    """Every item's output row in item order, the counters summed over shards, the problems, and the run."""

    rows: list[dict[str, Any]]
    stats: dict[str, float]
    problems: list[str]
    run: ShardRun


@dataclass(frozen=True)
class TableItems:
    """A table job's items (identified by `keys`, what their content is) and where and how its shards are cut."""

    job: TableJob
    folder: Path
    items: Sequence[Any]
    keys: Sequence[str]
    job_sha256: str
    shards: int | None
    rows_per_shard: int

    def tasks(self) -> list[ShardTask]:
        """The items cut into shards in item order."""
        if len(self.items) != len(self.keys):
            raise ValueError(f"{len(self.items)} items but {len(self.keys)} keys")
        tasks = []
        for start, stop in shard_ranges(len(self.items), self.shards, self.rows_per_shard):
            shard = Shard(
                self.job.name, start, stop, text_fingerprint(self.keys[start:stop]), self.job_sha256, self.folder
            )
            tasks.append(ShardTask(shard, list(self.items[start:stop]), units=stop - start))
        return tasks


def shard_rows(task: ShardTask, schema: pa.Schema) -> list[dict[str, Any]]:
    """A finished shard's output rows, one per item (ShardError naming the file if it holds another count)."""
    table = pq.read_table(task.shard.output_path(), schema=schema)
    if table.num_rows != task.shard.rows:
        raise ShardError(f"{task.shard.output_path()}: {table.num_rows} rows, expected {task.shard.rows}")
    return table.to_pylist()  # type: ignore[no-any-return]


def map_items(executor: Executor, work: TableItems, track: Track = untracked) -> MapResult:
    """Map the items shard by shard; resumed shards are read back."""
    tasks = work.tasks()
    run = run_shards(executor, work.job, tasks, table_holds, track)
    rows = [row for task in tasks for row in shard_rows(task, work.job.schema)]
    markers = run.in_order()
    return MapResult(rows, summed(m.stats for m in markers), [p for m in markers for p in m.problems], run)


class RowStream:
    """Every item's output row in item order, each shard's rows handed out as soon as that shard is finished, while
    the executor runs the later shards in a background thread of this process.

    The rows are the ones `map_items` returns, in the same order: a shard's rows are read only once its marker is
    in, from its output file checked against the marker. A failed run (a shard's error, a worker that died) is
    raised to the reader when it reaches a row it cannot have; `close` (or leaving the `with` block) stops the run
    after the shards already running, which keep their markers.
    """

    def __init__(self, executor: Executor, work: TableItems, track: Track = untracked) -> None:
        self.job = work.job
        self.tasks = work.tasks()
        self.run: ShardRun | None = None
        """The finished run (None until every shard is in)."""
        self._markers: dict[int, ShardMarker] = {}
        self._changed = threading.Condition()
        self._error: BaseException | None = None
        self._started = self._over = self._closing = False
        self._thread = threading.Thread(
            target=self._work, args=(executor, track), name=f"shards-{work.job.name}", daemon=True
        )

    def __enter__(self) -> RowStream:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def _arrived(self, task: ShardTask, marker: ShardMarker) -> None:
        if self._closing:
            raise ShardError(f"{self.job.name}: stopped, its rows are no longer read")
        with self._changed:
            self._markers[task.shard.start] = marker
            self._changed.notify_all()

    def _work(self, executor: Executor, track: Track) -> None:
        try:
            self.run = run_shards(executor, self.job, self.tasks, table_holds, track, arrived=self._arrived)
        except BaseException as exc:  # handed to the reader, in its thread
            self._error = exc
        finally:
            with self._changed:
                self._over = True
                self._changed.notify_all()

    def _marker(self, task: ShardTask) -> ShardMarker:
        with self._changed:
            while task.shard.start not in self._markers and self._error is None and not self._over:
                self._changed.wait()
            marker = self._markers.get(task.shard.start)
        if marker is not None:
            return marker
        if self._error is not None:
            raise self._error
        raise ShardError(f"{task.shard.label}: the run ended without this shard")

    def __iter__(self) -> Iterator[dict[str, Any]]:
        """The rows, item by item; blocks until the shard of the next one is finished."""
        if not self._started:
            self._started = True
            self._thread.start()
        for task in self.tasks:
            marker = self._marker(task)
            if not table_holds(task, marker):
                raise ShardError(f"{task.shard.output_path()}: changed since its marker was written; run again")
            yield from shard_rows(task, self.job.schema)
        self._thread.join()
        if self._error is not None:
            raise self._error

    def close(self) -> None:
        """Stop the run (after the shards already running) and wait for its thread."""
        self._closing = True
        if self._thread.is_alive():
            self._thread.join()


def summed(parts: Iterable[dict[str, float]]) -> dict[str, float]:
    """Counters added up."""
    total: dict[str, float] = {}
    for part in parts:
        for name, value in part.items():
            total[name] = total.get(name, 0) + value
    return total
