"""The Executor seam: what a sharded job is, what it needs of a worker, and how an executor is chosen."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol, get_args

from lookbench._util.limits import MAX_PROCESSES, MAX_SHARDS, check_count
from lookbench._util.optional import loaded_torch
from lookbench.errors import LookBenchError
from lookbench.shards.marker import ShardMarker
from lookbench.shards.plan import Shard

Kind = Literal["cpu", "gpu", "http"]
ExecutorName = Literal["local", "ray"]
EXECUTORS: tuple[str, ...] = get_args(ExecutorName)
Progress = Callable[[int], None]


class ShardError(LookBenchError):
    """A shard could not be run, or finished without the output it should hold."""


@dataclass(frozen=True)
class Needs:
    """What one worker of a job takes: `gpu` (a whole GPU), `cpu` (a core), or `http` (a share of an endpoint).

    `stateful` jobs load something heavy (a model) once per worker and run many shards on it: actors on Ray.
    Stateless ones open per shard: tasks on Ray. An `http` job's workers together keep at most `concurrency`
    requests in flight at `endpoint`.
    """

    kind: Kind
    stateful: bool = False
    concurrency: int = 1
    endpoint: str = ""


@dataclass(frozen=True)
class ShardTask:
    """A shard and what its worker needs to run it (rows to do, items, ...), sent to the worker as is."""

    shard: Shard
    payload: Any = None
    units: int = 0
    """Progress units (images, items) it will report."""


class ShardWorker(Protocol):
    """An opened job in one worker: runs shards one after another; each writes its output, then its marker."""

    def run(self, task: ShardTask, progress: Progress) -> ShardMarker:
        """Do the shard's work and return the marker it wrote."""
        ...

    def close(self) -> None:
        """Release what `open` took."""
        ...


class ShardJob(Protocol):
    """A picklable description of the work, sent to every worker, which opens it once."""

    @property
    def name(self) -> str:
        """What messages call it."""
        ...

    @property
    def needs(self) -> Needs:
        """What one of its workers takes."""
        ...

    def open(self, slots: int) -> ShardWorker:
        """Load what the work needs (a model, a client with `slots` concurrent requests)."""
        ...


class Executor(Protocol):
    """Runs the tasks of a job on its workers, reporting each finished shard's marker and progress to the driver."""

    name: str

    def workers(self, job: ShardJob) -> int:
        """How many workers would run this job at once."""
        ...

    def run(
        self, job: ShardJob, tasks: Sequence[ShardTask], done: Callable[[ShardMarker], None], progress: Progress
    ) -> None:
        """Run every task; `done(marker)` in the driver as each shard finishes. A failed shard raises once the
        shards already running have finished (their markers are kept)."""
        ...

    def describe(self) -> dict[str, Any]:
        """Name and workers, for logs and result files."""
        ...

    def close(self) -> None:
        """Stop the workers (and a cluster it started itself)."""
        ...


def slots_per_worker(needs: Needs, workers: int) -> int:
    """An http job's requests in flight per worker, so that all workers together stay within the endpoint's limit."""
    if needs.kind != "http":
        return 1
    return max(1, needs.concurrency // max(1, workers))


def cuda_devices() -> int:
    """CUDA devices this process sees (0 when torch is not loaded: only a torch model on CUDA needs them)."""
    torch: Any = loaded_torch()
    if torch is None:
        return 0
    try:
        return int(torch.cuda.device_count()) if torch.cuda.is_available() else 0
    except RuntimeError:
        return 0


def check_options(name: str, processes: int | None, address: str | None, shards: int | None) -> None:
    """The command-line options of sharded work, checked before anything runs."""
    if name not in EXECUTORS:
        raise LookBenchError(f"--executor: expected one of {', '.join(EXECUTORS)}, got {name!r}")
    if processes is not None and processes < 1:
        raise LookBenchError(f"--processes: expected a positive number, got {processes}")
    if shards is not None and shards < 1:
        raise LookBenchError(f"--shards: expected a positive number, got {shards}")
    check_count("--processes", processes or 1, MAX_PROCESSES, low=1)
    check_count("--shards", shards or 1, MAX_SHARDS, low=1)
    if address is not None and name != "ray":
        raise LookBenchError("--ray-address applies to --executor ray")
