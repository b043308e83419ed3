"""The batch's fingerprints on disk, like the history's: a store (`store.py`: codes, crop views) beside a side file of
what only a batch needs (mirror pHashes, encoded images), so every worker of a sharded dedup maps the same bytes."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa

from lookbench._util.atomic import atomic_folder
from lookbench._util.configfile import StrictConfig
from lookbench._util.hashing import file_sha256
from lookbench.build.fingerprints.crops import WINDOWS
from lookbench.build.fingerprints.hashes import to_words
from lookbench.build.fingerprints.history import check_batch, stored_codes
from lookbench.build.fingerprints.store import StoredCodes, open_store, read_manifest, write_store
from lookbench.errors import ReleaseError

STORE = "store"
SIDE_FILE = "side.arrow"
MANIFEST = "batch.json"
SIDE_SCHEMA = pa.schema([("phash_mirror", pa.string()), ("image", pa.binary())])


class BatchManifest(StrictConfig):
    """A batch folder: its row count and the side file's sha256 (the store checks its own files)."""

    rows: int
    side_sha256: str


@dataclass(frozen=True)
class BatchFingerprints:
    """The batch's stored fingerprints by row: codes and views, mirror pHash words (n, 4) and encoded images."""

    stored: StoredCodes
    mirror: np.ndarray
    images: pa.Array

    def __len__(self) -> int:
        return len(self.stored)

    def image(self, row: int) -> bytes:
        """The encoded image of a row (read from the mapped side file)."""
        return bytes(self.images[row].as_py())


def write_batch(folder: Path, rows: pa.Table, mirrors: Sequence[str], images: Sequence[bytes]) -> None:
    """Write a batch folder atomically from fingerprint rows (`FINGERPRINT_SCHEMA`), their mirror pHashes and images."""
    for batch in rows.to_batches():
        check_batch(folder, batch)
    with atomic_folder(folder) as tmp:
        write_store(tmp / STORE, [stored_codes(rows)], rows.num_rows, len(WINDOWS))
        side = pa.table({"phash_mirror": list(mirrors), "image": list(images)}, schema=SIDE_SCHEMA)
        with pa.OSFile(str(tmp / SIDE_FILE), "wb") as sink, pa.ipc.new_file(sink, SIDE_SCHEMA) as writer:
            writer.write_table(side)
        manifest = BatchManifest(rows=rows.num_rows, side_sha256=file_sha256(tmp / SIDE_FILE))
        (tmp / MANIFEST).write_text(manifest.model_dump_json(indent=1) + "\n", encoding="utf-8")


def open_batch(folder: Path) -> BatchFingerprints:
    """The batch folder, memory-mapped (ReleaseError naming the file if anything is missing or differs)."""
    path = folder / MANIFEST
    manifest = read_manifest(path, BatchManifest, "batch fingerprint")
    side = folder / SIDE_FILE
    if not side.is_file() or file_sha256(side) != manifest.side_sha256:
        raise ReleaseError(f"{side}: missing or changed since it was written (sha256 differs from {path})")
    stored = open_store(folder / STORE)
    try:
        table = pa.ipc.open_file(pa.memory_map(str(side))).read_all()
    except (OSError, pa.ArrowException) as exc:
        raise ReleaseError(f"{side}: unreadable ({exc})") from exc
    if not table.schema.equals(SIDE_SCHEMA) or table.num_rows != manifest.rows or len(stored) != manifest.rows:
        raise ReleaseError(f"{side}: {table.num_rows} rows of {table.schema.names}, expected {manifest.rows}")
    mirror = to_words(table["phash_mirror"].to_pylist())
    return BatchFingerprints(stored, mirror, table["image"].combine_chunks())
