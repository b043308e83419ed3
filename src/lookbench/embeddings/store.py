"""On-disk embedding cache: one folder per model key, checksummed chunk files keyed by image sha256."""

from __future__ import annotations

import io
import json
import logging
import os
import uuid
import zipfile
from pathlib import Path

import numpy as np

from lookbench.atomic import write_bytes_atomic, write_text_atomic
from lookbench.hashing import parts_sha256, sha256_hex

log = logging.getLogger(__name__)

CHUNK_ROWS = 256


def default_cache_dir() -> Path:
    """`$LOOKBENCH_CACHE` or `~/.cache/lookbench`."""
    env = os.environ.get("LOOKBENCH_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "lookbench"


def model_key(model_id: str, revision: str, preprocess: str, dtype: str) -> str:
    """Folder name of a model's cache: readable prefix plus a hash of everything that changes its vectors."""
    digest = parts_sha256(model_id, revision, preprocess, dtype)[:16]
    slug = "".join(c if c.isalnum() or c in "-_." else "_" for c in model_id)[:60]
    return f"{slug}-{digest}"


def _checksum(keys: np.ndarray, vectors: np.ndarray) -> str:
    return sha256_hex(keys.tobytes() + vectors.tobytes())


class EmbeddingStore:
    """Cached vectors of one model key; new vectors are written every `chunk_rows`, so a killed run resumes."""

    def __init__(self, root: Path, meta: dict[str, str], dtype: str = "float32", chunk_rows: int = CHUNK_ROWS) -> None:
        self.root = root
        self.dtype = np.dtype(dtype)
        self.chunk_rows = chunk_rows
        self.corrupt: list[str] = []
        self._index: dict[bytes, np.ndarray] = {}
        self._pending_keys: list[bytes] = []
        self._pending_vectors: list[np.ndarray] = []
        root.mkdir(parents=True, exist_ok=True)
        meta_path = root / "meta.json"
        if not meta_path.is_file():
            write_text_atomic(meta_path, json.dumps(meta, indent=2, sort_keys=True))
        for path in sorted(root.glob("chunk-*.npz")):
            self._load_chunk(path)

    def _load_chunk(self, path: Path) -> None:
        try:
            with np.load(path, allow_pickle=False) as data:
                keys, vectors, checksum = data["keys"], data["vectors"], str(data["checksum"])
            if keys.ndim != 2 or keys.shape[1] != 32 or vectors.shape[0] != keys.shape[0]:
                raise ValueError(f"shapes {keys.shape} / {vectors.shape} do not match")
            if _checksum(keys, vectors) != checksum:
                raise ValueError("checksum mismatch")
        except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as exc:
            log.warning("cache chunk %s is corrupt (%s): removed, its images will be re-embedded", path, exc)
            self.corrupt.append(path.name)
            path.unlink(missing_ok=True)
            return
        for key, vector in zip(keys, vectors, strict=True):
            self._index[key.tobytes()] = vector

    def __len__(self) -> int:
        return len(self._index) + len(self._pending_keys)

    def get(self, key: bytes) -> np.ndarray | None:
        """The cached vector of an image sha256 digest, or None."""
        return self._index.get(key)

    def add(self, keys: list[bytes], vectors: np.ndarray) -> None:
        """Remember new vectors; a chunk file is written whenever enough are pending."""
        vectors = np.asarray(vectors, dtype=self.dtype)
        for key, vector in zip(keys, vectors, strict=True):
            if key in self._index:
                continue
            self._index[key] = vector
            self._pending_keys.append(key)
            self._pending_vectors.append(vector)
        if len(self._pending_keys) >= self.chunk_rows:
            self.flush()

    def flush(self) -> None:
        """Write pending vectors as one atomic, checksummed chunk file."""
        if not self._pending_keys:
            return
        keys = np.frombuffer(b"".join(self._pending_keys), dtype=np.uint8).reshape(-1, 32)
        vectors = np.stack(self._pending_vectors).astype(self.dtype)
        buf = io.BytesIO()
        np.savez(buf, keys=keys, vectors=vectors, checksum=np.array(_checksum(keys, vectors)))
        write_bytes_atomic(self.root / f"chunk-{uuid.uuid4().hex}.npz", buf.getvalue())
        self._pending_keys.clear()
        self._pending_vectors.clear()
