"""The dedup stage scans the batch while the look-ups in the earlier versions run as shards: its decisions are those
of looking every sample up in order, first in the history and then in the samples kept so far; a history shard
that fails stops the stage before it writes anything, and a re-run resumes from the finished shards."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow.parquet as pq
import pytest
from PIL import Image, ImageEnhance, ImageOps
from releasekit import earlier_release, encode, near_copy, photo

from conftest import RayCluster
from lookbench.build.config import CropPairs, DedupConfig
from lookbench.build.fingerprints.hashes import fingerprint
from lookbench.build.fingerprints.history import history_store, store_index
from lookbench.build.fingerprints.index import FingerprintIndex
from lookbench.build.records import Sample, write_samples
from lookbench.build.sharding import HistoryLookupRows
from lookbench.build.stages.base import StageContext
from lookbench.build.stages.dedup import DedupStage
from lookbench.shards.local import LocalExecutor

VERSION = "v20260101"
RELEASE = "v20260601"


def cropped(im: Image.Image, share: float) -> Image.Image:
    """The image less `share` of its width and height on each side."""
    w, h = im.size
    return im.crop((round(share * w), round(share * h), w - round(share * w), h - round(share * h)))


def edits(rng: np.random.Generator, im: Image.Image) -> bytes:
    """One random edit of an image: a byte copy, a near copy, a crop, a mirrored crop, or a colour change that the
    colour check keeps apart."""
    kind = int(rng.integers(0, 5))
    if kind == 0:
        return encode(im)
    if kind == 1:
        return near_copy(im)
    if kind == 2:
        return encode(cropped(im, 0.06), "JPEG", 85)
    if kind == 3:
        return encode(ImageOps.mirror(cropped(im, 0.05)), "JPEG", 80)
    return encode(ImageEnhance.Color(im).enhance(0.0))


def batch(rng: np.random.Generator, history: list[Image.Image], size: int) -> list[Sample]:
    """New photos, edits of history images and edits of earlier batch photos, seen at random times."""
    photos: list[Image.Image] = []
    samples = []
    for n in range(size):
        roll = rng.random()
        if roll < 0.3 or not photos:
            im = photo(1000 + int(rng.integers(0, 10**6)), 128)
            photos.append(im)
            data = encode(im)
        elif roll < 0.6:
            data = edits(rng, history[int(rng.integers(0, len(history)))])
        else:
            data = edits(rng, photos[int(rng.integers(0, len(photos)))])
        seen = datetime(2026, 5, 1, tzinfo=UTC) + timedelta(minutes=int(rng.integers(0, 10_000)))
        samples.append(
            Sample(
                "shop", "feed", f"p{n}", data, seen, "dress", "red", ["real_studio_flat"], "cc0", sample_id=f"s{n:03d}"
            )
        )
    return samples


def sequential(out: Path, cache: Path, samples: list[Sample], settings: DedupConfig) -> list[tuple[Any, ...]]:
    """Every sample looked up one after another, in the stage's order: in the history, then in the batch kept so far
    (no shards, no threads): (sample, against, tier, duplicate of, distance) of each one dropped."""
    store, _ = history_store(out, RELEASE, cache)
    history = store_index(out, store, settings.crop_pairs)
    images: dict[str, bytes] = {}
    kept = FingerprintIndex(images.__getitem__, crop_pairs=settings.crop_pairs)
    decisions = []
    for sample in sorted(samples, key=lambda s: (s.first_seen_at, s.sample_id)):
        query = fingerprint(sample.image)
        found = None
        for against, index in (("earlier", history), ("batch", kept)):
            found = index.lookup(
                query, settings.phash_threshold, settings.colour_threshold, True, settings.crop_phash_threshold
            ).match
            if found is not None:
                decisions.append((sample.sample_id, against, found.tier, found.key, found.distance))
                break
        if found is None:
            images[sample.sample_id] = sample.image
            kept.add(sample.sample_id, query.sha256, query.phash, query.windows)
    return decisions


def run_stage(root: Path, out: Path, samples: list[Sample], settings: DedupConfig, executor, shards: int):
    ctx = StageContext(RELEASE, date(2026, 6, 1), out, root / "work", root / "state", executor=executor, shards=shards)
    said: list[str] = []
    ctx.say = said.append
    previous = write_samples(samples, root / "collected.parquet")
    result = DedupStage(settings).run(ctx, previous)
    dropped = pq.read_table(ctx.work / "dedup" / "dropped.parquet").to_pylist()
    decisions = [(r["sample_id"], r["against"], r["tier"], r["duplicate_of"], r["distance"]) for r in dropped]
    return decisions, result, said


@pytest.mark.parametrize(("seed", "pairs"), [(1, "all"), (2, "full-frame")])
def test_the_stage_decides_like_looking_each_sample_up_in_order(tmp_path: Path, seed: int, pairs: CropPairs) -> None:
    rng = np.random.default_rng(seed)
    history = [photo(seed * 100 + n, 128) for n in range(10)]
    out = earlier_release(tmp_path, history)
    samples = batch(rng, history, 36)
    settings = DedupConfig(crop_pairs=pairs)
    expected = sequential(out, tmp_path / "reference-cache", samples, settings)
    against = {d[1] for d in expected}
    assert against == {"earlier", "batch"}, "the data should exercise both look-ups"
    assert {d[2] for d in expected} >= {"exact", "crop"}
    for name, executor, shards in (("here", LocalExecutor(), 9), ("there", LocalExecutor(processes=2), 7)):
        decisions, result, _ = run_stage(tmp_path / name, out, samples, settings, executor, shards)
        assert decisions == expected, name
        assert result.stats.kept == len(samples) - len(expected)


def test_a_failing_history_shard_stops_the_stage_before_it_writes_and_a_rerun_resumes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = np.random.default_rng(3)
    history = [photo(300 + n, 128) for n in range(6)]
    out = earlier_release(tmp_path, history)
    samples = batch(rng, history, 20)
    settings = DedupConfig()
    clean, _, _ = run_stage(tmp_path / "clean", out, samples, settings, LocalExecutor(), 4)
    real = HistoryLookupRows.__call__
    calls = []

    def second_fails(self, queries, progress):
        calls.append(len(queries))
        if len(calls) == 2:
            raise OSError("disk gone while looking up")
        return real(self, queries, progress)

    monkeypatch.setattr(HistoryLookupRows, "__call__", second_fails)
    with pytest.raises(OSError, match="disk gone"):
        run_stage(tmp_path / "faulty", out, samples, settings, LocalExecutor(), 4)
    work = tmp_path / "faulty" / "work" / "dedup"
    assert not (work / "dropped.parquet").exists() and not (work / "samples.parquet").exists()
    assert len(list((work / "shards" / "history").glob("*.done.json"))) == 1
    monkeypatch.setattr(HistoryLookupRows, "__call__", real)
    decisions, _, said = run_stage(tmp_path / "faulty", out, samples, settings, LocalExecutor(), 4)
    assert decisions == clean
    assert "dedup: history 3 of 4 shards run, 1 already done" in said


@pytest.mark.ray
@pytest.mark.timeout(300)
def test_on_ray_the_stage_decides_like_looking_each_sample_up_in_order(ray_cluster: RayCluster, tmp_path: Path) -> None:
    from lookbench.shards.ray_executor import RayExecutor

    rng = np.random.default_rng(4)
    history = [photo(400 + n, 128) for n in range(8)]
    out = earlier_release(tmp_path, history)
    samples = batch(rng, history, 24)
    settings = DedupConfig(crop_pairs="full-frame")
    expected = sequential(out, tmp_path / "reference-cache", samples, settings)
    assert {d[1] for d in expected} == {"earlier", "batch"}
    decisions, _, said = run_stage(tmp_path / "ray", out, samples, settings, RayExecutor(), 5)
    assert decisions == expected
    assert "dedup: history 5 of 5 shards run, 0 already done" in said
