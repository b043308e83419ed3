"""Run an encoder over images with decoding and preprocessing in worker threads, overlapped with inference."""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from lookbench._util.cores import usable_cores
from lookbench._util.images import BadImageError, decode_image
from lookbench.embeddings.device_decode import DeviceDecoder
from lookbench.errors import EmbeddingError
from lookbench.models.encoder import Encoder

DECODE_NICE = 19
"""Niceness of decoding threads on an otherwise idle machine: they take CPU that inference leaves idle (see
docs/models.md)."""


@dataclass
class Batch:
    """Rows of a split to embed, with their cache keys and encoded bytes."""

    rows: list[int]
    keys: list[bytes]
    data: list[bytes | None]


@dataclass
class Prepared:
    """A batch after decoding: model inputs for the rows that decoded, messages for those that did not."""

    batch: Batch
    inputs: Any
    ok: list[int]
    errors: dict[int, str] = field(default_factory=dict)


def prepare(encoder: Encoder, batch: Batch, draft: bool = False, decoder: DeviceDecoder | None = None) -> Prepared:
    """Decode (and for tensor models preprocess) one batch; runs in a worker thread.

    With a `decoder` the batch is decoded on the model's device; otherwise on the CPU, into the encoder's
    `host_batch` buffer when it has one (pinned memory for CUDA models).
    """
    if decoder is not None:
        on_device, decoded, failed = decoder.decode(batch.data)
        return Prepared(batch, on_device, decoded, {batch.rows[i]: message for i, message in failed.items()})
    pre = encoder.preprocess if encoder.input_kind == "tensor" else None
    draft_size = pre.draft_size if draft and pre is not None else None
    tensor: np.ndarray | None = None
    if pre is not None:
        tensor = encoder.host_batch(len(batch.data))
        if tensor is None:
            tensor = np.empty((len(batch.data), 3, pre.crop, pre.crop), np.float32)
    inputs: list[Any] = []
    ok: list[int] = []
    errors: dict[int, str] = {}
    for i, data in enumerate(batch.data):
        try:
            image = decode_image(data, draft_size)
            if pre is not None and tensor is not None:
                pre.into(image, tensor[len(ok)])
            else:
                inputs.append(image if encoder.input_kind == "image" else data)
            ok.append(i)
        except (BadImageError, ValueError) as exc:
            errors[batch.rows[i]] = str(exc)
    return Prepared(batch, tensor[: len(ok)] if tensor is not None else inputs, ok, errors)


def check_output(vectors: Any, expected: int, model_id: str) -> np.ndarray:
    """An encoder's output as a (n, dim) float array, or a clear error."""
    array = np.asarray(vectors)
    if array.ndim != 2 or array.shape[0] != expected or not np.issubdtype(array.dtype, np.floating):
        raise EmbeddingError(
            f"{model_id}: encoder returned {array.dtype} {array.shape}, expected ({expected}, dim) floats"
        )
    return array.astype(np.float32, copy=False)


def other_runnable_tasks(samples: int = 5, interval: float = 0.01) -> int | None:
    """Median count of runnable tasks on the machine besides the caller (Linux /proc/loadavg), else None."""
    counts = []
    for i in range(samples):
        try:
            running = Path("/proc/loadavg").read_text().split()[3].split("/")[0]
            counts.append(int(running) - 1)
        except (OSError, IndexError, ValueError):
            return None
        if i + 1 < samples:
            time.sleep(interval)
    return sorted(counts)[len(counts) // 2]


def decode_nice(cores: int | None = None) -> int:
    """Niceness for decoding threads: DECODE_NICE when no other work competes for the cores, else 0 (the caller's).

    At nice 19 decoders starve behind other processes' threads on a busy machine (end to end fell to 0.13-0.64 of
    model only at load 9); on a quiet one they only yield to inference, which is what they are lowered for.
    """
    others = other_runnable_tasks()
    if others is None:
        return 0
    return DECODE_NICE if others < (cores if cores is not None else usable_cores()) else 0


def lower_thread_priority(nice: int = DECODE_NICE) -> None:
    """Lower the calling thread's CPU priority; Linux only, where `setpriority` accepts a thread id."""
    if sys.platform != "linux":
        return
    tid = threading.get_native_id()
    with contextlib.suppress(OSError):
        os.setpriority(os.PRIO_PROCESS, tid, max(nice, os.getpriority(os.PRIO_PROCESS, tid)))


class _Writer:
    """Runs `on_vectors` (cache writes, progress) in one background thread, in order, off the encoder's path;
    the first error it meets is raised in the calling thread."""

    def __init__(self, on_vectors: Callable[[list[int], list[bytes], np.ndarray], None]) -> None:
        self.on_vectors = on_vectors
        self.pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="lookbench-write")
        self.pending: deque[Future[None]] = deque()

    def put(self, rows: list[int], keys: list[bytes], vectors: np.ndarray) -> None:
        self.pending.append(self.pool.submit(self.on_vectors, rows, keys, vectors))
        while self.pending and self.pending[0].done():
            self.pending.popleft().result()

    def close(self) -> None:
        """Wait for every write; raise the first error."""
        try:
            while self.pending:
                self.pending.popleft().result()
        finally:
            self.pool.shutdown(wait=True)


def run_pipeline(
    encoder: Encoder,
    batches: Iterable[Batch],
    on_vectors: Callable[[list[int], list[bytes], np.ndarray], None],
    on_bad: Callable[[int, str], None],
    workers: int = 2,
    prefetch: int | None = None,
    draft: bool = False,
    decoder: DeviceDecoder | None = None,
) -> None:
    """Embed every batch; `prefetch` batches are decoded ahead of the one being encoded (workers=0: inline).

    On a machine where nothing else competes for the cores, decoding threads run at low priority, so they use
    the cycles inference leaves idle instead of preempting it; on a busy one they keep the caller's priority.
    When the next decoded batch is not ready (decoders behind, or starved by other load), the calling thread
    decodes a batch itself, so progress never waits on them. Batch i+1 is submitted before batch i's vectors are
    collected (an asynchronous encoder keeps working while they come back), and `on_vectors` runs in a writer
    thread.
    """
    ahead = max(1, prefetch if prefetch is not None else workers + 1)
    writer = _Writer(on_vectors)
    encoding: deque[tuple[Prepared, Callable[[], np.ndarray]]] = deque()

    def collect() -> None:
        prepared, result = encoding.popleft()
        vectors = check_output(result(), len(prepared.ok), encoder.model_id)
        rows = [prepared.batch.rows[i] for i in prepared.ok]
        keys = [prepared.batch.keys[i] for i in prepared.ok]
        writer.put(rows, keys, vectors)

    def consume(prepared: Prepared) -> None:
        for row, message in prepared.errors.items():
            on_bad(row, message)
        if prepared.ok:
            encoding.append((prepared, encoder.submit(prepared.inputs)))
        while len(encoding) > 1:
            collect()

    def decode(batch: Batch) -> Prepared:
        return prepare(encoder, batch, draft, decoder)

    pending = iter(batches)
    try:
        if workers <= 0:
            for item in pending:
                consume(decode(item))
        else:
            _decode_ahead(pending, decode, consume, workers, ahead)
        while encoding:
            collect()
    except BaseException:
        with contextlib.suppress(Exception):  # keep what was already encoded: an interrupted run resumes after it
            while encoding:
                collect()
        raise
    finally:
        writer.close()


def _decode_ahead(
    pending: Iterator[Batch],
    decode: Callable[[Batch], Prepared],
    consume: Callable[[Prepared], None],
    workers: int,
    ahead: int,
) -> None:
    """Keep `ahead` batches decoding in worker threads (low priority on an idle machine); consume them in order."""
    inflight: deque[Future[Prepared]] = deque()
    nice = decode_nice()
    with ThreadPoolExecutor(
        max_workers=workers, thread_name_prefix="lookbench-decode", initializer=lower_thread_priority, initargs=(nice,)
    ) as pool:
        try:
            while True:
                while len(inflight) <= ahead and (batch := next(pending, None)) is not None:
                    inflight.append(pool.submit(decode, batch))
                if not inflight:
                    break
                if not inflight[0].done() and (batch := next(pending, None)) is not None:
                    consume(decode(batch))
                    continue
                consume(inflight.popleft().result())
        finally:
            for future in inflight:
                future.cancel()
