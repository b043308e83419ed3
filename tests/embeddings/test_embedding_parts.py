"""Reader, mapper and cache store: the parts of the embedding pipeline."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from lookbench._util.images import BadImageError, decode_image
from lookbench.embeddings import pipeline
from lookbench.embeddings.pipeline import DECODE_NICE, Batch, Prepared, decode_nice, lower_thread_priority
from lookbench.embeddings.store import EmbeddingStore, model_key
from lookbench.errors import EmbeddingError
from lookbench.models.encoder import Encoder, EncoderBase
from lookbench.models.preprocess import Preprocess


def _encoded(image: Image.Image, fmt: str = "PNG") -> bytes:
    buf = io.BytesIO()
    image.save(buf, format=fmt)
    return buf.getvalue()


def test_decode_rgba_on_white_and_errors() -> None:
    transparent = Image.new("RGBA", (4, 4), (0, 0, 0, 0))
    assert decode_image(_encoded(transparent)).getpixel((0, 0)) == (255, 255, 255)
    assert decode_image(_encoded(Image.new("L", (3, 5), 7), "JPEG")).mode == "RGB"
    with pytest.raises(BadImageError, match="no bytes"):
        decode_image(None)
    with pytest.raises(BadImageError, match="does not decode"):
        decode_image(b"not an image at all")
    with pytest.raises(BadImageError):
        decode_image(_encoded(Image.new("RGB", (64, 64)), "JPEG")[:40])


@pytest.mark.parametrize("mode", ["shortest", "squash", "longest"])
def test_preprocess_shapes(mode: str) -> None:
    pre = Preprocess(crop=16, resize=20, resize_mode=mode)  # type: ignore[arg-type]
    out = pre.batch([Image.new("RGB", (40, 10)), Image.new("RGB", (7, 30))])
    assert out.shape == (2, 3, 16, 16) and out.dtype == np.float32


def test_preprocess_normalises_exactly_once() -> None:
    mean, std = (0.25, 0.5, 0.75), (0.5, 0.25, 0.125)
    pre = Preprocess(crop=4, mean=mean, std=std)
    pixel = tuple(round(m * 255) for m in mean)
    out = pre(Image.new("RGB", (6, 6), pixel))
    assert np.abs(out).max() < 0.05
    white = pre(Image.new("RGB", (6, 6), (255, 255, 255)))
    assert np.allclose(white[:, 0, 0], [(1 - m) / s for m, s in zip(mean, std, strict=True)], atol=1e-5)


def test_preprocess_fingerprint_changes_with_fields() -> None:
    assert Preprocess(crop=224).fingerprint() == Preprocess(crop=224).fingerprint()
    assert Preprocess(crop=224).fingerprint() != Preprocess(crop=224, interpolation="bilinear").fingerprint()
    assert model_key("m", "r1", "p", "float32") != model_key("m", "r2", "p", "float32")


def _keys(n: int, start: int = 0) -> list[bytes]:
    return [i.to_bytes(32, "big") for i in range(start, start + n)]


def test_store_roundtrip_chunks_and_dtype(tmp_path: Path) -> None:
    store = EmbeddingStore(tmp_path, {"model_id": "m"}, dtype="float16", chunk_rows=4)
    vectors = np.arange(30, dtype=np.float32).reshape(10, 3)
    store.add(_keys(10), vectors)
    assert len(list(tmp_path.glob("chunk-*.npz"))) == 1
    store.flush()
    reopened = EmbeddingStore(tmp_path, {"model_id": "m"}, dtype="float16")
    assert len(reopened) == 10 and reopened.get(_keys(1, 7)[0]).dtype == np.float16
    assert np.array_equal(reopened.get(_keys(1, 7)[0]), vectors[7].astype(np.float16))
    assert reopened.get(_keys(1, 99)[0]) is None
    assert not list(tmp_path.glob(".*.tmp"))


def test_store_gathers_rows_across_chunks(tmp_path: Path) -> None:
    store = EmbeddingStore(tmp_path, {"model_id": "m"}, chunk_rows=4)
    vectors = np.arange(33, dtype=np.float32).reshape(11, 3)
    for start in (0, 4, 8):
        store.add(_keys(min(4, 11 - start), start), vectors[start : start + 4])
    store.add(_keys(2, 3) + _keys(1, 3), np.full((3, 3), -1.0))  # known keys (even twice) keep their first vectors
    store.flush()
    reopened = EmbeddingStore(tmp_path, {"model_id": "m"})
    assert len(list(tmp_path.glob("chunk-*.npz"))) == 3 and len(reopened) == 11 and reopened.dim == 3
    keys: list[bytes | None] = [*_keys(1, 9), None, *_keys(1, 50), *_keys(1, 0), *_keys(1, 9), *_keys(1, 4)]
    rows = reopened.rows_of(keys)
    assert list(rows < 0) == [False, True, True, False, False, False]
    np.testing.assert_array_equal(reopened.gather(rows), vectors[[9, 0, 0, 0, 9, 4]] * [[1], [0], [0], [1], [1], [1]])


@pytest.mark.parametrize("damage", ["truncate", "flip"])
def test_store_drops_corrupt_chunks(tmp_path: Path, damage: str) -> None:
    store = EmbeddingStore(tmp_path, {}, chunk_rows=5)
    store.add(_keys(5), np.ones((5, 2)))
    store.add(_keys(5, 5), np.full((5, 2), 2.0))
    chunks = sorted(tmp_path.glob("chunk-*.npz"), key=lambda p: p.stat().st_mtime_ns)
    data = bytearray(chunks[0].read_bytes())
    if damage == "truncate":
        data = data[: len(data) // 2]
    else:
        at = data.rfind(b"\x00\x00\x80?")  # a float32 1.0 inside the vectors
        data[at + 3] = 0x40
    chunks[0].write_bytes(bytes(data))
    reopened = EmbeddingStore(tmp_path, {})
    assert len(reopened.corrupt) == 1 and not chunks[0].exists()
    assert len(reopened) == 5


def test_jpeg_draft_decodes_at_reduced_scale() -> None:
    rng = np.random.default_rng(0)
    big = Image.fromarray(rng.integers(0, 256, size=(1200, 800, 3), dtype=np.uint8))
    data = _encoded(big, "JPEG")
    full, drafted = decode_image(data), decode_image(data, draft=256)
    assert full.size == (800, 1200) and drafted.size == (400, 600)
    assert decode_image(_encoded(big.resize((300, 450)), "JPEG"), draft=256).size == (300, 450)
    assert decode_image(_encoded(big), draft=256).size == (800, 1200)  # PNG: no draft mode


class _Mean(EncoderBase):
    """A tensor encoder whose vector is the per-channel mean of the preprocessed image."""

    input_kind = "tensor"
    model_id = "test:mean"
    revision = "1"
    preprocess = Preprocess(crop=8)

    def encode(self, batch: np.ndarray) -> np.ndarray:
        return batch.mean(axis=(2, 3))

    def describe(self) -> dict[str, str]:
        return {}


def _pipeline_batches(count: int, size: int) -> list[Batch]:
    batches = []
    for b in range(count):
        rows = list(range(b * size, (b + 1) * size))
        data = [_encoded(Image.new("RGB", (12, 12), (r % 256, 7, 9))) for r in rows]
        batches.append(Batch(rows, [r.to_bytes(4, "big") for r in rows], list(data)))
    return batches


@pytest.mark.skipif(sys.platform != "linux", reason="per-thread priority is Linux-only")
def test_decode_threads_run_at_low_priority() -> None:
    seen: list[int] = []

    def probe() -> None:
        lower_thread_priority()
        seen.append(os.getpriority(os.PRIO_PROCESS, threading.get_native_id()))

    thread = threading.Thread(target=probe)
    thread.start()
    thread.join()
    assert seen == [DECODE_NICE]
    assert os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) < DECODE_NICE


@pytest.mark.skipif(sys.platform != "linux", reason="counts runnable tasks in /proc/loadavg")
def test_decode_threads_keep_caller_priority_on_a_busy_machine() -> None:
    loop = "import time\nend = time.monotonic() + 20\nwhile time.monotonic() < end:\n    pass\n"
    spinners = [subprocess.Popen([sys.executable, "-c", loop]) for _ in range(3)]
    try:
        time.sleep(0.5)
        assert decode_nice(cores=2) == 0
    finally:
        for spinner in spinners:
            spinner.kill()
            spinner.wait()


def test_pipeline_decodes_inline_when_workers_are_starved(monkeypatch: pytest.MonkeyPatch) -> None:
    release = threading.Event()
    prepared_by: list[str] = []
    original = pipeline.prepare

    def slow_in_workers(encoder: Encoder, batch: Batch, draft: bool = False, decoder: None = None) -> Prepared:
        if threading.current_thread().name.startswith("lookbench-decode"):
            assert release.wait(30), "the workers were never released"
        prepared_by.append(threading.current_thread().name)
        return original(encoder, batch, draft, decoder)

    monkeypatch.setattr(pipeline, "prepare", slow_in_workers)
    embedded: dict[int, np.ndarray] = {}

    def on_vectors(rows: list[int], keys: list[bytes], vectors: np.ndarray) -> None:
        for row, vector in zip(rows, vectors, strict=True):
            assert row not in embedded, f"row {row} embedded twice"
            embedded[row] = vector
        if len(embedded) >= 9:
            release.set()

    pipeline.run_pipeline(_Mean(), _pipeline_batches(8, 3), on_vectors, lambda r, m: None, workers=2, prefetch=2)
    assert sorted(embedded) == list(range(24))
    # The first three batches were decoded by the calling thread while both workers were stuck.
    assert prepared_by[:3] == ["MainThread"] * 3
    expected = _Mean().preprocess.batch([decode_image(_encoded(Image.new("RGB", (12, 12), (5, 7, 9))))])
    assert np.allclose(embedded[5], expected.mean(axis=(2, 3))[0])


class _Queued(_Mean):
    """An asynchronous encoder: `submit` records the order, vectors come back only when asked for."""

    def __init__(self) -> None:
        self.events: list[str] = []

    def submit(self, batch: np.ndarray) -> Callable[[], np.ndarray]:
        n = len(self.events)
        self.events.append(f"submit {n}")
        vectors = self.encode(batch)

        def result() -> np.ndarray:
            self.events.append(f"collect {n}")
            return vectors

        return result


def test_pipeline_submits_the_next_batch_before_collecting_and_writes_in_a_thread() -> None:
    encoder = _Queued()
    writers: set[str] = set()
    embedded: list[int] = []

    def on_vectors(rows: list[int], keys: list[bytes], vectors: np.ndarray) -> None:
        writers.add(threading.current_thread().name)
        embedded.extend(rows)

    pipeline.run_pipeline(encoder, _pipeline_batches(3, 2), on_vectors, lambda r, m: None, workers=0)
    assert [e for e in encoder.events if e.startswith(("submit", "collect"))][:3] == [
        "submit 0",
        "submit 1",
        "collect 0",
    ]
    assert sorted(embedded) == list(range(6)) and all(name.startswith("lookbench-write") for name in writers)


def test_pipeline_raises_the_writers_error_and_keeps_earlier_vectors() -> None:
    written: list[int] = []

    def on_vectors(rows: list[int], keys: list[bytes], vectors: np.ndarray) -> None:
        if rows[0] >= 4:
            raise EmbeddingError("dimension changed")
        written.extend(rows)

    with pytest.raises(EmbeddingError, match="dimension changed"):
        pipeline.run_pipeline(_Mean(), _pipeline_batches(4, 2), on_vectors, lambda r, m: None, workers=2)
    assert written == [0, 1, 2, 3]
