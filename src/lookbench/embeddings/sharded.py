"""Embedding as sharded work: row ranges of snapshot splits embedded by workers into the one embedding cache.

A shard's vectors are chunk files of the model's ordinary cache folder (what a single-process run writes), and its
marker sits in `<cache>/shards/<subset>/<split>/`. Each image is embedded by exactly one shard: the one holding its
first row among the splits being embedded. Shards are multiples of the batch size, so every image is embedded in
the same batch whatever runs it; the driver then assembles each split from the cache, in row order, as
`ModelEmbeddings.embed_split` does without shards.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from lookbench.embeddings.machine import encoder_device
from lookbench.embeddings.model_provider import ModelEmbeddings, Reload
from lookbench.embeddings.progress import image_progress
from lookbench.embeddings.provider import EmbeddingProvider, ProviderBase
from lookbench.embeddings.store import EmbeddingStore
from lookbench.models.embed_options import EmbedOptions
from lookbench.models.encoder import TextTower
from lookbench.models.meta import ModelRun
from lookbench.shards.executor import Executor, Needs, Progress, ShardError, ShardTask, cuda_devices
from lookbench.shards.marker import ShardMarker, new_marker, write_marker
from lookbench.shards.plan import Shard, digest_fingerprint, shard_ranges
from lookbench.shards.runner import ShardRun, run_shards
from lookbench.snapshot.reader import Snapshot

if TYPE_CHECKING:
    from lookbench.models.spec import ModelSpec

SHARD_ROWS = 512
"""Rows per shard when --shards is not given (at least 8 batches: a shard's pipeline start-up stays small)."""
SHARD_BATCHES = 8


@dataclass(frozen=True)
class SplitRows:
    """What one embedding shard does: the rows of a split to embed (with their cache keys) out of the rows it owns."""

    location: str
    subset: str
    split: str
    rows: tuple[int, ...]
    keys: tuple[bytes, ...]
    owned: int
    """Rows whose image this shard answers for (the first row of each image among the splits embedded)."""


@dataclass(frozen=True)
class EmbedJob:
    """Embed snapshot rows with the model `spec` under `options` (as the driver resolved them) into `store_root`."""

    model: str
    """The model's canonical spec text, for messages."""
    spec: ModelSpec | None
    """The parsed spec a worker loads the model from, sent as it is (None: built outside the registry)."""
    options: EmbedOptions
    store_root: str
    needs: Needs
    name: str = "embed"
    load: Reload | None = None
    """How a worker loads the model (the registry's `resolve_model`, sent by reference)."""
    loaded: ModelEmbeddings | None = field(default=None, compare=False, repr=False)
    """The driver's own model, used when the shards run in the driver's process (never sent to a worker)."""

    def __reduce__(self) -> tuple[Any, ...]:
        return (EmbedJob, (self.model, self.spec, self.options, self.store_root, self.needs, self.name, self.load))

    def open(self, slots: int) -> EmbedWorker:
        """Load the model in this worker (in the driver's process: use its model); its cache must be the driver's."""
        provider: EmbeddingProvider | None = self.loaded
        if provider is None:
            if self.load is None or self.spec is None:
                raise ShardError(f"{self.model}: this model was built outside the registry; a worker cannot load it")
            provider = self.load(self.spec, self.options)
        if not isinstance(provider, ModelEmbeddings):
            raise ShardError(f"{self.model}: not a model this worker can embed with")
        if str(provider.cache_root) != self.store_root:
            raise ShardError(
                f"{self.model}: this worker keys its cache as {provider.cache_root}, the driver as {self.store_root} "
                "(a different model revision, precision or decoding here: install the same versions everywhere)"
            )
        return EmbedWorker(provider)


class EmbedWorker:
    """A loaded model: embeds a shard's rows into new chunk files of the cache, then writes the shard's marker."""

    def __init__(self, provider: ModelEmbeddings) -> None:
        self.provider = provider
        self.store = provider.store_writer()
        self._snapshots: dict[str, Snapshot] = {}

    def _snapshot(self, location: str) -> Snapshot:
        if location not in self._snapshots:
            from lookbench.snapshot import open_snapshot

            self._snapshots[location] = open_snapshot(location, verify=False)
        return self._snapshots[location]

    def run(self, task: ShardTask, progress: Progress) -> ShardMarker:
        """Embed the shard's rows; undecodable ones are recorded in its marker."""
        started = time.monotonic()
        work: SplitRows = task.payload
        bad: dict[int, str] = {}
        todo = dict(zip(work.rows, work.keys, strict=True))
        snapshot = self._snapshot(work.location)
        embedded = self.provider.embed_rows(
            snapshot, work.subset, work.split, todo, self.store, bad.__setitem__, progress
        )
        marker = new_marker(
            task.shard,
            work.owned - len(bad),
            bad=bad,
            stats={"embedded": embedded},
            seconds=round(time.monotonic() - started, 3),
        )
        return write_marker(task.shard, marker)

    def close(self) -> None:
        """Nothing to release: the model goes with the process."""


def snapshot_location(snapshot: Snapshot) -> str:
    """How workers open the snapshot: its folder (local executors, shared storage), or its hub address."""
    location = snapshot.location or ""
    return location if location.startswith("hf://") else str(snapshot.root.resolve())


@dataclass
class _Planned:
    """One split's shards and which of its rows each one answers for."""

    subset: str
    split: str
    keys: list[bytes | None]
    owned: dict[Shard, list[int]]


class ShardedEmbeddings(ProviderBase):
    """An EmbeddingProvider that embeds the splits an evaluation needs as shards on an executor (`prepare`), then
    serves every split from the cache exactly as the `ModelEmbeddings` it wraps would."""

    returns_new_arrays = True

    def __init__(self, inner: ModelEmbeddings, executor: Executor, shards: int | None = None) -> None:
        self.inner = inner
        self.spec = inner.spec
        self.meta = inner.meta
        self.skipped = inner.skipped
        """Rows left out per split: the wrapped model's own table."""
        self.executor = executor
        self.shards = shards
        self.runs: list[ShardRun] = []
        self._prepared: set[tuple[str, str, str]] = set()

    @property
    def embedded_images(self) -> int:
        """Images embedded by the shards run (and by the driver, if any)."""
        return self.inner.embedded_images

    @embedded_images.setter
    def embedded_images(self, count: int) -> None:
        self.inner.embedded_images = count

    def job(self) -> EmbedJob:
        """What workers are sent: the parsed spec, the driver's resolved options and its cache folder."""
        inner = self.inner
        on_gpu = encoder_device(inner.encoder).startswith("cuda")
        options = inner.options.model_copy(
            update={
                "cache_dir": inner.cache_root.parent.parent,
                "batch_size": inner.batch_size,
                "precision": inner.precision or inner.options.precision,
                "decode": "device" if inner.device_decode else "cpu",
                "progress": False,
            }
        )
        needs = Needs("gpu" if on_gpu else "cpu", stateful=True)
        return EmbedJob(
            inner.spec, inner.model_spec, options, str(inner.cache_root), needs, load=inner.reload, loaded=inner
        )

    def rows_per_shard(self) -> int:
        """Default shard size: SHARD_ROWS, or 8 batches when batches are larger."""
        return max(SHARD_ROWS, SHARD_BATCHES * self.inner.batch_size)

    def prepare(self, snapshot: Snapshot, splits: Sequence[tuple[str, str]]) -> ShardRun:
        """Embed every split in `splits` not yet prepared, as shards on the executor; the vectors land in the cache."""
        root = str(snapshot.root.resolve())
        wanted = [(s, sp) for s, sp in dict.fromkeys(splits) if (root, s, sp) not in self._prepared]
        store = self.inner.store
        plans = self._plan(snapshot, wanted, store)
        tasks: list[ShardTask] = []
        location = snapshot_location(snapshot)
        for plan in plans:
            for shard, own in plan.owned.items():
                todo = [row for row in own if store.get(plan.keys[row] or b"") is None]
                keys = tuple(plan.keys[row] or b"" for row in todo)
                work = SplitRows(location, plan.subset, plan.split, tuple(todo), keys, len(own))
                tasks.append(ShardTask(shard, work, units=len(todo)))
        owned = {shard: (plan, own) for plan in plans for shard, own in plan.owned.items()}

        def holds(task: ShardTask, marker: ShardMarker) -> bool:
            plan, own = owned[task.shard]
            return all(row in marker.bad or store.get(plan.keys[row] or b"") is not None for row in own)

        run = run_shards(self.executor, self.job(), tasks, holds, self._track, refresh=store.refresh)
        self.runs.append(run)
        self.inner.embedded_images += int(sum(run.markers[s].stats.get("embedded", 0) for s in run.ran))
        for plan in plans:
            bad: dict[int, str] = {}
            for shard in plan.owned:
                bad.update(run.markers[shard].bad)
            self.inner.remember_bad(snapshot, plan.subset, plan.split, bad)
            self._prepared.add((root, plan.subset, plan.split))
        return run

    def _plan(self, snapshot: Snapshot, splits: list[tuple[str, str]], store: EmbeddingStore) -> list[_Planned]:
        """Cut each split into shards; each image is owned by its first row among all the splits."""
        first: dict[bytes, tuple[str, str, int]] = {}
        keyed: list[tuple[str, str, list[bytes | None]]] = []
        for subset, split in splits:
            keys = snapshot.image_keys(subset, split)
            keyed.append((subset, split, keys))
            for row, key in enumerate(keys):
                if key is not None:
                    first.setdefault(key, (subset, split, row))
        folder_root = store.root / "shards"
        job_sha256 = store.root.name
        plans = []
        for subset, split, keys in keyed:
            owned: dict[Shard, list[int]] = {}
            for start, stop in shard_ranges(len(keys), self.shards, self.rows_per_shard(), self.inner.batch_size):
                shard = Shard(
                    f"embed {subset}/{split}",
                    start,
                    stop,
                    digest_fingerprint(keys[start:stop]),
                    job_sha256,
                    folder_root / subset / split,
                )
                owned[shard] = [
                    row
                    for row in range(start, stop)
                    if (key := keys[row]) is not None and first[key] == (subset, split, row)
                ]
            plans.append(_Planned(subset, split, keys, owned))
        return plans

    def _track(self, total: int) -> AbstractContextManager[Progress]:
        workers = self.executor.workers(self.job())
        label = f"{self.inner.encoder.model_id} on {self.executor.name} ({workers} worker{'s' * (workers != 1)})"
        return image_progress(label, total, self.inner.options.progress)

    def embed_split(self, snapshot: Snapshot, subset: str, split: str) -> np.ndarray:
        """The split's vectors from the cache (embedded as shards first, if `prepare` has not covered it)."""
        if (str(snapshot.root.resolve()), subset, split) not in self._prepared:
            self.prepare(snapshot, [(subset, split)])
        return self.inner.embed_split(snapshot, subset, split)

    def text_tower(self) -> TextTower | None:
        """The driver's model's text tower."""
        return self.inner.text_tower()

    def embed_images(self, images: Sequence[bytes]) -> np.ndarray:
        """Encoded images embedded by the driver's model (the builder's few images are not sharded)."""
        return self.inner.embed_images(images)

    def describe(self) -> ModelRun:
        """The wrapped model's description, plus how it was sharded."""
        shards = sum(len(run.markers) for run in self.runs)
        ran = sum(len(run.ran) for run in self.runs)
        sharding = {**self.executor.describe(), "shards": shards, "shards_run": ran}
        return self.inner.describe().model_copy(update={"sharding": sharding})


def wants_shards(provider: object, executor: str, processes: int | None, shards: int | None) -> bool:
    """Shard when asked to (`--executor ray`, `--processes`, `--shards`) or when a model on CUDA sees several GPUs;
    otherwise this process embeds as it always has."""
    if not isinstance(provider, ModelEmbeddings):
        return False
    if executor != "local" or processes is not None or shards is not None:
        return True
    return encoder_device(provider.encoder).startswith("cuda") and cuda_devices() > 1
