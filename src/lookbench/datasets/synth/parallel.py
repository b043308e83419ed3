"""An ordered, bounded map over worker processes: results come back in task order, few tasks in flight."""

from __future__ import annotations

import multiprocessing
import os
from collections import deque
from collections.abc import Callable, Generator, Iterable
from concurrent.futures import Future, ProcessPoolExecutor
from typing import Any, TypeVar

T = TypeVar("T")
R = TypeVar("R")


def available_cpus() -> int:
    """CPUs this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def ordered_map(
    fn: Callable[[T], R],
    tasks: Iterable[T],
    workers: int,
    initializer: Callable[..., Any] | None = None,
    initargs: tuple[Any, ...] = (),
    window: int | None = None,
) -> Generator[R, None, None]:
    """`map(fn, tasks)` over `workers` processes (inline when `workers` <= 1), keeping at most `window` tasks
    in flight so memory stays bounded; results are yielded in task order, so output never depends on timing."""
    if workers <= 1:
        if initializer is not None:
            initializer(*initargs)
        for task in tasks:
            yield fn(task)
        return
    limit = window or 3 * workers
    context = multiprocessing.get_context("forkserver")
    pool = ProcessPoolExecutor(workers, mp_context=context, initializer=initializer, initargs=initargs)
    pending: deque[Future[R]] = deque()
    source = iter(tasks)
    try:
        for task in source:
            pending.append(pool.submit(fn, task))
            if len(pending) >= limit:
                break
        while pending:
            result = pending.popleft().result()
            for task in source:
                pending.append(pool.submit(fn, task))
                break
            yield result
    finally:
        for future in pending:
            future.cancel()
        pool.shutdown(wait=True, cancel_futures=True)
