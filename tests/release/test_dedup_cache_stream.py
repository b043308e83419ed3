"""Fingerprint caches written and read one row group at a time: the same store bytes and decisions however a cache
is split, memory held per chunk and not per version, every row group checked, and a run killed half-way leaving no
cache."""

from __future__ import annotations

import gc
import tracemalloc
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from PIL import ImageOps
from releasekit import earlier_release, encode, near_copy, photo

from conftest import make_row
from lookbench._util import hashing as hashing_module
from lookbench._util.hashing import file_sha256
from lookbench._util.images import BadImageError
from lookbench.errors import ReleaseError
from lookbench.release.config import DedupConfig
from lookbench.search.duplicates import history
from lookbench.search.duplicates.crops import GREY_BYTES
from lookbench.search.duplicates.hashes import Fingerprint, fingerprint
from lookbench.search.duplicates.history import (
    FINGERPRINT_SCHEMA,
    cached_snapshot_fingerprints,
    history_store,
    read_cached,
    store_index,
)
from lookbench.snapshot import open_snapshot
from lookbench.snapshot.writer import image_value, rows_to_table, write_split

SETTINGS = DedupConfig.model_validate({})
VERSION = "v20260101"
LATER = "v20260601"
IMAGES = [photo(seed, 160) for seed in range(10)]
POOLS: list[pa.MemoryPool] = []
"""Every proxy pool a test measured through, kept alive so no buffer ever outlives its pool."""


def store_digests(folder: Path) -> dict[str, str]:
    """sha256 of every file of a store folder, by name."""
    return {path.name: file_sha256(path) for path in sorted(folder.iterdir())}


def cache_file(cache: Path) -> Path:
    (found,) = cache.glob(f"{VERSION}-*.parquet")
    return found


def decisions(out: Path, store: Path) -> list[tuple[str, str] | None]:
    """(key, tier) each probe (crops, a near copy, an unrelated photo) matches in the store's index."""
    index = store_index(out, store)
    probes = [
        encode(IMAGES[2].crop((8, 8, 152, 152))),
        encode(ImageOps.mirror(IMAGES[6].crop((0, 0, 150, 160))), "JPEG", 85),
        near_copy(IMAGES[8]),
        encode(photo(500, 160)),
    ]
    found = []
    for data in probes:
        match = index.lookup(fingerprint(data), SETTINGS.phash_threshold, SETTINGS.colour_threshold, True).match
        found.append(None if match is None else (match.key, match.tier))
    return found


def test_a_cache_in_many_row_groups_gives_the_store_and_decisions_of_one_in_one_piece(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = earlier_release(tmp_path, IMAGES)
    monkeypatch.setattr(history, "STORE_CHUNK", 4)  # several store chunks, each regrouped from row groups of 3
    whole, _ = history_store(out, LATER, tmp_path / "whole")
    assert whole is not None and pq.ParquetFile(cache_file(tmp_path / "whole")).num_row_groups == 1
    monkeypatch.setattr(history, "CACHE_CHUNK", 3)
    split, _ = history_store(out, LATER, tmp_path / "split")
    assert split is not None and pq.ParquetFile(cache_file(tmp_path / "split")).num_row_groups == 4  # 11 rows
    assert pq.read_table(cache_file(tmp_path / "split")).equals(pq.read_table(cache_file(tmp_path / "whole")))
    assert store_digests(split) == store_digests(whole)
    assert pa.ipc.open_file(split / "keys.arrow").num_record_batches == 3  # chunks of 4, 4 and 3 rows
    gallery = f"{VERSION}/real_studio_flat/gallery"
    expected = [(f"{gallery}#2", "crop"), (f"{gallery}#6", "crop"), (f"{gallery}#8", "perceptual"), None]
    assert decisions(out, split) == decisions(out, whole) == expected


def measured(work: Callable[[], object]) -> tuple[int, int]:
    """(peak bytes Python allocated, peak bytes Arrow allocated) while `work` ran; what it returns is dropped."""
    pool = pa.proxy_memory_pool(pa.default_memory_pool())
    POOLS.append(pool)
    previous = pa.default_memory_pool()
    pa.set_memory_pool(pool)
    tracemalloc.start()
    try:
        work()
        gc.collect()
        # Nothing allocated through the pool may outlive it (freeing it later would crash the interpreter).
        assert pool.bytes_allocated() == 0, f"{pool.bytes_allocated()} bytes still held through the measuring pool"
        return tracemalloc.get_traced_memory()[1], pool.max_memory()
    finally:
        tracemalloc.stop()
        pa.set_memory_pool(previous)


def release_in_row_groups(root: Path, images: list[bytes], rows: int) -> Path:
    """An output folder holding one published version: these images as gallery rows and one query, written in row
    groups of `rows` (a split's row group is read whole: the 512 rows of a published one would dominate here)."""
    gallery = [make_row(f"p{n}", "dress", "red", image=image_value(data, f"p{n}.png")) for n, data in enumerate(images)]
    query = [make_row("q", "dress", "red", image=image_value(encode(photo(99, 64)), "q.png"))]
    for split, split_rows in (("query", query), ("gallery", gallery)):
        write_split(rows_to_table(split_rows), root / "out" / VERSION / "real_studio_flat" / f"{split}.parquet", rows)
    return root / "out"


def test_hashing_checking_and_storing_a_cache_hold_one_chunk_not_the_version(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    images, chunk = 256, 8
    out = release_in_row_groups(tmp_path, [encode(photo(seed, 48)) for seed in range(images)], chunk)
    monkeypatch.setattr(history, "CACHE_CHUNK", chunk)
    monkeypatch.setattr(history, "STORE_CHUNK", chunk)
    monkeypatch.setattr(hashing_module, "CHUNK", 1 << 16)  # files are hashed in constant 4 MB reads otherwise
    cache = tmp_path / "cache"
    snap = open_snapshot(out / VERSION)
    hashing = measured(lambda: cached_snapshot_fingerprints(snap, cache))
    path = cache_file(cache)
    greys = pq.read_table(path, columns=["grey"])["grey"]
    everything = GREY_BYTES * (len(greys) - greys.null_count)
    assert pq.ParquetFile(path).num_row_groups == 33 and everything > 3_000_000
    checking = measured(lambda: read_cached(path))
    storing = measured(lambda: history_store(out, LATER, cache))
    whole = measured(lambda: pq.read_table(path))  # what holding a version's rows costs, measured the same way
    assert whole[1] > 0.9 * everything
    for python, arrow in (hashing, checking, storing):
        assert python < everything / 3 and arrow < everything / 3, (hashing, checking, storing, whole, everything)


def rewrite_second_row_group(path: Path, damage: str) -> pa.Table:
    """Damage one row of the cache's second row group (rows 3-5), keeping groups of 3 rows; the good table."""
    good = pq.read_table(path)
    column = "grey" if damage == "short grey" else "aspect"
    values = good[column].to_pylist()
    assert values[4] is not None
    values[4] = values[4][:-1] if damage == "short grey" else float("nan")
    position = FINGERPRINT_SCHEMA.get_field_index(column)
    field = FINGERPRINT_SCHEMA.field(column)
    bad = good.set_column(position, field, pa.array(values, field.type))
    pq.write_table(bad, path, row_group_size=3)
    return good


@pytest.mark.parametrize("damage", ["short grey", "aspect nan"])
def test_damage_in_a_later_row_group_is_refused_by_name_and_recomputed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, damage: str
) -> None:
    out = earlier_release(tmp_path, IMAGES)
    whole, _ = history_store(out, LATER, tmp_path / "whole")
    assert whole is not None
    monkeypatch.setattr(history, "CACHE_CHUNK", 3)
    cache = tmp_path / "cache"
    first, _ = history_store(out, LATER, cache)
    assert first is not None
    path = cache_file(cache)
    good = rewrite_second_row_group(path, damage)
    groups = pq.ParquetFile(path)
    assert groups.num_row_groups == 4
    history.check_batch(path, groups.read_row_group(0).to_batches()[0])  # the first row group is sound
    with pytest.raises(ReleaseError, match=path.name) as refused:
        read_cached(path)
    assert ("grey values of the wrong size" if damage == "short grey" else "aspect values") in str(refused.value)
    for entry in list(first.iterdir()):
        entry.unlink()
    first.rmdir()
    problems: list[tuple[Path, str]] = []
    store, _ = history_store(out, LATER, cache, lambda where, why: problems.append((where, why)))
    assert [where for where, _ in problems] == [path] and "recomputed" in problems[0][1]
    assert pq.read_table(path).equals(good)
    assert store is not None and store_digests(store) == store_digests(whole)


class Killed(Exception):
    """The hashing run stopped from outside."""


@pytest.mark.parametrize("failure", [Killed, BadImageError])
def test_a_hashing_run_stopped_half_way_leaves_no_cache_and_a_rerun_writes_it_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failure: type[Exception]
) -> None:
    out = earlier_release(tmp_path, IMAGES)
    whole, _ = history_store(out, LATER, tmp_path / "whole")
    assert whole is not None
    monkeypatch.setattr(history, "CACHE_CHUNK", 3)
    calls: list[bytes] = []

    def failing(data: bytes) -> Fingerprint:
        calls.append(data)
        if len(calls) == 8:  # the query and gallery rows 0-6 hashed: two row groups of 3 already written
            raise failure("stopped")
        return fingerprint(data)

    monkeypatch.setattr(history, "fingerprint", failing)
    cache = tmp_path / "cache"
    expected = ReleaseError if failure is BadImageError else Killed
    with pytest.raises(expected) as raised:
        history_store(out, LATER, cache)
    if failure is BadImageError:
        assert str(raised.value) == f"{out / VERSION}/real_studio_flat/gallery row 6: stopped"
    assert not cache.exists() or list(cache.iterdir()) == []
    monkeypatch.setattr(history, "fingerprint", fingerprint)
    store, _ = history_store(out, LATER, cache)
    assert pq.read_table(cache_file(cache)).equals(pq.read_table(cache_file(tmp_path / "whole")))
    assert store is not None and store_digests(store) == store_digests(whole)


def test_the_checked_cache_reads_back_only_the_columns_asked_for(tmp_path: Path) -> None:
    out = earlier_release(tmp_path, IMAGES)
    checked = cached_snapshot_fingerprints(open_snapshot(out / VERSION), tmp_path / "cache")
    table = checked.read(["key", "sha256", "phash"])
    assert table.column_names == ["key", "sha256", "phash"] and checked.rows == table.num_rows == 11
    shas = dict(zip(table["key"].to_pylist(), table["sha256"].to_pylist(), strict=True))
    assert shas[f"{VERSION}/real_studio_flat/gallery#3"] == fingerprint(encode(IMAGES[3])).sha256
