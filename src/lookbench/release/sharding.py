"""How builder stages run their per-item work (labelling, judging, detecting, hashing) as shards on the executor.

Each stage keeps its own logic; only the per-item calls move into shards: `work/<stage>/shards/<job>/`, one parquet
file of outcomes per shard beside its marker. Items are cut into shards in their stage's order, so the outcomes, and
every work table built from them, are the same whatever executor and however many workers ran them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pyarrow as pa

from lookbench._util.hashing import json_sha256
from lookbench._util.images import BadImageError
from lookbench.release.config import ApiConfig, DedupConfig
from lookbench.release.fingerprints.batch import open_batch
from lookbench.release.fingerprints.pairs import Entries, candidate_rows, decide_pair
from lookbench.release.vlm.cache import AnswerCache
from lookbench.release.vlm.client import ChatClient
from lookbench.release.vlm.usage import Usage
from lookbench.search.duplicates.crops import WINDOWS_ID
from lookbench.search.duplicates.hashes import HASH_SIZE, fingerprint
from lookbench.search.duplicates.history import PublishedImages
from lookbench.search.duplicates.store import open_store
from lookbench.shards.executor import Needs, Progress, ShardError
from lookbench.shards.table import Mapped

HTTP_SHARD_ITEMS = 256
"""Items per shard for endpoint work: a few minutes of requests, so an outage loses little."""
CPU_SHARD_ITEMS = 1024
"""Items per shard for hashing."""
HASH_SCHEMA = pa.schema(
    [
        ("sha256", pa.string()),
        ("phash", pa.string()),
        ("phash_mirror", pa.string()),
        ("windows", pa.binary()),
        ("mirror_windows", pa.binary()),
        ("grey", pa.binary()),
        ("aspect", pa.float64()),
        ("bad", pa.string()),
    ]
)
"""A hashing shard's output: one image's sha256, pHashes and crop view (window hashes of the image and of its mirror,
and the grey thumbnail, null for an image too flat, as in a history store) per row, or why it does not decode."""
HASHING = json_sha256(["phash", HASH_SIZE, "rgb-on-white", WINDOWS_ID, "mirror-windows"])
"""What changes the hashes: the pHash size, images decoded by lookbench._util.images (alpha composited on white), and
the crop tier's windows and views."""


def http_needs(api: ApiConfig) -> Needs:
    """An endpoint job: its workers together keep at most `api.concurrency` requests in flight."""
    return Needs("http", concurrency=api.concurrency, endpoint=api.endpoint)


def asked_fingerprint(api: ApiConfig, prompt_version: str, *more: object) -> str:
    """What changes an endpoint's answers: endpoint, model, prompt, sampling, image size sent, and `more`."""
    return json_sha256([api.endpoint, api.model, prompt_version, api.seed, api.max_tokens, api.max_side, *more])


def usage_of(api: ApiConfig, stats: dict[str, float]) -> dict[str, Any]:
    """The usage summary (requests, tokens, cost) of counters summed over shards."""
    usage = Usage(api.price_per_million_input, api.price_per_million_output)
    usage.absorb(stats)
    return usage.summary()


class UsageDelta:
    """A worker's client counts across the shards it runs; each shard keeps the counts of its own requests."""

    def __init__(self, usage: Usage, cache: AnswerCache) -> None:
        self.usage = usage
        self.cache = cache
        self._counts = usage.counters()
        self._unusable = len(cache.unusable)

    def mapped(self, rows: list[dict[str, Any]]) -> Mapped:
        """The shard's rows with its counters and the cache files it found unusable; starts the next shard."""
        counts = self.usage.counters()
        stats = {name: value - self._counts.get(name, 0) for name, value in counts.items()}
        problems = list(self.cache.unusable[self._unusable :])
        self._counts, self._unusable = counts, len(self.cache.unusable)
        return Mapped(rows, stats=stats, problems=problems)


@dataclass
class AskedRows:
    """An opened endpoint job: a shard's items through `ask` (an annotator's or a judge's), one row per outcome."""

    ask: Callable[[list[Any]], list[Any]]
    usage: UsageDelta
    client: ChatClient

    def __call__(self, items: list[Any], progress: Progress, /) -> Mapped:
        """Outcome rows with the shard's usage."""
        outcomes = self.ask(items)
        progress(len(items))
        return self.usage.mapped([asdict(outcome) for outcome in outcomes])

    def close(self) -> None:
        """Close the client."""
        self.client.close()


@dataclass(frozen=True)
class ImageHashes:
    """Fingerprints (sha256, pHash of the image and of its mirror, crop view) of a shard's encoded images."""

    def open(self, slots: int) -> ImageHashes:
        """Nothing to load."""
        return self

    def __call__(self, images: list[bytes], progress: Progress, /) -> Mapped:
        """One row per image; an image that does not decode gets its reason instead of hashes."""
        rows: list[dict[str, Any]] = []
        bad: dict[int, str] = {}
        for index, data in enumerate(images):
            try:
                found = fingerprint(data)
            except BadImageError as exc:
                bad[index] = str(exc)
                rows.append(dict.fromkeys(HASH_SCHEMA.names) | {"bad": str(exc)})
                continue
            windows = found.windows
            rows.append(
                {
                    "sha256": found.sha256,
                    "phash": found.phash,
                    "phash_mirror": found.phash_mirror,
                    "windows": None if windows is None else windows.astype(">u8").tobytes(),
                    "mirror_windows": None if windows is None else found.mirror_view.windows.astype(">u8").tobytes(),
                    "grey": None if windows is None else found.view.grey_bytes(),
                    "aspect": found.view.aspect,
                    "bad": None,
                }
            )
        progress(len(images))
        return Mapped(rows, bad=bad)

    def close(self) -> None:
        """Nothing to release."""


CANDIDATE_SCHEMA = pa.schema([("earlier", pa.list_(pa.int64())), ("batch", pa.list_(pa.int64()))])
"""A candidate shard's output: per batch row, the history rows and the batch rows it is paired with."""
DECISION_SCHEMA = pa.schema([("tier", pa.string()), ("distance", pa.float64()), ("colour_rejected", pa.int64())])
"""A decision shard's output: per pair, the tier that accepted it (null: kept apart), its distance, and the colour
checks that kept it apart on the way."""
Pair = tuple[str, int, int]
"""A pair to decide: ("earlier", batch row, history row) or ("batch", later batch row, earlier batch row)."""


@dataclass(frozen=True)
class DedupPairs:
    """One step of the sharded dedup over the history's store (None: no earlier version) and the batch's folder:
    `candidates` (batch rows in, their candidate rows out) or `decisions` (pairs in, decisions out). Each worker maps
    both once; their rows do not depend on how the work is cut, so neither do candidates and decisions."""

    output: Path
    history: Path | None
    batch: Path
    settings: DedupConfig
    step: Literal["candidates", "decisions"]

    def open(self, slots: int) -> PairRows:
        """Map the history and the batch."""
        pairs = self.settings.crop_pairs
        found = open_batch(self.batch)
        batch = Entries(found.stored, found.image, found.mirror, found.mirror_windows, pairs)
        if self.history is None:
            return PairRows(self, batch, None)
        stored = open_store(self.history)
        published = PublishedImages(self.output)
        history = Entries(stored, lambda row: published(str(stored.keys[row].as_py())), crop_pairs=pairs)
        return PairRows(self, batch, history)


@dataclass
class PairRows:
    """An opened step: the mapped history and batch, and the batch rows grouped by sha256 (equal bytes are paired
    by the driver)."""

    job: DedupPairs
    batch: Entries
    history: Entries | None
    _same: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None

    def same_bytes(self, row: int) -> np.ndarray:
        """The batch rows with the bytes of `row`, itself included."""
        if self._same is None:
            _, group = np.unique(np.asarray(self.batch.stored.sha), axis=0, return_inverse=True)
            group = group.ravel()
            order = np.argsort(group, kind="stable")
            starts = np.concatenate([[0], np.cumsum(np.bincount(group))])
            self._same = (group, order, starts)
        group, order, starts = self._same
        return order[starts[group[row]] : starts[group[row] + 1]]

    def candidates(self, rows: list[int]) -> list[dict[str, Any]]:
        """Each batch row's history rows and batch rows (other bytes than its own)."""
        settings, history = self.job.settings, self.history
        none = np.zeros(0, dtype=np.int64)
        earlier = (
            [[]] * len(rows) if history is None else candidate_rows(self.batch, rows, history, settings, lambda _: none)
        )
        batch = candidate_rows(self.batch, rows, self.batch, settings, self.same_bytes)
        return [{"earlier": e, "batch": b} for e, b in zip(earlier, batch, strict=True)]

    def decision(self, pair: Pair) -> dict[str, Any]:
        """A pair's decision."""
        against, query, other = pair
        indexed = self.batch if against == "batch" else self.history
        if indexed is None:
            raise ShardError(f"a pair with history row {other} but the build has no earlier version")
        found = decide_pair(self.batch, query, indexed, other, self.job.settings)
        return {"tier": found.tier, "distance": found.distance, "colour_rejected": found.colour_rejected}

    def __call__(self, items: list[Any], progress: Progress, /) -> Mapped:
        """One row per item."""
        rows = self.candidates(items) if self.job.step == "candidates" else [self.decision(item) for item in items]
        progress(len(items))
        return Mapped(rows)

    def close(self) -> None:
        """Nothing to release (the maps close with the arrays)."""
