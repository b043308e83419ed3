"""Fingerprints of every image in the earlier versions of the output folder, cached per version."""

from __future__ import annotations

import re
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from lookbench.release.dedup.hashes import phash_pair, sha256_hex
from lookbench.release.dedup.index import FingerprintIndex
from lookbench.release.sample import write_table
from lookbench.snapshot import NOISE, open_snapshot
from lookbench.snapshot.reader import Snapshot
from lookbench.snapshot.schema import SPLITS

VERSION_RE = re.compile(r"^v\d{8}$")
FINGERPRINT_SCHEMA = pa.schema([("key", pa.string()), ("sha256", pa.string()), ("phash", pa.string())])


def earlier_versions(output: Path, version: str) -> list[Path]:
    """Published version folders in `output` older than `version`, oldest first."""
    if not output.is_dir():
        return []
    return sorted(p for p in output.iterdir() if p.is_dir() and VERSION_RE.match(p.name) and p.name < version)


def snapshot_fingerprints(snap: Snapshot) -> pa.Table:
    """(key, sha256, phash) of every image of a snapshot; key is `version/subset/split#row`."""
    rows: list[dict[str, str]] = []
    parts = [(s, sp) for s in snap.subsets for sp in SPLITS]
    if snap.has_noise:
        parts.append((NOISE, "gallery"))
    for subset, split in parts:
        for start, images in snap.iter_images(subset, split):
            for offset, data in enumerate(images):
                if data:
                    key = f"{snap.snapshot_id}/{subset}/{split}#{start + offset}"
                    rows.append({"key": key, "sha256": sha256_hex(data), "phash": phash_pair(data)[0]})
    return pa.Table.from_pylist(rows, schema=FINGERPRINT_SCHEMA)


def history_index(output: Path, version: str, cache: Path) -> tuple[FingerprintIndex, list[str]]:
    """An index over all earlier versions (verified against their manifests) and their names."""
    index = FingerprintIndex()
    names = []
    for folder in earlier_versions(output, version):
        snap = open_snapshot(folder)
        cached = cache / f"{folder.name}-{snap.content_hash[:16]}.parquet"
        if cached.is_file():
            table = pq.read_table(cached)
        else:
            table = snapshot_fingerprints(snap)
            write_table(table, cached)
        for key, sha, phash in zip(*(table[c].to_pylist() for c in ("key", "sha256", "phash")), strict=True):
            index.add(key, sha, phash)
        names.append(folder.name)
    return index, names
