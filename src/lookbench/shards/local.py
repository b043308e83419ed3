"""The local executor: shards run in this process, or in worker processes of this machine (one per GPU)."""

from __future__ import annotations

import atexit
import multiprocessing as mp
import os
import queue
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from lookbench.shards.executor import Progress, ShardError, ShardJob, ShardTask, ShardWorker, cuda_devices
from lookbench.shards.executor import slots_per_worker as slots_for
from lookbench.shards.marker import ShardMarker

POLL_S = 0.2
"""How often the driver collects progress from worker processes while it waits."""


class LocalExecutor:
    """`processes` worker processes (spawned, each opening the job once), or this process when one worker is enough.

    Default: one worker per GPU for a GPU job on a machine with several GPUs (each process sees only its own, through
    CUDA_VISIBLE_DEVICES), else this process, which keeps today's single-machine speed and memory.
    """

    name = "local"

    def __init__(self, processes: int | None = None) -> None:
        self.processes = processes
        self._gpus: int | None = None

    def _gpu_count(self) -> int:
        if self._gpus is None:
            self._gpus = cuda_devices()
        return self._gpus

    def workers(self, job: ShardJob) -> int:
        """`processes`, else one per GPU for a GPU job, else 1."""
        if self.processes is not None:
            return self.processes
        return max(1, self._gpu_count()) if job.needs.kind == "gpu" else 1

    def describe(self) -> dict[str, Any]:
        """Name and requested processes."""
        return {"executor": self.name, "processes": self.processes}

    def close(self) -> None:
        """Nothing is kept between runs."""

    def run(
        self, job: ShardJob, tasks: Sequence[ShardTask], done: Callable[[ShardMarker], None], progress: Progress
    ) -> None:
        """Run the tasks here (one worker) or in a pool of worker processes."""
        if not tasks:
            return
        workers = min(self.workers(job), len(tasks))
        pinned = job.needs.kind == "gpu" and self._gpu_count() > 1
        if workers <= 1 and not pinned:
            _run_here(job, tasks, done, progress)
            return
        devices = list(range(self._gpu_count())) if job.needs.kind == "gpu" else []
        _run_in_processes(job, tasks, done, progress, workers, devices)


def _run_here(
    job: ShardJob, tasks: Sequence[ShardTask], done: Callable[[ShardMarker], None], progress: Progress
) -> None:
    worker = job.open(slots_for(job.needs, 1))
    try:
        for task in tasks:
            done(worker.run(task, progress))
    finally:
        worker.close()


# --- worker processes ---------------------------------------------------------------------------------------------

_worker: dict[str, Any] = {}
"""This worker process's opened job, its progress queue, or the error opening it raised."""


def _start_worker(job: ShardJob, slots: int, devices: Any, ticks: Any) -> None:
    """Pool initializer: pin this process to its GPU (before CUDA starts), then open the job once."""
    device = devices.get()
    if device is not None:
        os.environ["CUDA_VISIBLE_DEVICES"] = str(device)
    _worker["ticks"] = ticks
    try:
        opened: ShardWorker = job.open(slots)
    except BaseException as exc:  # raised again by every task, so the driver sees why instead of a broken pool
        _worker["error"] = exc
        return
    _worker["job"] = opened
    atexit.register(opened.close)


def _run_task(task: ShardTask) -> ShardMarker:
    error = _worker.get("error")
    if error is not None:
        raise error
    ticks = _worker["ticks"]
    return _worker["job"].run(task, ticks.put)  # type: ignore[no-any-return]


def _drain(ticks: Any, progress: Progress) -> None:
    total = 0
    while True:
        try:
            total += ticks.get_nowait()
        except queue.Empty:
            break
    if total:
        progress(total)


def _run_in_processes(
    job: ShardJob,
    tasks: Sequence[ShardTask],
    done: Callable[[ShardMarker], None],
    progress: Progress,
    workers: int,
    devices: list[int],
) -> None:
    context = mp.get_context("spawn")  # fork would copy loaded models, threads and CUDA state
    device_queue = context.Queue()
    for index in range(workers):
        device_queue.put(devices[index % len(devices)] if devices else None)
    ticks = context.Queue()
    slots = slots_for(job.needs, workers)
    pool = ProcessPoolExecutor(
        max_workers=workers, mp_context=context, initializer=_start_worker, initargs=(job, slots, device_queue, ticks)
    )
    futures: dict[Future[ShardMarker], ShardTask] = {pool.submit(_run_task, task): task for task in tasks}
    pending = set(futures)
    failure: BaseException | None = None
    try:
        while pending:
            finished, pending = wait(pending, timeout=POLL_S, return_when=FIRST_COMPLETED)
            _drain(ticks, progress)
            for future in sorted(finished, key=lambda f: futures[f].shard.start):
                try:
                    done(future.result())
                except BrokenProcessPool as exc:
                    raise ShardError(
                        f"a worker process died while running {futures[future].shard.label} (killed, or out of "
                        "memory); finished shards are kept: run the command again to redo the others"
                    ) from exc
                except BaseException as exc:
                    if failure is None:
                        failure = exc
                        for other in pending:  # shards not started yet are left for the next run
                            other.cancel()
        _drain(ticks, progress)
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    if failure is not None:
        raise failure
