"""Remembered sha256 digests of snapshot files and of the images inside them, so a re-run hashes nothing.

The index holds one small file per parquet file (`<cache>/digests/<hash of its path>.npz`): its size, modification
time, sha256 and the sha256 of every row's image. While size and mtime are unchanged the digests are reused as they
are (the check git makes for its index); when either changes the file is hashed again, and only if its sha256
changed too are its images hashed again. A damaged or foreign index entry is ignored and rewritten.
"""

from __future__ import annotations

import io
import logging
import zipfile
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from lookbench._util.atomic import write_bytes_atomic
from lookbench._util.cache import default_cache_dir
from lookbench._util.cores import usable_cores
from lookbench._util.hashing import digest, digest_size, file_sha256, sha256_hex

log = logging.getLogger(__name__)

INDEX_FORMAT = 1


@dataclass(frozen=True)
class ImageDigests:
    """Each row's image digest (sha256 unless said otherwise) in row order; `present[i]` is False where row i has no
    bytes (its slot holds zeros)."""

    digests: np.ndarray
    present: np.ndarray

    def per_row(self) -> list[bytes | None]:
        """One digest per row, None where the image has no bytes."""
        return [d.tobytes() if ok else None for d, ok in zip(self.digests, self.present, strict=True)]


@dataclass
class _Entry:
    path: str
    size: int
    mtime_ns: int
    sha256: str
    images: dict[str, ImageDigests]


class DigestIndex:
    """File and image digests keyed on (absolute path, size, mtime); `folder=None` keeps them in memory only."""

    def __init__(self, folder: Path | None) -> None:
        self.folder = folder
        self._entries: dict[str, _Entry] = {}

    @classmethod
    def default(cls) -> DigestIndex:
        """The index under the default cache folder."""
        return cls(default_cache_dir() / "digests")

    def file_sha256(self, path: Path) -> str:
        """The file's hex sha256, hashed only when its size or mtime changed since it was last hashed."""
        return self._entry(path).sha256

    def image_digests(
        self, path: Path, column: str, compute: Callable[[], ImageDigests], rows: int | None = None
    ) -> ImageDigests:
        """sha256 of each row's image bytes in one parquet file (`compute` hashes them), computed again only when
        the file's content changed, or when `rows` (the file's row count) disagrees with what is remembered."""
        entry = self._entry(path)
        known = entry.images.get(column)
        if known is None or (rows is not None and len(known.digests) != rows):
            entry.images[column] = compute()
            self._save(entry)
        return entry.images[column]

    def _entry(self, path: Path) -> _Entry:
        resolved = str(path.resolve())
        stat = path.stat()
        entry = self._entries.get(resolved) or self._load(resolved)
        if entry is not None and (entry.size, entry.mtime_ns) == (stat.st_size, stat.st_mtime_ns):
            self._entries[resolved] = entry
            return entry
        sha = file_sha256(path)
        images = entry.images if entry is not None and entry.sha256 == sha else {}
        entry = _Entry(resolved, stat.st_size, stat.st_mtime_ns, sha, images)
        self._entries[resolved] = entry
        self._save(entry)
        return entry

    def _file(self, resolved: str) -> Path | None:
        if self.folder is None:
            return None
        return self.folder / f"{sha256_hex(resolved.encode())[:32]}.npz"

    def _load(self, resolved: str) -> _Entry | None:
        file = self._file(resolved)
        if file is None or not file.is_file():
            return None
        try:
            with np.load(file, allow_pickle=False) as data:
                if int(data["format"]) != INDEX_FORMAT or str(data["path"]) != resolved:
                    return None
                columns = [str(c) for c in data["columns"]]
                images = {c: ImageDigests(data[f"digests_{c}"], data[f"present_{c}"]) for c in columns}
                entry = _Entry(resolved, int(data["size"]), int(data["mtime_ns"]), str(data["sha256"]), images)
            for found in entry.images.values():
                if (
                    found.digests.ndim != 2
                    or found.digests.shape[1] not in (20, 32)
                    or len(found.present) != len(found.digests)
                ):
                    raise ValueError(f"digest shapes {found.digests.shape} / {found.present.shape}")
            return entry
        except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as exc:
            log.warning("digest index entry %s is unreadable (%s): the file is hashed again", file, exc)
            return None

    def _save(self, entry: _Entry) -> None:
        file = self._file(entry.path)
        if file is None:
            return
        arrays: dict[str, np.ndarray] = {
            "format": np.array(INDEX_FORMAT),
            "path": np.array(entry.path),
            "size": np.array(entry.size),
            "mtime_ns": np.array(entry.mtime_ns),
            "sha256": np.array(entry.sha256),
            "columns": np.array(sorted(entry.images), dtype=str),
        }
        for column, found in entry.images.items():
            arrays[f"digests_{column}"] = found.digests
            arrays[f"present_{column}"] = found.present
        buf = io.BytesIO()
        np.savez(buf, **arrays)  # type: ignore[arg-type]
        try:
            write_bytes_atomic(file, buf.getvalue())
        except OSError as exc:  # a read-only cache only costs the hashing next time
            log.warning("cannot write digest index entry %s (%s)", file, exc)


def hash_images(batches: Iterable[list[bytes | None]], algorithm: str = "sha256") -> ImageDigests:
    """Hash batches of image bytes (None: no image), a batch per task on up to 8 threads (hashlib releases the GIL
    for large inputs)."""
    empty = bytes(digest_size(algorithm))

    def digest_all(values: list[bytes | None]) -> bytes:
        return b"".join(digest(data, algorithm) if data else empty for data in values)

    present: list[bool] = []
    with ThreadPoolExecutor(max_workers=min(8, usable_cores()), thread_name_prefix="lookbench-hash") as pool:
        pending: list[Future[bytes]] = []
        for values in batches:
            pending.append(pool.submit(digest_all, values))
            present.extend(bool(v) for v in values)
        parts = [future.result() for future in pending]
    array = np.frombuffer(b"".join(parts), dtype=np.uint8).reshape(-1, len(empty)).copy()
    return ImageDigests(array, np.asarray(present, dtype=bool))
