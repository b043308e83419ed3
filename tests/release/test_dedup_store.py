"""The history's memory-mapped fingerprint store: it holds exactly what was written, finds sha256 digests like the
in-memory keys, refuses every damaged file by name (and the dedup stage rebuilds it rather than reading wrong
codes), and a write that dies half-way leaves the previous store intact."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from releasekit import earlier_release, encode, photo

from lookbench._util.hashing import file_sha256
from lookbench.errors import ReleaseError
from lookbench.release.config import DedupConfig
from lookbench.release.fingerprints.batch import open_batch, write_batch
from lookbench.search.duplicates.crops import GREY_BYTES
from lookbench.search.duplicates.hashes import fingerprint
from lookbench.search.duplicates.history import (
    FINGERPRINT_SCHEMA,
    HISTORY_NAME,
    history_index,
    history_store,
    prune_history_stores,
)
from lookbench.search.duplicates.keys import MappedKeys, MemoryKeys
from lookbench.search.duplicates.store import MANIFEST, StoredCodes, StoreManifest, open_store, write_store

W = 3
SETTINGS = DedupConfig.model_validate({})
ORIGINALS = [photo(seed, 224) for seed in range(4)]


def _part(rng: np.random.Generator, start: int, n: int) -> StoredCodes:
    """n rows of random codes keyed `k{row}`; every fifth row repeats the sha256 of row `start`."""
    sha = rng.integers(0, 2**64, (n, 4), dtype=np.uint64, endpoint=False)
    sha[::5] = sha[0]
    return StoredCodes(
        pa.array([f"k{start + i}" for i in range(n)]),
        sha,
        rng.integers(0, 2**64, (n, 4), dtype=np.uint64, endpoint=False),
        rng.integers(0, 2**64, (n, W), dtype=np.uint64, endpoint=False),
        (rng.random((n, 1)) > 0.2).astype(np.uint64),
        rng.integers(0, 256, (n, GREY_BYTES), dtype=np.uint8),
        rng.random((n, 1)) + 0.5,
    )


def _hex(words: np.ndarray) -> str:
    return words.astype(">u8").tobytes().hex()


def test_a_store_maps_back_exactly_what_was_written(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    parts = [_part(rng, 0, 40), _part(rng, 40, 25)]
    write_store(tmp_path / "s", iter(parts), 65, W)
    stored = open_store(tmp_path / "s")
    for name in ("sha", "phash", "windows", "present", "grey", "aspect"):
        matrix = getattr(stored, name)
        assert isinstance(matrix, np.memmap) and not matrix.flags.writeable
        assert np.array_equal(matrix, np.concatenate([getattr(p, name) for p in parts]))
    assert stored.keys.to_pylist() == [f"k{i}" for i in range(65)]


def test_each_matrix_file_is_what_numpy_saves_for_the_whole_matrix(tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    parts = [_part(rng, 0, 7), _part(rng, 7, 1), _part(rng, 8, 11)]
    write_store(tmp_path / "s", iter(parts), 19, W)
    for name in ("sha", "phash", "windows", "present", "grey", "aspect"):
        whole = np.concatenate([getattr(p, name) for p in parts])
        np.save(tmp_path / f"{name}.npy", whole)
        assert (tmp_path / "s" / f"{name}.npy").read_bytes() == (tmp_path / f"{name}.npy").read_bytes(), name


@pytest.mark.parametrize("rows", [10, 30])
def test_parts_that_do_not_hold_the_announced_rows_leave_no_store(tmp_path: Path, rows: int) -> None:
    part = _part(np.random.default_rng(4), 0, 20)
    with pytest.raises(ValueError, match="store parts hold"):
        write_store(tmp_path / "s", iter([part]), rows, W)
    assert list(tmp_path.iterdir()) == []


def test_a_part_of_the_wrong_width_leaves_no_store(tmp_path: Path) -> None:
    part = _part(np.random.default_rng(5), 0, 6)
    with pytest.raises(ValueError, match="windows: 3 values per row, not 4"):
        write_store(tmp_path / "s", iter([part]), 6, W + 1)
    assert list(tmp_path.iterdir()) == []


def test_mapped_keys_find_the_first_row_of_a_digest_like_the_in_memory_keys(tmp_path: Path) -> None:
    rng = np.random.default_rng(1)
    parts = [_part(rng, 0, 40), _part(rng, 40, 25)]
    write_store(tmp_path / "s", iter(parts), 65, W)
    stored = open_store(tmp_path / "s")
    mapped, memory = MappedKeys(stored.keys, stored.sha), MemoryKeys()
    shas = [_hex(row) for row in np.concatenate([p.sha for p in parts])]
    memory.extend([f"k{i}" for i in range(65)], shas)
    extra = [_hex(rng.integers(0, 2**64, 4, dtype=np.uint64, endpoint=False)), shas[3]]
    mapped.extend(["x0", "x1"], extra)
    memory.extend(["x0", "x1"], extra)
    for sha in [*shas, *extra, "0" * 64]:
        assert mapped.row_of(sha) == memory.row_of(sha)
    assert mapped.row_of(shas[45]) == 40 and mapped.row_of(extra[0]) == 65 and mapped.row_of("0" * 64) is None
    assert [mapped[i] for i in range(len(mapped))] == [memory[i] for i in range(len(memory))]


def test_a_write_that_dies_half_way_leaves_the_previous_store(tmp_path: Path) -> None:
    rng = np.random.default_rng(2)
    good = _part(rng, 0, 30)
    write_store(tmp_path / "s", iter([good]), 30, W)

    def dying() -> object:
        yield _part(rng, 0, 10)
        raise KeyboardInterrupt  # a crawl stopped while the store was written

    with pytest.raises(KeyboardInterrupt):
        write_store(tmp_path / "s", dying(), 20, W)  # type: ignore[arg-type]
    assert np.array_equal(open_store(tmp_path / "s").phash, good.phash)
    assert [p.name for p in tmp_path.iterdir()] == ["s"]


RESAVED = {
    "grey as uint16": ("grey", lambda a: a.astype(np.uint16)),
    "grey of other width": ("grey", lambda a: a.reshape(-1, GREY_BYTES // 2)[: len(a)]),
    "grey one-dimensional": ("grey", lambda a: a.ravel()),
    "aspect as float32": ("aspect", lambda a: a.astype(np.float32)),
    "aspect as uint64": ("aspect", lambda a: a.view(np.uint64)),
    "aspect one-dimensional": ("aspect", lambda a: a.ravel()),
}
"""Matrices rewritten whole with another dtype or shape, their sha256 in the manifest updated to match."""


@pytest.mark.parametrize(
    "damage",
    [
        *("truncated npy", "flipped byte", "no keys", "garbage manifest", "other rows"),
        *("truncated grey", "flipped grey byte", "flipped aspect byte", "no grey"),
        *RESAVED,
    ],
)
def test_a_damaged_store_is_refused_by_name_and_rebuilt_by_the_history(tmp_path: Path, damage: str) -> None:
    out = earlier_release(tmp_path, ORIGINALS[:4])
    cache = tmp_path / "cache"
    history_index(out, "v20260601", cache)
    [store] = cache.glob("history-*")
    target = {
        "truncated npy": store / "windows.npy",
        "flipped byte": store / "phash.npy",
        "no keys": store / "keys.arrow",
        "garbage manifest": store / "manifest.json",
        "other rows": store / "manifest.json",
        "truncated grey": store / "grey.npy",
        "flipped grey byte": store / "grey.npy",
        "flipped aspect byte": store / "aspect.npy",
        "no grey": store / "grey.npy",
    }.get(damage) or store / f"{RESAVED[damage][0]}.npy"
    data = bytearray(target.read_bytes())
    if damage in ("truncated npy", "truncated grey"):
        target.write_bytes(data[: len(data) // 2])
    elif damage.startswith("flipped"):
        data[-3] ^= 0xFF  # a pHash bit or thumbnail pixel flipped on disk would move a decision: never read silently
        target.write_bytes(bytes(data))
    elif damage == "no grey":
        target.unlink()
    elif damage in RESAVED:
        np.save(target, RESAVED[damage][1](np.load(target)))
        manifest = StoreManifest.model_validate_json((store / MANIFEST).read_bytes())
        files = {**manifest.files, target.name: file_sha256(target)}
        (store / MANIFEST).write_text(manifest.model_copy(update={"files": files}).model_dump_json())
    elif damage == "no keys":
        target.unlink()
    elif damage == "garbage manifest":
        target.write_text("{not json")
    else:
        target.write_text(data.decode().replace('"rows": 5', '"rows": 4'))
    with pytest.raises(ReleaseError, match=target.name if damage != "other rows" else "rows"):
        open_store(store)
    problems: list[tuple[Path, str]] = []
    history, _ = history_index(out, "v20260601", cache, lambda path, why: problems.append((path, why)))
    assert [path for path, _ in problems] == [store] and "rebuilt" in problems[0][1]
    open_store(store)
    found = history.lookup(fingerprint(encode(ORIGINALS[2])), SETTINGS.phash_threshold, SETTINGS.colour_threshold)
    assert found.match is not None and found.match.key.endswith("gallery#2") and found.match.tier == "exact"
    other = history.lookup(fingerprint(encode(photo(77, 224))), SETTINGS.phash_threshold, SETTINGS.colour_threshold)
    assert other.match is None


def test_superseded_history_stores_are_pruned_and_nothing_else(tmp_path: Path) -> None:
    out = earlier_release(tmp_path, ORIGINALS[:2])
    cache = tmp_path / "cache"
    keep, _ = history_store(out, "v20260601", cache)
    assert keep is not None and HISTORY_NAME.fullmatch(keep.name)
    rng = np.random.default_rng(4)

    def store(name: str) -> Path:
        write_store(cache / name, iter([_part(rng, 0, 6)]), 6, W)
        return cache / name

    same_format = "history-0123456789abcdef-" + keep.name.split("-", 2)[2]
    superseded = [store(same_format), store("history-fedcba9876543210-rgb-on-white-p256")]
    (store("history-1111111111111111-rgb-on-white-a") / "notes.txt").write_text("mine")
    (store("history-2222222222222222-rgb-on-white-b") / MANIFEST).write_text("{not json")
    listed = store("history-3333333333333333-rgb-on-white-c")
    (tmp_path / "victim.txt").write_text("keep me")
    manifest = (listed / MANIFEST).read_text()
    (listed / MANIFEST).write_text(manifest.replace('"keys.arrow"', '"../../victim.txt"'))
    elsewhere = tmp_path / "elsewhere"
    write_store(elsewhere, iter([_part(rng, 0, 6)]), 6, W)
    (cache / "history-4444444444444444-rgb-on-white-d").symlink_to(elsewhere)
    store("my-history-5555555555555555-rgb-on-white-e")
    (cache / "history-6666666666666666-rgb-on-white-f").write_text("a file")
    before = sorted(p.name for p in cache.iterdir())
    assert prune_history_stores(cache, keep) == sorted(p.name for p in superseded)
    assert sorted(p.name for p in cache.iterdir()) == sorted(set(before) - {p.name for p in superseded})
    assert len(open_store(keep)) == 3 and len(open_store(elsewhere)) == 6
    assert (tmp_path / "victim.txt").read_text() == "keep me"
    assert (cache / "history-1111111111111111-rgb-on-white-a" / "notes.txt").read_text() == "mine"
    assert prune_history_stores(cache, keep) == []


def test_a_batch_side_file_with_mirror_window_hashes_of_the_wrong_length_is_refused_naming_file_and_row(
    tmp_path: Path,
) -> None:
    images = [encode(photo(seed, 96)) for seed in range(3)]
    prints = [fingerprint(data) for data in images]
    rows = pa.table(
        {
            "key": [f"s{i}" for i in range(3)],
            "sha256": [p.sha256 for p in prints],
            "phash": [p.phash for p in prints],
            "windows": [p.view.windows.astype(">u8").tobytes() for p in prints],
            "grey": [p.view.grey_bytes() for p in prints],
            "aspect": [p.view.aspect for p in prints],
        },
        schema=FINGERPRINT_SCHEMA,
    )
    mirrors = [p.mirror_view.windows.astype(">u8").tobytes() for p in prints]
    write_batch(tmp_path / "good", rows, [p.phash_mirror for p in prints], mirrors, images)
    assert np.array_equal(open_batch(tmp_path / "good").mirror_windows[2], prints[2].mirror_view.windows)
    write_batch(tmp_path / "bad", rows, [p.phash_mirror for p in prints], [*mirrors[:2], mirrors[2][:-8]], images)
    with pytest.raises(ReleaseError, match=r"side\.arrow: row 2 holds 88 bytes of mirror window hashes"):
        open_batch(tmp_path / "bad")
