"""Jobs whose shards each write a parquet file of one output row per input item, merged in item order."""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import pyarrow as pa
import pyarrow.parquet as pq

from lookbench.atomic import atomic_path
from lookbench.hashing import file_sha256
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


def map_items(
    executor: Executor,
    job: TableJob,
    folder: Path,
    items: Sequence[Any],
    keys: Sequence[str],
    job_sha256: str,
    shards: int | None,
    rows_per_shard: int,
    track: Track = untracked,
) -> MapResult:
    """Map `items` (identified by `keys`, what their content is) shard by shard; resumed shards are read back."""
    if len(items) != len(keys):
        raise ValueError(f"{len(items)} items but {len(keys)} keys")
    tasks = []
    for start, stop in shard_ranges(len(items), shards, rows_per_shard):
        shard = Shard(job.name, start, stop, text_fingerprint(keys[start:stop]), job_sha256, folder)
        tasks.append(ShardTask(shard, list(items[start:stop]), units=stop - start))
    run = run_shards(executor, job, tasks, table_holds, track)
    rows: list[dict[str, Any]] = []
    for task in tasks:
        table = pq.read_table(task.shard.output_path(), schema=job.schema)
        if table.num_rows != task.shard.rows:
            raise ShardError(f"{task.shard.output_path()}: {table.num_rows} rows, expected {task.shard.rows}")
        rows.extend(table.to_pylist())
    markers = run.in_order()
    return MapResult(rows, summed(m.stats for m in markers), [p for m in markers for p in m.problems], run)


def summed(parts: Iterable[dict[str, float]]) -> dict[str, float]:
    """Counters added up."""
    total: dict[str, float] = {}
    for part in parts:
        for name, value in part.items():
            total[name] = total.get(name, 0) + value
    return total
