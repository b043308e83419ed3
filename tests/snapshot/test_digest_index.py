"""The digest index: a re-run hashes nothing; a touched file is hashed once; a changed one re-hashes its images."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable
from pathlib import Path

import numpy as np
import pytest

from conftest import make_row, png_bytes, write_snapshot
from lookbench.snapshot import digests as digests_module
from lookbench.snapshot import reader as reader_module
from lookbench.snapshot.digests import DigestIndex
from lookbench.snapshot.manifest import file_sha256, write_manifest
from lookbench.snapshot.reader import Snapshot, open_snapshot

SUBSET = "real_studio_flat"


def _snapshot(root: Path, seed: int = 0, missing: int | None = None) -> Path:
    rows = [make_row(f"g{i}", "top", "red", seed=seed + i) for i in range(5)]
    if missing is not None:
        rows[missing]["image"] = None
    return write_snapshot(root, {SUBSET: {"query": rows[:2], "gallery": rows}})


def _counting(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    counts = {"files": 0, "images": 0}
    hash_file, hash_images = digests_module.file_sha256, reader_module.hash_images

    def count_file(path: Path) -> str:
        counts["files"] += 1
        return hash_file(path)

    def count_images(batches: Iterable[list[bytes | None]], algorithm: str = "sha256") -> digests_module.ImageDigests:
        counts["images"] += 1
        return hash_images(batches, algorithm)

    monkeypatch.setattr(digests_module, "file_sha256", count_file)
    monkeypatch.setattr(reader_module, "hash_images", count_images)
    return counts


def test_keys_are_image_sha256_and_a_rerun_hashes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _snapshot(tmp_path, missing=3)
    counts = _counting(monkeypatch)
    index = tmp_path / "index"
    snap = Snapshot(root, digests=DigestIndex(index))
    keys = snap.image_keys(SUBSET, "gallery")
    images = [data for _, batch in snap.iter_images(SUBSET, "gallery") for data in batch]
    assert keys == [hashlib.sha256(d).digest() if d else None for d in images] and keys[3] is None
    first_hash = snap.content_hash
    assert counts == {"files": 2, "images": 1}
    again = Snapshot(root, digests=DigestIndex(index))  # a new process: everything comes from the index
    assert again.image_keys(SUBSET, "gallery") == keys and again.content_hash == first_hash
    assert counts == {"files": 2, "images": 1}
    plain = hashlib.sha256()
    for path in sorted(root.rglob("*.parquet")):
        plain.update(f"{path.relative_to(root).as_posix()}\0{file_sha256(path)}\n".encode())
    assert first_hash == plain.hexdigest()


def test_touched_file_is_hashed_again_but_not_its_images(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _snapshot(tmp_path)
    index = tmp_path / "index"
    keys = Snapshot(root, digests=DigestIndex(index)).image_keys(SUBSET, "gallery")
    counts = _counting(monkeypatch)
    gallery = root / SUBSET / "gallery.parquet"
    os.utime(gallery, ns=(1, 1))
    assert Snapshot(root, digests=DigestIndex(index)).image_keys(SUBSET, "gallery") == keys
    assert counts == {"files": 1, "images": 0}


def test_changed_file_rehashes_its_images(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _snapshot(tmp_path)
    index = tmp_path / "index"
    old = Snapshot(root, digests=DigestIndex(index)).image_keys(SUBSET, "gallery")
    _snapshot(tmp_path, seed=50)  # same path, new images
    counts = _counting(monkeypatch)
    new = Snapshot(root, digests=DigestIndex(index)).image_keys(SUBSET, "gallery")
    assert new != old and counts == {"files": 1, "images": 1}


def test_damaged_or_foreign_entries_are_recomputed(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    root = _snapshot(tmp_path)
    index = tmp_path / "index"
    keys = Snapshot(root, digests=DigestIndex(index)).image_keys(SUBSET, "gallery")
    entries = sorted(index.glob("*.npz"))
    assert len(entries) == 1
    entries[0].write_bytes(b"PK\x03\x04 not a zip")
    assert Snapshot(root, digests=DigestIndex(index)).image_keys(SUBSET, "gallery") == keys
    assert "unreadable" in caplog.text
    wrong = dict(np.load(entries[0]))
    wrong["digests_image"] = np.zeros((2, 7), dtype=np.uint8)  # wrong shape: not trusted
    np.savez(entries[0], **wrong)
    assert Snapshot(root, digests=DigestIndex(index)).image_keys(SUBSET, "gallery") == keys


def test_unwritable_index_still_answers(tmp_path: Path) -> None:
    root = _snapshot(tmp_path)
    blocker = tmp_path / "index"
    blocker.write_text("a file where the folder should be")
    keys = Snapshot(root, digests=DigestIndex(blocker)).image_keys(SUBSET, "gallery")
    assert len(keys) == 5 and all(keys)


def test_open_snapshot_verifies_the_manifest_through_the_index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LOOKBENCH_CACHE", str(tmp_path / "cache"))
    root = _snapshot(tmp_path)
    write_manifest(root)
    open_snapshot(root)
    counts = _counting(monkeypatch)
    open_snapshot(root).content_hash  # noqa: B018
    assert counts["files"] == 0
    gallery = root / SUBSET / "gallery.parquet"
    data = bytearray(gallery.read_bytes())
    data[len(data) // 2] ^= 0xFF  # same size, new mtime: hashed again and caught
    gallery.write_bytes(bytes(data))
    with pytest.raises(Exception, match="sha256 differs"):
        open_snapshot(root)


def test_outfit_keys_are_remembered_sha1_of_the_street_photo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    photo, other = png_bytes(1, 32), png_bytes(2, 32)
    queries = [make_row(f"s{i}", "pants", "black", raw=raw) for i, raw in enumerate((photo, photo, other))]
    queries.append(make_row("s3", "shirt", "white"))  # no street photo: its own outfit
    root = write_snapshot(tmp_path, {"real_streetlook": {"query": queries, "gallery": queries}})
    index = tmp_path / "index"
    keys = Snapshot(root, digests=DigestIndex(index)).labels("real_streetlook", "query").outfit_key
    assert keys == [hashlib.sha1(photo).hexdigest()] * 2 + [hashlib.sha1(other).hexdigest(), None]
    counts = _counting(monkeypatch)
    assert Snapshot(root, digests=DigestIndex(index)).labels("real_streetlook", "query").outfit_key == keys
    assert counts == {"files": 0, "images": 0}


def test_a_file_swapped_behind_the_index_back_is_caught_by_its_row_count(tmp_path: Path) -> None:
    root = _snapshot(tmp_path)
    index = tmp_path / "index"
    Snapshot(root, digests=DigestIndex(index)).image_keys(SUBSET, "gallery")
    entry = next(index.glob("*.npz"))
    stale = dict(np.load(entry))  # five rows of digests
    rows = [make_row(f"g{i}", "top", "red", seed=70 + i) for i in range(3)]
    write_snapshot(tmp_path, {SUBSET: {"query": rows[:2], "gallery": rows}})
    gallery = root / SUBSET / "gallery.parquet"
    stale["size"], stale["mtime_ns"] = np.array(gallery.stat().st_size), np.array(gallery.stat().st_mtime_ns)
    np.savez(entry, **stale)  # the index now vouches for the new file with the old file's digests
    keys = Snapshot(root, digests=DigestIndex(index)).image_keys(SUBSET, "gallery")
    images = [data for _, batch in Snapshot(root).iter_images(SUBSET, "gallery") for data in batch]
    assert keys == [hashlib.sha256(d).digest() for d in images if d]
