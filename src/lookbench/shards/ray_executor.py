"""The Ray executor: shards as Ray actors (models loaded once per GPU or CPU slot) or tasks (HTTP, hashing).

Ray is imported only here, and only when this executor is made (`pip install 'lookbench[ray]'`). A worker process
that dies mid-shard leaves no marker; Ray restarts the actor (or retries the task) and the shard runs again.
"""

from __future__ import annotations

import os
import socket
import time
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any

from lookbench.shards.executor import Progress, ShardError, ShardJob, ShardTask, ShardWorker, slots_per_worker
from lookbench.shards.marker import ShardMarker

POLL_S = 0.25
"""How often the driver collects progress while it waits for shards."""
RETRIES = 2
"""Times Ray restarts a dead actor / retries a task whose worker died (application errors are not retried)."""
RESERVED_CPUS = 1
"""CPU slots actors never take, so tasks that read and hash, and the driver, always get one (ray issue 44687)."""
HTTP_TASK_CPUS = 0.25
"""CPU slot taken by a task that mostly waits on an HTTP endpoint."""
CONNECT_TIMEOUT_S = 10
"""How long the head of a cluster may take to accept a connection before the address is refused."""


def import_ray() -> Any:
    """Ray, or a clear error naming the extra to install."""
    try:
        import ray
    except ImportError as exc:
        raise ShardError("--executor ray needs Ray: pip install 'lookbench[ray]'") from exc
    return ray


def check_reachable(address: str | None) -> None:
    """Refuse a cluster address whose head does not answer, in seconds (Ray itself retries for minutes)."""
    if not address or address in ("auto", "local"):
        return
    host, _, port = address.removeprefix("ray://").rpartition(":")
    if not host or not port.isdigit():
        raise ShardError(f"--ray-address: expected HOST:PORT (or ray://HOST:PORT, auto, local), got {address!r}")
    try:
        connection = socket.create_connection((host.strip("[]"), int(port)), timeout=CONNECT_TIMEOUT_S)
    except OSError as exc:
        raise ShardError(f"--executor ray: no Ray head answers at {address}: {exc}") from exc
    with connection:
        if os.environ.get("RAY_USE_TLS", "0") in ("0", ""):  # a TLS head cannot be asked without its certificates
            _check_grpc(connection, address)


HTTP2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + bytes([0, 0, 0, 4, 0, 0, 0, 0, 0])
"""The client preface and an empty SETTINGS frame (RFC 9113 3.4): a gRPC server answers with its SETTINGS frame."""


def _check_grpc(connection: socket.socket, address: str) -> None:
    """Refuse a listener that is not a gRPC server (Ray's head and client server both are) within the timeout."""
    header = b""
    deadline = time.monotonic() + CONNECT_TIMEOUT_S  # one deadline: a server trickling bytes cannot extend it
    try:
        connection.sendall(HTTP2_PREFACE)
        while len(header) < 9:
            connection.settimeout(max(deadline - time.monotonic(), 0.001))
            chunk = connection.recv(9 - len(header))
            if not chunk:
                break
            header += chunk
    except OSError as exc:
        raise ShardError(f"--executor ray: what listens at {address} is not a Ray head ({exc})") from exc
    if len(header) < 9 or header[3] != 4:
        raise ShardError(
            f"--executor ray: what listens at {address} is not a Ray head (no gRPC answer: "
            f"{header[:9]!r}); give the head's GCS address (default port 6379) or ray://HOST:10001"
        )


class Tally:
    """Progress units reported by workers, taken by the driver (an actor that takes no CPU slot)."""

    def __init__(self) -> None:
        self.count = 0

    def add(self, units: int) -> None:
        """Count units done."""
        self.count += units

    def take(self) -> int:
        """Units counted since the last call."""
        units, self.count = self.count, 0
        return units


class ShardActor:
    """One worker: the job opened once (a model loaded on its GPU), then shard after shard."""

    def __init__(self, job: ShardJob, slots: int) -> None:
        self.worker: ShardWorker | None = None
        self.error: BaseException | None = None
        try:
            self.worker = job.open(slots)
        except Exception as exc:  # raised by `run`, where the driver sees it with its own message
            self.error = exc

    def run(self, task: ShardTask, tally: Any) -> ShardMarker:
        """Run one shard."""
        if self.worker is None:
            assert self.error is not None
            raise self.error
        return self.worker.run(task, lambda units: tally.add.remote(units))


def run_one(job: ShardJob, slots: int, task: ShardTask, tally: Any) -> ShardMarker:
    """A task: open the job, run one shard, close it."""
    worker = job.open(slots)
    try:
        return worker.run(task, lambda units: tally.add.remote(units))
    finally:
        worker.close()


class RayExecutor:
    """Connects to the cluster at `address` (else RAY_ADDRESS, a running local cluster, or a new local one).

    GPU jobs: one actor per GPU. CPU jobs that load a model: one actor per CPU slot but one. Stateless jobs: tasks
    (CPU-bound ones take a slot each; HTTP-bound ones a quarter of one, at most `concurrency` requests in flight in
    all). `processes` caps the workers of any job.
    """

    name = "ray"

    def __init__(self, address: str | None = None, processes: int | None = None) -> None:
        self.ray = import_ray()
        self.address = address
        self.processes = processes
        self.connected_here = False
        if not self.ray.is_initialized():
            check_reachable(address or os.environ.get("RAY_ADDRESS"))
            try:
                self.ray.init(address=address, include_dashboard=False, ignore_reinit_error=True)
            except (ConnectionError, ValueError, RuntimeError) as exc:
                where = address or "RAY_ADDRESS or a local cluster"
                raise ShardError(f"--executor ray: cannot start or reach Ray at {where}: {exc}") from exc
            self.connected_here = True

    def _resources(self) -> tuple[int, int]:
        found = self.ray.cluster_resources()
        return int(found.get("CPU", 0)), int(found.get("GPU", 0))

    def workers(self, job: ShardJob) -> int:
        """GPUs for a GPU job; CPU slots but one for a CPU job; for HTTP, the endpoint's concurrency."""
        cpus, gpus = self._resources()
        kind = job.needs.kind
        if kind == "gpu":
            if gpus == 0:
                raise ShardError(f"{job.name}: the model runs on CUDA but the Ray cluster has no GPU")
            count = gpus
        elif kind == "cpu":
            count = max(1, cpus - RESERVED_CPUS) if job.needs.stateful else max(1, cpus)
        else:
            count = max(1, min(job.needs.concurrency, int(cpus / HTTP_TASK_CPUS)))
        return min(count, self.processes) if self.processes is not None else count

    def describe(self) -> dict[str, Any]:
        """Name, address and cluster resources."""
        cpus, gpus = self._resources()
        return {"executor": self.name, "address": self.address, "cpus": cpus, "gpus": gpus}

    def close(self) -> None:
        """Disconnect (a local cluster started here stops with it)."""
        if self.connected_here and self.ray.is_initialized():
            self.ray.shutdown()
            self.connected_here = False

    def run(
        self, job: ShardJob, tasks: Sequence[ShardTask], done: Callable[[ShardMarker], None], progress: Progress
    ) -> None:
        """Run the tasks on actors (stateful jobs) or as tasks; progress is collected from a tally actor."""
        if not tasks:
            return
        ray = self.ray
        workers = min(self.workers(job), len(tasks))
        slots = slots_per_worker(job.needs, workers)
        tally = ray.remote(num_cpus=0)(Tally).remote()
        try:
            if job.needs.stateful:
                gpus = 1 if job.needs.kind == "gpu" else 0
                actor = ray.remote(num_cpus=1, num_gpus=gpus, max_restarts=RETRIES, max_task_retries=RETRIES)
                pool = [actor(ShardActor).remote(job, slots) for _ in range(workers)]
                try:
                    on_actor = lambda task, index: pool[index].run.remote(task, tally)  # noqa: E731
                    self._drive(tasks, on_actor, workers, tally, done, progress)
                finally:
                    for handle in pool:
                        ray.kill(handle)
            else:
                cpus = HTTP_TASK_CPUS if job.needs.kind == "http" else 1
                remote = ray.remote(num_cpus=cpus, max_retries=RETRIES)(run_one)
                job_ref = ray.put(job)
                as_task = lambda task, _index: remote.remote(job_ref, slots, task, tally)  # noqa: E731
                self._drive(tasks, as_task, workers, tally, done, progress)
        finally:
            ray.kill(tally)

    def _drive(
        self,
        tasks: Sequence[ShardTask],
        submit: Callable[[ShardTask, int], Any],
        workers: int,
        tally: Any,
        done: Callable[[ShardMarker], None],
        progress: Progress,
    ) -> None:
        """Keep each of `workers` slots busy with one shard; on a failure, let running shards finish, then raise."""
        ray = self.ray
        queue = deque(tasks)
        running: dict[Any, tuple[int, ShardTask]] = {}
        for index in range(workers):
            if queue:
                task = queue.popleft()
                running[submit(task, index)] = (index, task)
        failure: BaseException | None = None
        while running:
            ready, _ = ray.wait(list(running), num_returns=1, timeout=POLL_S)
            progress(ray.get(tally.take.remote()))
            for ref in ready:
                index, task = running.pop(ref)
                try:
                    done(ray.get(ref))
                except ray.exceptions.RayTaskError as exc:
                    failure = failure or _cause(exc)
                except (ray.exceptions.RayActorError, ray.exceptions.WorkerCrashedError) as exc:
                    failure = failure or ShardError(
                        f"the Ray worker running {task.shard.label} died, and again on each of its {RETRIES} retries "
                        f"(killed, or out of memory); finished shards are kept: run the command again to redo the "
                        f"others ({first_line(exc)})"
                    )
                except ray.exceptions.RayError as exc:
                    failure = failure or ShardError(f"{task.shard.label}: Ray could not run it: {exc}")
                if failure is None and queue:
                    task = queue.popleft()
                    running[submit(task, index)] = (index, task)
        progress(ray.get(tally.take.remote()))
        if failure is not None:
            raise failure


def first_line(exc: BaseException) -> str:
    """The first line of an exception's message (Ray's span several)."""
    return next(iter(str(exc).splitlines()), type(exc).__name__)


def _cause(exc: Any) -> BaseException:
    """The exception a remote shard raised (a LookBenchError keeps its one-line message)."""
    cause = getattr(exc, "cause", None)
    return cause if isinstance(cause, BaseException) else ShardError(str(exc))
