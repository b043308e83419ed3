"""What the dedup scripts share: image edits, a published snapshot's images, synthetic codes, the search model of
`scale.py --extrapolate`, and a timed run of the dedup stage on a batch made from a snapshot."""

from __future__ import annotations

import io
import json
import resource
import time
from collections.abc import Callable, Iterator
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import numpy as np
import pyarrow as pa
from PIL import Image, ImageEnhance, ImageOps

from lookbench._util.hashing import file_sha256
from lookbench._util.images import decode_image
from lookbench.release.config import DedupConfig
from lookbench.release.records import Sample, write_samples
from lookbench.release.stages.base import StageContext
from lookbench.release.stages.dedup import DedupStage, DedupStats
from lookbench.search.duplicates.crops import GREY_BYTES, WINDOWS, CropPairs
from lookbench.search.duplicates.store import StoredCodes
from lookbench.shards.executor import Executor
from lookbench.snapshot import open_snapshot
from lookbench.snapshot.schema import NOISE, SPLITS


def encoded(im: Image.Image, fmt: str = "PNG", quality: int = 90) -> bytes:
    """Encoded image bytes."""
    buf = io.BytesIO()
    im.save(buf, format=fmt, quality=quality)
    return buf.getvalue()


def cropped(
    im: Image.Image, left: float, top: float | None = None, right: float | None = None, bottom: float | None = None
) -> Image.Image:
    """The image less these shares of its width/height on each side (one share: the same on every side)."""
    top, right, bottom = (left, left, left) if top is None else (top, right or 0.0, bottom or 0.0)
    w, h = im.size
    return im.crop((round(left * w), round(top * h), w - round(right * w), h - round(bottom * h)))


def random_crop(im: Image.Image, seed: int) -> Image.Image:
    """A crop of 0-12% off each side, each side drawn on its own (seeded by the image's index)."""
    return cropped(im, *np.random.default_rng(seed).uniform(0.0, 0.12, 4).tolist())


def jittered(im: Image.Image) -> Image.Image:
    """A small colour jitter: 5% brighter, 5% less contrast, 10% more saturated."""
    im = ImageEnhance.Brightness(im).enhance(1.05)
    return ImageEnhance.Color(ImageEnhance.Contrast(im).enhance(0.95)).enhance(1.1)


W = len(WINDOWS)


PHASH_RADIUS = 24


WINDOW_RADIUS = 16


CROP_LIMIT = 16


def random_words(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """Uniform random uint64 words."""
    return rng.integers(0, 2**64, size=shape, dtype=np.uint64, endpoint=False)


def synthetic_parts(rng: np.random.Generator, n: int, chunk: int = 100_000) -> Iterator[StoredCodes]:
    """`n` entries of synthetic fingerprints keyed like published rows, a chunk at a time."""
    for start in range(0, n, chunk):
        size = min(chunk, n - start)
        yield StoredCodes(
            pa.array([f"v20260101/real_studio_flat/gallery#{start + i}" for i in range(size)]),
            random_words(rng, (size, 4)),
            random_words(rng, (size, 4)),
            random_words(rng, (size, W)),
            np.ones((size, 1), np.uint64),
            np.broadcast_to(np.zeros(GREY_BYTES, np.uint8), (size, GREY_BYTES)),
            np.ones((size, 1)),
        )


def process_cpu_s() -> float:
    """CPU seconds of this process (every thread) and of its reaped children (the worker processes)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def cpu(run: Callable[[], object]) -> float:
    """CPU seconds of this thread for one call."""
    started = time.thread_time()
    run()
    return time.thread_time() - started


def exponent(points: list[tuple[float, float]]) -> float:
    """b of y = a * x^b fitted to the points (least squares in logs)."""
    slope, _ = np.polyfit(np.log([p[0] for p in points]), np.log([p[1] for p in points]), 1)
    return round(float(slope), 3)


VERSION = "v20260601"


def published(folder: Path) -> list[tuple[str, bytes]]:
    """(published key, encoded image) of every image of a snapshot, keyed as a history version's rows."""
    snap = open_snapshot(folder)
    rows = []
    parts = [(s, sp) for s in snap.subsets for sp in SPLITS] + ([(NOISE, "gallery")] if snap.has_noise else [])
    for subset, split in parts:
        for start, images in snap.iter_images(subset, split):
            rows += [(f"{VERSION}/{subset}/{split}#{start + i}", data) for i, data in enumerate(images) if data]
    return rows


MEASURED_CPU_MS = {
    "all": {"phash": (0.61, 0.61, 0.63), "crop": (5.03, 32.1, 263.0)},
    "full-frame": {"phash": (0.61, 0.61, 0.63), "crop": (1.28, 6.26, 50.3)},
}


"""Median CPU ms per look-up at 10k, 100k and 1M entries, as `scale.py` measured them on 2 shared cores at
load ~9: the pHash tier and one crop-candidate search (the inputs of `--extrapolate`)."""


MEASURED_AT = (10_000, 100_000, 1_000_000)


def lookup_ms(pairs: CropPairs, entries: np.ndarray) -> np.ndarray:
    """CPU ms of one look-up (a pHash search and two crop-candidate searches) at these index sizes, interpolated
    log-log between the measured sizes (extended along the nearest segment outside them)."""
    logs = np.log(MEASURED_AT)
    size = np.log(np.maximum(entries, 1))
    total = np.zeros(len(size))
    for part, times in MEASURED_CPU_MS[pairs].items():
        slopes = np.diff(np.log(times)) / np.diff(logs)
        segment = np.clip(np.searchsorted(logs, size) - 1, 0, len(slopes) - 1)
        ms = np.exp(np.log(np.array(times))[segment] + slopes[segment] * (size - logs[segment]))
        total += ms * (2 if part == "crop" else 1)
    return total


def schedule_hours(new: int, history: int, pairs: CropPairs, workers: int, pipelined: bool, cores: int = 2):
    """Hours of a whole dedup's search on `cores` cores: the history look-ups as shards of 1,024 on `workers`
    worker processes (taken in order), the batch pass in the driver (sample i against the i kept before it, none
    dropped), every runnable process an equal share of the cores (at most one each). `pipelined`: the batch pass
    takes each shard's samples once that shard is finished; else once every shard is."""
    shard = 1024
    starts = list(range(0, new, shard))
    per_lookup = float(lookup_ms(pairs, np.array([history]))[0]) if history else 0.0  # no history: no shard job
    history_s = [min(shard, new - start) * per_lookup / 1000 for start in starts]
    batch_ms = lookup_ms(pairs, np.arange(new))
    batch_s = [float(batch_ms[start : start + shard].sum()) / 1000 for start in starts]
    done = [False] * len(starts)
    running: dict[int, float] = {}  # worker -> remaining CPU s of its shard
    taken: dict[int, int] = {}  # worker -> its shard
    next_shard, block, left, clock = 0, 0, batch_s[0], 0.0
    for worker in range(workers):
        if next_shard < len(starts):
            running[worker], taken[worker], next_shard = history_s[next_shard], next_shard, next_shard + 1
    while block < len(starts):
        ready = done[block] if pipelined else all(done)
        share = min(1.0, cores / (len(running) + ready))
        step = min([left] * ready + list(running.values())) / share
        clock += step
        if ready:
            left -= step * share
            if left <= 1e-12:
                block += 1
                left = batch_s[block] if block < len(starts) else 0.0
        for worker in list(running):
            running[worker] -= step * share
            if running[worker] <= 1e-12:
                done[taken[worker]] = True
                del running[worker]
                if next_shard < len(starts):
                    running[worker], taken[worker], next_shard = history_s[next_shard], next_shard, next_shard + 1
    return clock / 3600


def cluster_batch(images: list[bytes], n: int, seed: int) -> list[Sample]:
    """`n` batch samples made from a published snapshot's images: a third edits of history images (near copies,
    crops, mirrored crops), a third images the history does not hold (a history image turned a quarter), and a
    third edits of those new ones; seen at random times."""
    rng = np.random.default_rng(seed)
    fresh: list[int] = []  # the new images' sources, not their pixels: a release-sized batch holds 23k of them

    def turned(source: int) -> Image.Image:
        return decode_image(images[source]).transpose(Image.Transpose.ROTATE_90)

    samples = []
    for row in range(n):
        roll = rng.random()
        drawn = int(rng.integers(0, len(images)))
        if roll < 1 / 3 or not fresh:
            im = turned(drawn)
            fresh.append(drawn)
        else:
            im = decode_image(images[drawn]) if roll < 2 / 3 else turned(fresh[int(rng.integers(0, len(fresh)))])
            im = [jittered, lambda x: cropped(x, 0.06), lambda x: ImageOps.mirror(cropped(x, 0.05))][row % 3](im)
        seen = datetime(2026, 5, 1, tzinfo=UTC) + timedelta(minutes=int(rng.integers(0, 100_000)))
        data = encoded(im, "JPEG", 90)
        samples.append(Sample("shop", "feed", f"p{row}", data, seen, "dress", "red", ["real_studio_flat"], "cc0"))
    return samples


def marker_seconds(folder: Path) -> float:
    """Seconds the shards of one job folder worked, summed over their markers."""
    return round(sum(json.loads(path.read_text())["seconds"] for path in folder.glob("*.done.json")), 2)


def timed_stage(
    root: Path,
    out: Path,
    samples: list[Sample],
    executor: Executor,
    shards: int,
    pairs: CropPairs,
    state: Path | None = None,
):
    """One run of the dedup stage from scratch but for the history's store (built once, before, under `state`,
    default next to `out`: every release after the first finds it cached): wall seconds, shard seconds per job, and
    its counters."""
    state = state or out.parent / "state"
    ctx = StageContext("v20260601", date(2026, 6, 1), out, root / "work", state, executor=executor, shards=shards)
    ctx.say = lambda _line: None
    previous = write_samples(samples, root / "collected.parquet")
    started = time.perf_counter()
    result = DedupStage(DedupConfig(crop_pairs=pairs)).run(ctx, previous)
    wall = time.perf_counter() - started
    jobs = {
        job: marker_seconds(root / "work" / "dedup" / "shards" / job) for job in ("hash", "candidates", "decisions")
    }
    stats = result.stats
    assert isinstance(stats, DedupStats)
    tables = {name: file_sha256(ctx.work / "dedup" / name) for name in ("samples.parquet", "dropped.parquet")}
    return {
        "wall_s": round(wall, 2),
        "shard_seconds": jobs,
        "candidate_pairs": stats.candidate_pairs,
        "accepted_pairs": stats.accepted_pairs,
        "kept": stats.kept,
        "transitive_chains": stats.transitive_chains,
        "tables_sha256": tables,
    }
