"""The EmbeddingProvider of a loaded model: cached, resumable, deduplicated, with bad-image handling."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from lookbench.embeddings.encoder import Encoder
from lookbench.embeddings.options import EmbedOptions
from lookbench.embeddings.pipeline import Batch, run_pipeline
from lookbench.embeddings.progress import image_progress
from lookbench.embeddings.store import EmbeddingStore, default_cache_dir, model_key
from lookbench.errors import EmbeddingError
from lookbench.hashing import sha256_digest
from lookbench.snapshot.reader import Snapshot


class ModelEmbeddings:
    """Embeds snapshot splits with `encoder`; vectors are cached per image content, so re-runs embed nothing."""

    def __init__(
        self,
        spec: str,
        encoder: Encoder,
        options: EmbedOptions | None = None,
        card: dict[str, Any] | None = None,
    ) -> None:
        self.spec = spec
        self.card = card
        self.encoder = encoder
        self.options = options or EmbedOptions()
        self.skipped: dict[tuple[str, str], dict[int, str]] = {}
        self.embedded_images = 0
        """Images run through the encoder by this provider (cache hits and repeats excluded)."""
        self._memo: dict[tuple[str, str, str], np.ndarray] = {}
        self._store: EmbeddingStore | None = None
        self._dim: int | None = None

    @property
    def preprocess_fingerprint(self) -> str:
        """Hash of the preprocessing, or the input kind for models that preprocess themselves."""
        pre = self.encoder.preprocess
        if pre is None:
            return self.encoder.input_kind
        return pre.fingerprint() + ("+jpeg-draft" if self.options.jpeg_draft else "")

    @property
    def cache_root(self) -> Path:
        """This model's cache folder."""
        base = self.options.cache_dir or default_cache_dir()
        key = model_key(
            self.encoder.model_id, self.encoder.revision, self.preprocess_fingerprint, self.options.storage_dtype
        )
        return base / "embeddings" / key

    @property
    def store(self) -> EmbeddingStore:
        """The cache, opened on first use."""
        if self._store is None:
            meta = {
                "model_id": self.encoder.model_id,
                "revision": self.encoder.revision,
                "preprocess": self.preprocess_fingerprint,
                "storage_dtype": self.options.storage_dtype,
            }
            self._store = EmbeddingStore(self.cache_root, meta, dtype=self.options.storage_dtype)
        return self._store

    def _keys(self, snapshot: Snapshot, subset: str, split: str) -> list[bytes | None]:
        keys: list[bytes | None] = []
        for _, images in snapshot.iter_images(subset, split, batch_size=256):
            keys.extend(sha256_digest(data) if data else None for data in images)
        return keys

    def _batches(
        self, snapshot: Snapshot, subset: str, split: str, todo: set[int], keys: list[bytes | None]
    ) -> Iterator[Batch]:
        size = max(1, self.options.batch_size)
        rows: list[int] = []
        datas: list[bytes | None] = []
        for start, images in snapshot.iter_images(subset, split, batch_size=256):
            for offset, data in enumerate(images):
                if start + offset not in todo:
                    continue
                rows.append(start + offset)
                datas.append(data)
                if len(rows) == size:
                    yield Batch(rows, [keys[r] or b"" for r in rows], datas)
                    rows, datas = [], []
        if rows:
            yield Batch(rows, [keys[r] or b"" for r in rows], datas)

    def embed_split(self, snapshot: Snapshot, subset: str, split: str) -> np.ndarray:
        """Embed one split (from the cache where possible); rows of skipped images are zeros."""
        memo_key = (str(snapshot.root.resolve()), subset, split)
        if memo_key in self._memo:
            return self._memo[memo_key]
        store = self.store
        keys = self._keys(snapshot, subset, split)
        where = f"snapshot {snapshot.snapshot_id} {subset}/{split}"
        bad: dict[int, str] = {row: "image has no bytes" for row, key in enumerate(keys) if key is None}
        first_row: dict[bytes, int] = {}
        todo: set[int] = set()
        for row, key in enumerate(keys):
            if key is not None and store.get(key) is None and key not in first_row:
                first_row[key] = row
                todo.add(row)
        if bad and self.options.on_bad_image == "stop":
            self._raise_bad(where, bad)

        def on_bad(row: int, message: str) -> None:
            bad[row] = message
            if self.options.on_bad_image == "stop":
                self._raise_bad(where, {row: message})

        try:
            with image_progress(
                f"{self.encoder.model_id} {subset}/{split}", len(todo), self.options.progress
            ) as advance:

                def on_vectors(rows: list[int], batch_keys: list[bytes], vectors: np.ndarray) -> None:
                    self._check_dim(vectors.shape[1])
                    store.add(batch_keys, vectors)
                    self.embedded_images += len(rows)
                    advance(len(rows))

                run_pipeline(
                    self.encoder,
                    self._batches(snapshot, subset, split, todo, keys),
                    on_vectors,
                    on_bad,
                    workers=self.options.workers,
                    draft=self.options.jpeg_draft,
                )
        finally:
            store.flush()
        out = self._assemble(keys, bad, where)
        if bad:
            self.skipped[(subset, split)] = dict(sorted(bad.items()))
        self._memo[memo_key] = out
        return out

    def embed_images(self, images: Sequence[bytes]) -> np.ndarray:
        """Embed encoded images, cached by content like snapshot rows (the builder's dedup, probes and mining)."""
        where = f"{self.encoder.model_id} images"
        keys = [sha256_digest(data) if data else None for data in images]
        bad: dict[int, str] = {row: "image has no bytes" for row, key in enumerate(keys) if key is None}
        first_row: dict[bytes, int] = {}
        for row, key in enumerate(keys):
            if key is not None and key not in first_row and self.store.get(key) is None:
                first_row[key] = row
        todo = sorted(first_row.values())
        size = max(1, self.options.batch_size)
        chunks = [todo[i : i + size] for i in range(0, len(todo), size)]

        def on_vectors(rows: list[int], batch_keys: list[bytes], vectors: np.ndarray) -> None:
            self._check_dim(vectors.shape[1])
            self.store.add(batch_keys, vectors)

        try:
            run_pipeline(
                self.encoder,
                (Batch(chunk, [keys[r] or b"" for r in chunk], [images[r] for r in chunk]) for chunk in chunks),
                on_vectors,
                bad.__setitem__,
                workers=self.options.workers,
                draft=self.options.jpeg_draft,
            )
        finally:
            self.store.flush()
        if bad and self.options.on_bad_image == "stop":
            self._raise_bad(where, bad)
        return self._assemble(keys, bad, where)

    def _assemble(self, keys: list[bytes | None], bad: dict[int, str], where: str) -> np.ndarray:
        first_bad = {keys[row]: message for row, message in bad.items()}
        vectors: list[np.ndarray | None] = []
        for row, key in enumerate(keys):
            vector = self.store.get(key) if key is not None else None
            if vector is None:
                bad.setdefault(row, first_bad.get(key, "image was not embedded"))
            vectors.append(vector)
        if self._dim is None:
            found = next((v for v in vectors if v is not None), None)
            if found is None:
                raise EmbeddingError(f"{where}: no image could be embedded")
            self._dim = int(found.shape[0])
        out = np.zeros((len(keys), self._dim), dtype=np.float32)
        for row, vector in enumerate(vectors):
            if vector is not None:
                out[row] = vector
        return out

    def _check_dim(self, dim: int) -> None:
        if self._dim is None:
            self._dim = dim
        elif dim != self._dim:
            raise EmbeddingError(f"{self.encoder.model_id}: embedding dimension changed from {self._dim} to {dim}")

    def _raise_bad(self, where: str, bad: dict[int, str]) -> None:
        row = min(bad)
        more = f" ({len(bad) - 1} more)" if len(bad) > 1 else ""
        raise EmbeddingError(f"{where} row {row}: {bad[row]}{more}; rerun with --on-bad-image skip to leave it out")

    def describe(self) -> dict[str, Any]:
        """Spec, model identity, preprocessing, cache location and skipped rows, for result files."""
        pre = self.encoder.preprocess
        return {
            "spec": self.spec,
            "name": self.encoder.model_id,
            "model_id": self.encoder.model_id,
            "revision": self.encoder.revision,
            "dim": self._dim,
            "input_kind": self.encoder.input_kind,
            "preprocess": pre.model_dump() if pre is not None else None,
            "storage_dtype": self.options.storage_dtype,
            "jpeg_draft": self.options.jpeg_draft,
            "cache": str(self.cache_root),
            "skipped": {f"{s}/{sp}": {str(r): m for r, m in rows.items()} for (s, sp), rows in self.skipped.items()},
            **{k: v for k, v in self.encoder.describe().items() if k not in ("spec",)},
            **({"card": self.card} if self.card is not None else {}),
        }
