"""On-disk embedding cache: one folder per model key, checksummed chunk files keyed by image sha256."""

from __future__ import annotations

import bisect
import io
import json
import logging
import uuid
import zipfile
from pathlib import Path

import numpy as np

from lookbench._util.atomic import write_bytes_atomic, write_text_atomic
from lookbench._util.cache import default_cache_dir
from lookbench._util.hashing import parts_sha256, sha256_hex

log = logging.getLogger(__name__)

__all__ = ["CHUNK_ROWS", "EmbeddingStore", "default_cache_dir", "model_key"]

CHUNK_ROWS = 256


def model_key(model_id: str, revision: str, preprocess: str, dtype: str) -> str:
    """Folder name of a model's cache: readable prefix plus a hash of everything that changes its vectors."""
    digest = parts_sha256(model_id, revision, preprocess, dtype)[:16]
    slug = "".join(c if c.isalnum() or c in "-_." else "_" for c in model_id)[:60]
    return f"{slug}-{digest}"


def _checksum(keys: np.ndarray, vectors: np.ndarray) -> str:
    return sha256_hex(keys.tobytes() + vectors.tobytes())


class EmbeddingStore:
    """Cached vectors of one model key; new vectors are written every `chunk_rows`, so a killed run resumes.

    Vectors stay in the arrays they were loaded or computed in (one per chunk); a dict maps each image digest to
    its row across them, and `gather` copies many rows at once, a chunk at a time. A shard's worker opens it with
    `load=False`: it only adds chunk files (the driver knows what is cached and sends only what is not).
    """

    def __init__(
        self,
        root: Path,
        meta: dict[str, str],
        dtype: str = "float32",
        chunk_rows: int = CHUNK_ROWS,
        load: bool = True,
    ) -> None:
        self.root = root
        self.dtype = np.dtype(dtype)
        self.chunk_rows = chunk_rows
        self.corrupt: list[str] = []
        self._index: dict[bytes, int] = {}
        self._blocks: list[np.ndarray] = []
        self._starts: list[int] = []
        self._rows = 0
        self._pending_keys: list[bytes] = []
        self._pending_vectors: list[np.ndarray] = []
        self._seen: set[str] = set()
        root.mkdir(parents=True, exist_ok=True)
        meta_path = root / "meta.json"
        if not meta_path.is_file():
            write_text_atomic(meta_path, json.dumps(meta, indent=2, sort_keys=True))
        if load:
            self.refresh()

    def refresh(self) -> None:
        """Load chunk files written since (by this process or by shard workers), in name order."""
        for path in sorted(self.root.glob("chunk-*.npz")):
            if path.name not in self._seen:
                self._seen.add(path.name)
                self._load_chunk(path)

    def _load_chunk(self, path: Path) -> None:
        try:
            with np.load(path, allow_pickle=False) as data:
                keys, vectors, checksum = data["keys"], data["vectors"], str(data["checksum"])
            if keys.ndim != 2 or keys.shape[1] != 32 or vectors.ndim != 2 or vectors.shape[0] != keys.shape[0]:
                raise ValueError(f"shapes {keys.shape} / {vectors.shape} do not match")
            if self._blocks and vectors.shape[1] != self._blocks[0].shape[1]:
                raise ValueError(f"dimension {vectors.shape[1]} differs from {self._blocks[0].shape[1]}")
            if _checksum(keys, vectors) != checksum:
                raise ValueError("checksum mismatch")
        except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as exc:
            log.warning("cache chunk %s is corrupt (%s): removed, its images will be re-embedded", path, exc)
            self.corrupt.append(path.name)
            path.unlink(missing_ok=True)
            return
        self._append([key.tobytes() for key in keys], vectors)

    def _append(self, keys: list[bytes], vectors: np.ndarray) -> None:
        fresh = [i for i, key in enumerate(keys) if key not in self._index]
        if len(fresh) < len(keys):
            keys, vectors = [keys[i] for i in fresh], vectors[fresh]
        for i, key in enumerate(keys):
            self._index.setdefault(key, self._rows + i)
        if keys:
            self._starts.append(self._rows)
            self._blocks.append(vectors)
            self._rows += len(keys)

    def __len__(self) -> int:
        return len(self._index)

    @property
    def dim(self) -> int | None:
        """Vector dimension (None while empty)."""
        return int(self._blocks[0].shape[1]) if self._blocks else None

    def get(self, key: bytes) -> np.ndarray | None:
        """The cached vector of an image sha256 digest, or None."""
        row = self._index.get(key)
        if row is None:
            return None
        block = bisect.bisect_right(self._starts, row) - 1
        return self._blocks[block][row - self._starts[block]]

    def rows_of(self, keys: list[bytes | None]) -> np.ndarray:
        """Each key's row in the store, -1 where it has none (or the key is None)."""
        index = self._index
        return np.fromiter((-1 if k is None else index.get(k, -1) for k in keys), dtype=np.int64, count=len(keys))

    def gather(self, rows: np.ndarray) -> np.ndarray:
        """float32 vectors of the given store rows; zeros where a row is -1."""
        out = np.zeros((len(rows), self.dim or 0), dtype=np.float32)
        found = np.flatnonzero(rows >= 0)
        if not len(found):
            return out
        block_of = np.searchsorted(np.asarray(self._starts), rows[found], side="right") - 1
        order = np.argsort(block_of, kind="stable")
        bounds = np.flatnonzero(np.diff(block_of[order])) + 1
        for group in np.split(order, bounds):
            block = int(block_of[group[0]])
            targets = found[group]
            out[targets] = self._blocks[block][rows[targets] - self._starts[block]]
        return out

    def add(self, keys: list[bytes], vectors: np.ndarray) -> None:
        """Remember new vectors; a chunk file is written whenever enough are pending."""
        vectors = np.asarray(vectors, dtype=self.dtype)
        first: dict[bytes, int] = {}
        for i, key in enumerate(keys):
            if key not in self._index:
                first.setdefault(key, i)
        new = sorted(first.values())
        if not new:
            return
        keys, vectors = [keys[i] for i in new], vectors[new]
        self._append(keys, vectors)
        self._pending_keys.extend(keys)
        self._pending_vectors.append(vectors)
        if len(self._pending_keys) >= self.chunk_rows:
            self.flush()

    def flush(self) -> None:
        """Write pending vectors as one atomic, checksummed chunk file."""
        if not self._pending_keys:
            return
        keys = np.frombuffer(b"".join(self._pending_keys), dtype=np.uint8).reshape(-1, 32)
        vectors = np.concatenate(self._pending_vectors).astype(self.dtype)
        buf = io.BytesIO()
        np.savez(buf, keys=keys, vectors=vectors, checksum=np.array(_checksum(keys, vectors)))
        name = f"chunk-{uuid.uuid4().hex}.npz"
        write_bytes_atomic(self.root / name, buf.getvalue())
        self._seen.add(name)
        self._pending_keys.clear()
        self._pending_vectors.clear()
