"""The dedup stage as sets: candidate pairs and their decisions run as shards, and every group of accepted pairs keeps
its first image. The outcome equals deciding every pair by a look-up of one image in a one-image index and keeping
the first of each connected group; it is byte for byte the same for any input order, sharding and executor; a failed
shard stops the stage before it writes anything, and a re-run resumes from the finished shards."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
from PIL import Image, ImageEnhance, ImageOps
from releasekit import earlier_release, encode, near_copy, photo

from conftest import RayCluster
from lookbench.release.config import DedupConfig
from lookbench.release.fingerprints.batch import open_batch
from lookbench.release.records import Sample, write_samples
from lookbench.release.sharding import PairRows
from lookbench.release.stages.base import StageContext
from lookbench.release.stages.dedup import DedupStage
from lookbench.search.duplicates.crops import WINDOWS, CropPairs
from lookbench.search.duplicates.hashes import fingerprint
from lookbench.search.duplicates.history import history_store, store_index
from lookbench.search.duplicates.index import FingerprintIndex
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


def scene(root: Path, seed: int, first: int, published: int, size: int):
    """(the rng, an output folder with `published` photos, a batch of `size` samples) of a seed."""
    rng = np.random.default_rng(seed)
    history = [photo(first + n, 128) for n in range(published)]
    return rng, earlier_release(root, history), batch(rng, history, size)


def pairwise(out: Path, cache: Path, samples: list[Sample], settings: DedupConfig) -> tuple[set[str], set[tuple]]:
    """The set-level definition computed the slow way: every (later, earlier) pair looked up in a one-image index
    of the earlier image (history images come first, oldest row first; batch images by first seen, then id), groups
    as connected components; (kept sample ids, (dropped id, against, duplicate of) of each dropped sample)."""
    store, _ = history_store(out, RELEASE, cache)
    history = store_index(out, store, settings.crop_pairs)
    nodes = [(history.keys[row], history.image_of(history.keys[row])) for row in range(len(history))]
    batch = sorted(samples, key=lambda s: (s.first_seen_at, s.sample_id))
    nodes += [(s.sample_id, s.image) for s in batch]
    prints = [fingerprint(data) for _, data in nodes]
    linked: dict[int, set[int]] = {n: set() for n in range(len(nodes))}
    for later in range(len(history), len(nodes)):
        for earlier in range(later):
            index = FingerprintIndex.of_images({nodes[earlier][0]: nodes[earlier][1]}, settings.crop_pairs)
            found = index.lookup(
                prints[later], settings.phash_threshold, settings.colour_threshold, True, settings.crop_phash_threshold
            )
            if found.match is not None:
                linked[later].add(earlier)
                linked[earlier].add(later)
    dropped, seen = set(), set()
    for start in range(len(nodes)):
        if start in seen:
            continue
        group, todo = {start}, [start]
        while todo:
            for other in linked[todo.pop()] - group:
                group.add(other)
                todo.append(other)
        seen |= group
        first = min(group)
        against = "earlier" if first < len(history) else "batch"
        dropped |= {(nodes[n][0], against, nodes[first][0]) for n in group if n != first and n >= len(history)}
    return {s.sample_id for s in samples} - {d[0] for d in dropped}, dropped


def run_stage(root: Path, out: Path, samples: list[Sample], settings: DedupConfig, executor, shards: int):
    ctx = StageContext(RELEASE, date(2026, 6, 1), out, root / "work", root / "state", executor=executor, shards=shards)
    said: list[str] = []
    ctx.say = said.append
    previous = write_samples(samples, root / "collected.parquet")
    result = DedupStage(settings).run(ctx, previous)
    said += [f"problem: {problem.error}" for problem in ctx.problems]
    dropped = pq.read_table(ctx.work / "dedup" / "dropped.parquet").to_pylist()
    decisions = {(r["sample_id"], r["against"], r["duplicate_of"]) for r in dropped}
    return decisions, result, said


def outputs(root: Path) -> dict[str, bytes]:
    """The stage's two tables, as bytes."""
    return {name: (root / "work" / "dedup" / name).read_bytes() for name in ("samples.parquet", "dropped.parquet")}


@pytest.mark.parametrize(("seed", "pairs"), [(1, "all"), (2, "full-frame")])
def test_the_stage_keeps_the_first_image_of_every_group_of_pairs_a_one_image_look_up_accepts(
    tmp_path: Path, seed: int, pairs: CropPairs
) -> None:
    rng = np.random.default_rng(seed)
    history = [photo(seed * 100 + n, 128) for n in range(10)]
    out = earlier_release(tmp_path, history)
    samples = batch(rng, history, 36)
    settings = DedupConfig(crop_pairs=pairs)
    kept, expected = pairwise(out, tmp_path / "reference-cache", samples, settings)
    assert {d[1] for d in expected} == {"earlier", "batch"}, "the data should exercise both sides"
    decisions, result, _ = run_stage(tmp_path / "here", out, samples, settings, LocalExecutor(), 9)
    assert decisions == expected
    assert result.stats.kept == len(kept)
    table = pq.read_table(tmp_path / "here" / "work" / "dedup" / "samples.parquet")
    assert set(table.column("sample_id").to_pylist()) == kept
    assert {"exact", "crop"} <= set(result.stats.merged_within_batch) | set(
        result.stats.excluded_as_duplicates_of_earlier_versions
    )


@pytest.mark.slow
def test_the_tables_are_byte_identical_for_any_input_order_sharding_and_worker_processes(tmp_path: Path) -> None:
    rng, out, samples = scene(tmp_path, 5, 500, 8, 30)
    settings = DedupConfig()
    run_stage(tmp_path / "one", out, samples, settings, LocalExecutor(), 1)
    first = outputs(tmp_path / "one")
    assert pq.read_table(tmp_path / "one" / "work" / "dedup" / "dropped.parquet").num_rows > 5
    shuffled = [samples[i] for i in rng.permutation(len(samples))]
    assert shuffled != samples
    for name, order, executor, shards in (
        ("two", shuffled, LocalExecutor(), 2),
        ("many", list(reversed(samples)), LocalExecutor(), 11),
        ("processes", shuffled, LocalExecutor(processes=2), 5),
    ):
        run_stage(tmp_path / name, out, order, settings, executor, shards)
        assert outputs(tmp_path / name) == first, name


def test_a_failing_decision_shard_stops_the_stage_before_it_writes_and_a_rerun_resumes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng, out, samples = scene(tmp_path, 3, 300, 6, 20)
    settings = DedupConfig()
    clean, _, _ = run_stage(tmp_path / "clean", out, samples, settings, LocalExecutor(), 4)
    first_shard = sorted((tmp_path / "clean" / "work" / "dedup" / "shards" / "decisions").glob("*.parquet"))[0]
    shard_pairs = pq.read_table(first_shard).num_rows
    real = PairRows.decision
    calls = []

    def fails_in_the_second_shard(self, pair):
        calls.append(pair)
        if len(calls) == shard_pairs + 1:
            raise OSError("disk gone while deciding")
        return real(self, pair)

    monkeypatch.setattr(PairRows, "decision", fails_in_the_second_shard)
    with pytest.raises(OSError, match="disk gone"):
        run_stage(tmp_path / "faulty", out, samples, settings, LocalExecutor(), 4)
    work = tmp_path / "faulty" / "work" / "dedup"
    assert not (work / "dropped.parquet").exists() and not (work / "samples.parquet").exists()
    assert len(list((work / "shards" / "decisions").glob("*.done.json"))) == 1
    monkeypatch.setattr(PairRows, "decision", real)
    decisions, _, said = run_stage(tmp_path / "faulty", out, samples, settings, LocalExecutor(), 4)
    assert decisions == clean
    assert outputs(tmp_path / "faulty") == outputs(tmp_path / "clean")
    assert "dedup: candidates 0 of 4 shards run, 4 already done" in said
    assert "dedup: decisions 3 of 4 shards run, 1 already done" in said


def test_a_damaged_shard_output_or_batch_store_is_recomputed_and_gives_the_same_tables(tmp_path: Path) -> None:
    rng, out, samples = scene(tmp_path, 6, 600, 6, 20)
    settings = DedupConfig()
    run_stage(tmp_path / "b", out, samples, settings, LocalExecutor(), 3)
    before = outputs(tmp_path / "b")
    work = tmp_path / "b" / "work" / "dedup"
    shard = sorted((work / "shards" / "candidates").glob("*.parquet"))[1]
    shard.write_bytes(shard.read_bytes()[:-40])
    (side,) = work.glob("batch-*/side.arrow")
    side.write_bytes(side.read_bytes()[:-8] + b"damaged!")
    _, _, said = run_stage(tmp_path / "b", out, samples, settings, LocalExecutor(), 3)
    assert "dedup: candidates 1 of 3 shards run, 2 already done" in said
    assert any(line.startswith("problem: ") and "side.arrow" in line and "rebuilt" in line for line in said)
    assert outputs(tmp_path / "b") == before


@pytest.mark.ray
@pytest.mark.timeout(300)
def test_on_ray_the_tables_are_byte_identical_to_one_local_shard(ray_cluster: RayCluster, tmp_path: Path) -> None:
    from lookbench.shards.ray_executor import RayExecutor

    rng, out, samples = scene(tmp_path, 4, 400, 8, 24)
    settings = DedupConfig(crop_pairs="full-frame")
    run_stage(tmp_path / "local", out, samples, settings, LocalExecutor(), 1)
    shuffled = [samples[i] for i in rng.permutation(len(samples))]
    _, _, said = run_stage(tmp_path / "ray", out, shuffled, settings, RayExecutor(), 5)
    assert outputs(tmp_path / "ray") == outputs(tmp_path / "local")
    assert "dedup: decisions 5 of 5 shards run, 0 already done" in said


def test_the_batch_store_holds_each_images_mirror_window_hashes_as_its_mirrored_view_gives_them(
    tmp_path: Path,
) -> None:
    rng, out, samples = scene(tmp_path, 7, 600, 6, 20)
    flat = Sample(
        "shop",
        "feed",
        "flat",
        encode(Image.new("RGB", (64, 64), (200, 30, 30))),
        samples[0].first_seen_at,
        "dress",
        "red",
        ["real_studio_flat"],
        "cc0",
    )
    run_stage(tmp_path / "b", out, [*samples, flat], DedupConfig(), LocalExecutor(), 3)
    (folder,) = (tmp_path / "b" / "work" / "dedup").glob("batch-*")
    found = open_batch(folder)
    for row in range(len(found)):
        view = fingerprint(found.image(row)).view
        expected = np.zeros(len(WINDOWS), np.uint64) if view.flat else view.mirrored().windows
        assert np.array_equal(found.mirror_windows[row], expected), row
    assert any(fingerprint(found.image(row)).view.flat for row in range(len(found)))
