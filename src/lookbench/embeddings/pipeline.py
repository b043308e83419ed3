"""Run an encoder over images with decoding and preprocessing in worker threads, overlapped with inference."""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from collections import deque
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from lookbench.embeddings.encoder import Encoder
from lookbench.embeddings.reader import BadImageError, decode_image
from lookbench.errors import EmbeddingError

DECODE_NICE = 19
"""Niceness of decoding threads: they take CPU that inference leaves idle (see docs/models.md)."""


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


def prepare(encoder: Encoder, batch: Batch, draft: bool = False) -> Prepared:
    """Decode (and for tensor models preprocess) one batch; runs in a worker thread."""
    pre = encoder.preprocess if encoder.input_kind == "tensor" else None
    draft_size = pre.draft_size if draft and pre is not None else None
    tensor = np.empty((len(batch.data), 3, pre.crop, pre.crop), np.float32) if pre is not None else None
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


def lower_thread_priority(nice: int = DECODE_NICE) -> None:
    """Lower the calling thread's CPU priority; Linux only, where `setpriority` accepts a thread id."""
    if sys.platform != "linux":
        return
    tid = threading.get_native_id()
    with contextlib.suppress(OSError):
        os.setpriority(os.PRIO_PROCESS, tid, max(nice, os.getpriority(os.PRIO_PROCESS, tid)))


def run_pipeline(
    encoder: Encoder,
    batches: Iterable[Batch],
    on_vectors: Callable[[list[int], list[bytes], np.ndarray], None],
    on_bad: Callable[[int, str], None],
    workers: int = 2,
    prefetch: int | None = None,
    draft: bool = False,
) -> None:
    """Embed every batch; `prefetch` batches are decoded ahead of the one being encoded (workers=0: inline).

    Decoding threads run at low priority, so on a machine the encoder keeps busy they use the cycles inference
    leaves idle instead of preempting it. When the next decoded batch is not ready (decoders behind, or starved
    by other load), the calling thread decodes a batch itself at normal priority, so progress never waits on them.
    """
    ahead = max(1, prefetch if prefetch is not None else workers + 1)

    def consume(prepared: Prepared) -> None:
        for row, message in prepared.errors.items():
            on_bad(row, message)
        if not prepared.ok:
            return
        vectors = check_output(encoder.encode(prepared.inputs), len(prepared.ok), encoder.model_id)
        rows = [prepared.batch.rows[i] for i in prepared.ok]
        keys = [prepared.batch.keys[i] for i in prepared.ok]
        on_vectors(rows, keys, vectors)

    pending = iter(batches)
    if workers <= 0:
        for item in pending:
            consume(prepare(encoder, item, draft))
        return
    inflight: deque[Future[Prepared]] = deque()
    with ThreadPoolExecutor(
        max_workers=workers, thread_name_prefix="lookbench-decode", initializer=lower_thread_priority
    ) as pool:
        try:
            while True:
                while len(inflight) <= ahead and (batch := next(pending, None)) is not None:
                    inflight.append(pool.submit(prepare, encoder, batch, draft))
                if not inflight:
                    break
                if not inflight[0].done() and (batch := next(pending, None)) is not None:
                    consume(prepare(encoder, batch, draft))
                    continue
                consume(inflight.popleft().result())
        finally:
            for future in inflight:
                future.cancel()
