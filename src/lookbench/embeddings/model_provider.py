"""The EmbeddingProvider of a loaded model: cached, resumable, deduplicated, with bad-image handling."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from lookbench._util.hashing import sha256_digest
from lookbench.embeddings.device_decode import DeviceDecoder
from lookbench.embeddings.machine import auto_batch_size, auto_workers, decodes_on_device, encoder_device
from lookbench.embeddings.pipeline import Batch, run_pipeline
from lookbench.embeddings.progress import image_progress
from lookbench.embeddings.provider import EmbeddingProvider, ProviderBase
from lookbench.embeddings.store import EmbeddingStore, default_cache_dir, model_key
from lookbench.errors import EmbeddingError
from lookbench.models.embed_options import EmbedOptions
from lookbench.models.encoder import Encoder, TextTower
from lookbench.models.meta import IDENTITY, ModelMeta, ModelRun
from lookbench.snapshot.reader import Snapshot

if TYPE_CHECKING:
    from lookbench.models.spec import ModelSpec

Reload = Callable[["ModelSpec", EmbedOptions], EmbeddingProvider]
"""Loads a provider from its parsed spec and options (the registry's `resolve_model`)."""


class ModelEmbeddings(ProviderBase):
    """Embeds snapshot splits with `encoder`; vectors are cached per image content, so re-runs embed nothing."""

    returns_new_arrays = True
    """Each `embed_split` call builds a new array the caller may modify (the runner normalises it in place)."""

    def __init__(
        self,
        spec: ModelSpec | str,
        encoder: Encoder,
        options: EmbedOptions | None = None,
        meta: ModelMeta | None = None,
        reload: Reload | None = None,
    ) -> None:
        self.spec = str(spec)
        self.model_spec = None if isinstance(spec, str) else spec
        """The parsed spec another process loads the same model from (None: a model built from text, outside the
        registry, which only this process can run)."""
        self.reload = reload
        """How another process loads the same model from `model_spec` and options (shard workers)."""
        self.meta = meta
        self.encoder = encoder
        self.options = options or EmbedOptions()
        self.skipped: dict[tuple[str, str], dict[int, str]] = {}
        self._bad: dict[tuple[str, str, str], dict[int, str]] = {}
        self.embedded_images: int = 0
        """Images run through the encoder by this provider (cache hits and repeats excluded)."""
        self._store: EmbeddingStore | None = None
        self._dim: int | None = None
        self.precision = _checked_precision(encoder, self.options.precision)
        self.device_decode = decodes_on_device(encoder, self.options.decode)
        if self.device_decode and self.options.jpeg_draft:
            raise EmbeddingError(
                "jpeg_draft applies to CPU decoding; it cannot be combined with decoding on the device"
            )
        self.batch_size = self.options.batch_size or auto_batch_size(encoder)
        self.workers = (
            self.options.workers if self.options.workers is not None else auto_workers(encoder, self.device_decode)
        )
        self._decoder: DeviceDecoder | None = None

    @property
    def preprocess_fingerprint(self) -> str:
        """What changes the vectors besides weights: the preprocessing (or the input kind for models that
        preprocess themselves), JPEG draft decoding, decoding on the device, and a precision other than fp32."""
        pre = self.encoder.preprocess
        key: str
        if pre is None:
            key = self.encoder.input_kind
        else:
            key = pre.fingerprint() + ("+jpeg-draft" if self.options.jpeg_draft else "")
            key += "+device-decode" if self.device_decode else ""
        return key + (f"+{self.precision}" if self.precision not in (None, "fp32") else "")

    @property
    def decoder(self) -> DeviceDecoder | None:
        """The device decoder, created on first use."""
        if self.device_decode and self._decoder is None:
            assert self.encoder.preprocess is not None
            self._decoder = DeviceDecoder(self.encoder.preprocess, encoder_device(self.encoder))
        return self._decoder

    @property
    def cache_root(self) -> Path:
        """This model's cache folder."""
        base = self.options.cache_dir or default_cache_dir()
        key = model_key(
            self.encoder.model_id, self.encoder.revision, self.preprocess_fingerprint, self.options.storage_dtype
        )
        return base / "embeddings" / key

    @property
    def store_meta(self) -> dict[str, str]:
        """What the cache folder's meta.json records."""
        return {
            "model_id": self.encoder.model_id,
            "revision": self.encoder.revision,
            "preprocess": self.preprocess_fingerprint,
            "storage_dtype": self.options.storage_dtype,
        }

    @property
    def store(self) -> EmbeddingStore:
        """The cache, opened on first use."""
        if self._store is None:
            self._store = EmbeddingStore(self.cache_root, self.store_meta, dtype=self.options.storage_dtype)
        return self._store

    def store_writer(self) -> EmbeddingStore:
        """The cache opened for adding chunk files only (a shard's worker: the driver decides what to embed)."""
        return EmbeddingStore(self.cache_root, self.store_meta, dtype=self.options.storage_dtype, load=False)

    def remember_bad(self, snapshot: Snapshot, subset: str, split: str, bad: dict[int, str]) -> None:
        """Rows found undecodable elsewhere (by shard workers): not tried again by `embed_split`."""
        self._bad.setdefault((str(snapshot.root.resolve()), subset, split), {}).update(bad)

    def _batches(self, snapshot: Snapshot, subset: str, split: str, todo: dict[int, bytes]) -> Iterator[Batch]:
        """Batches of the `todo` rows (row -> cache key) in row order, reading only the row groups around them."""
        if not todo:
            return
        size = self.batch_size
        rows: list[int] = []
        datas: list[bytes | None] = []
        first, last = min(todo), max(todo)
        for start, images in snapshot.iter_images(subset, split, batch_size=256, start=first, stop=last + 1):
            for offset, data in enumerate(images):
                if start + offset not in todo:
                    continue
                rows.append(start + offset)
                datas.append(data)
                if len(rows) == size:
                    yield Batch(rows, [todo[r] for r in rows], datas)
                    rows, datas = [], []
        if rows:
            yield Batch(rows, [todo[r] for r in rows], datas)

    def embed_rows(
        self,
        snapshot: Snapshot,
        subset: str,
        split: str,
        todo: dict[int, bytes],
        store: EmbeddingStore,
        on_bad: Callable[[int, str], None],
        advance: Callable[[int], None] = lambda _n: None,
    ) -> int:
        """Embed the `todo` rows (row -> cache key) of a split into `store`; returns how many were embedded."""
        embedded = 0

        def on_vectors(rows: list[int], batch_keys: list[bytes], vectors: np.ndarray) -> None:
            nonlocal embedded
            self._check_dim(vectors.shape[1])
            store.add(batch_keys, vectors)
            embedded += len(rows)
            advance(len(rows))

        try:
            run_pipeline(
                self.encoder,
                self._batches(snapshot, subset, split, todo),
                on_vectors,
                on_bad,
                workers=self.workers,
                draft=self.options.jpeg_draft,
                decoder=self.decoder,
            )
        finally:
            store.flush()
        return embedded

    def embed_split(self, snapshot: Snapshot, subset: str, split: str) -> np.ndarray:
        """Embed one split (from the cache where possible); rows of skipped images are zeros.

        Each call returns a new array built from the cache (callers keep what they need: the runner keeps one
        checked copy); images that failed once are not decoded again by later calls.
        """
        memo_key = (str(snapshot.root.resolve()), subset, split)
        store = self.store
        keys = snapshot.image_keys(subset, split)
        where = f"snapshot {snapshot.snapshot_id} {subset}/{split}"
        bad: dict[int, str] = {row: "image has no bytes" for row, key in enumerate(keys) if key is None}
        bad.update(self._bad.get(memo_key, {}))
        todo: dict[int, bytes] = {}
        seen: set[bytes] = set()
        for row, key in enumerate(keys):
            if key is not None and row not in bad and key not in seen and store.get(key) is None:
                seen.add(key)
                todo[row] = key
        if bad and self.options.on_bad_image == "stop":
            self._raise_bad(where, bad)

        def on_bad(row: int, message: str) -> None:
            bad[row] = message
            if self.options.on_bad_image == "stop":
                self._raise_bad(where, {row: message})

        if todo:
            label = f"{self.encoder.model_id} {subset}/{split}"
            with image_progress(label, len(todo), self.options.progress) as advance:

                def counted(images: int) -> None:
                    self.embedded_images += images
                    advance(images)

                self.embed_rows(snapshot, subset, split, todo, store, on_bad, counted)
        return self._finish(memo_key, keys, bad, where)

    def _finish(
        self, memo_key: tuple[str, str, str], keys: list[bytes | None], bad: dict[int, str], where: str
    ) -> np.ndarray:
        out = self._assemble(keys, bad, where)
        if bad:
            self.skipped[memo_key[1:]] = dict(sorted(bad.items()))
            self._bad[memo_key] = dict(bad)
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
        size = self.batch_size
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
                workers=self.workers,
                draft=self.options.jpeg_draft,
                decoder=self.decoder,
            )
        finally:
            self.store.flush()
        if bad and self.options.on_bad_image == "stop":
            self._raise_bad(where, bad)
        return self._assemble(keys, bad, where)

    def _assemble(self, keys: list[bytes | None], bad: dict[int, str], where: str) -> np.ndarray:
        first_bad = {keys[row]: message for row, message in bad.items()}
        rows = self.store.rows_of(keys)
        for row in np.flatnonzero(rows < 0).tolist():
            bad.setdefault(row, first_bad.get(keys[row], "image was not embedded"))
        if not (rows >= 0).any():
            raise EmbeddingError(f"{where}: no image could be embedded")
        if self._dim is None:
            self._dim = self.store.dim
        return self.store.gather(rows)

    def _check_dim(self, dim: int) -> None:
        if self._dim is None:
            self._dim = dim
        elif dim != self._dim:
            raise EmbeddingError(f"{self.encoder.model_id}: embedding dimension changed from {self._dim} to {dim}")

    def _raise_bad(self, where: str, bad: dict[int, str]) -> None:
        row = min(bad)
        more = f" ({len(bad) - 1} more)" if len(bad) > 1 else ""
        raise EmbeddingError(f"{where} row {row}: {bad[row]}{more}; rerun with --on-bad-image skip to leave it out")

    def text_tower(self) -> TextTower | None:
        """The encoder's text tower."""
        return self.encoder.text_tower()

    def describe(self) -> ModelRun:
        """Spec, model identity, preprocessing, cache location and skipped rows, for result files.

        The encoder's own description goes to `details`, except the keys the record or its meta names (its `kind`,
        say), which take their place; the spec, card and precision are the provider's.
        """
        pre = self.encoder.preprocess
        details = dict(self.encoder.describe())
        named = {
            k: details.pop(k) for k in list(details) if k in ModelRun.model_fields and k not in ("details", "meta")
        }
        identity = {"model_id": self.encoder.model_id, "revision": self.encoder.revision, "embed_dim": self._dim}
        identity |= {k: details.pop(k) for k in IDENTITY if k in details}
        if "dim" in details:
            identity["embed_dim"] = details.pop("dim")
        meta = (self.meta or ModelMeta()).merged(**identity, spec=self.spec)
        run = {
            "input_kind": self.encoder.input_kind,
            "preprocess": pre.model_dump() if pre is not None else None,
            "storage_dtype": self.options.storage_dtype,
            "jpeg_draft": self.options.jpeg_draft,
            "decode": "device" if self.device_decode else "cpu",
            "batch_size": self.batch_size,
            "workers": self.workers,
            "cache": str(self.cache_root),
            "skipped": {f"{s}/{sp}": {str(r): m for r, m in rows.items()} for (s, sp), rows in self.skipped.items()},
            **named,
            **({"precision": self.precision} if self.precision is not None else {}),
            "details": details,
        }
        return meta.result_record(str(run.pop("name", self.encoder.model_id)), **run)


def _checked_precision(encoder: Encoder, requested: str) -> str | None:
    """The precision the encoder resolved at construction; None for encoders outside torch (ONNX, APIs, Python
    models), which accept only `auto` and `fp32`."""
    if encoder.precision is None and requested not in ("auto", "fp32"):
        raise EmbeddingError(
            f"--precision {requested} applies to torch-backed models; {encoder.model_id} runs at its own precision"
        )
    return encoder.precision
