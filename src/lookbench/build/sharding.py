"""How builder stages run their per-item work (labelling, judging, detecting, hashing) as shards on the executor.

Each stage keeps its own logic; only the per-item calls move into shards: `work/<stage>/shards/<job>/`, one parquet
file of outcomes per shard beside its marker. Items are cut into shards in their stage's order, so the outcomes, and
every work table built from them, are the same whatever executor and however many workers ran them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa

from lookbench._util.hashing import json_sha256
from lookbench._util.images import BadImageError
from lookbench.build.config import ApiConfig, CropPairs
from lookbench.build.fingerprints.hashes import HASH_SIZE, Fingerprint, fingerprint
from lookbench.build.fingerprints.history import store_index
from lookbench.build.fingerprints.index import FingerprintIndex, Lookup, Match
from lookbench.build.vlm.cache import AnswerCache
from lookbench.build.vlm.client import ChatClient
from lookbench.build.vlm.usage import Usage
from lookbench.shards.executor import Needs, Progress
from lookbench.shards.table import Mapped

HTTP_SHARD_ITEMS = 256
"""Items per shard for endpoint work: a few minutes of requests, so an outage loses little."""
CPU_SHARD_ITEMS = 1024
"""Items per shard for hashing."""
HASH_SCHEMA = pa.schema(
    [("sha256", pa.string()), ("phash", pa.string()), ("phash_mirror", pa.string()), ("bad", pa.string())]
)
"""A hashing shard's output: one image's sha256 and pHashes per row, or why it does not decode."""
HASHING = json_sha256(["phash", HASH_SIZE, "rgb-on-white"])
"""What changes the hashes: the pHash size, and images decoded by lookbench._util.images (alpha composited on white)."""


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
    """Fingerprints (sha256, pHash of the image and of its mirror) of a shard's encoded images."""

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
                rows.append({"sha256": None, "phash": None, "phash_mirror": None, "bad": str(exc)})
                continue
            rows.append({"sha256": found.sha256, "phash": found.phash, "phash_mirror": found.phash_mirror, "bad": None})
        progress(len(images))
        return Mapped(rows, bad=bad)

    def close(self) -> None:
        """Nothing to release."""


LOOKUP_SCHEMA = pa.schema(
    [("key", pa.string()), ("tier", pa.string()), ("distance", pa.float64()), ("colour_rejected", pa.int64())]
)
"""A history look-up shard's output: per query the match (nulls when none) and the candidates the colour check
kept apart."""


@dataclass(frozen=True)
class HistoryLookups:
    """Look-ups of a shard's fingerprints in the earlier versions (their memory-mapped store, which each worker maps
    once): a look-up does not depend on the others, so the answers are the same however the queries are cut."""

    output: Path
    store: Path | None
    threshold: int
    colour_threshold: float
    crops: bool
    crop_threshold: int
    crop_pairs: CropPairs = "all"

    def open(self, slots: int) -> HistoryLookupRows:
        """Map the store."""
        return HistoryLookupRows(self, store_index(self.output, self.store, self.crop_pairs))


@dataclass
class HistoryLookupRows:
    """An opened history look-up job."""

    job: HistoryLookups
    index: FingerprintIndex

    def __call__(self, queries: list[Fingerprint], progress: Progress, /) -> Mapped:
        """One row per query."""
        job, rows = self.job, []
        for query in queries:
            found = self.index.lookup(query, job.threshold, job.colour_threshold, job.crops, job.crop_threshold)
            match = found.match
            rows.append(
                {
                    "key": None if match is None else match.key,
                    "tier": None if match is None else match.tier,
                    "distance": None if match is None else float(match.distance),
                    "colour_rejected": found.colour_rejected,
                }
            )
        progress(len(queries))
        return Mapped(rows)

    def close(self) -> None:
        """Nothing to release (the maps close with the index)."""


def lookup_of(row: dict[str, Any]) -> Lookup:
    """A query's Lookup from its row of a history look-up job."""
    match = None if row["key"] is None else Match(row["key"], row["tier"], row["distance"])
    return Lookup(match, row["colour_rejected"])


def fingerprints_of(rows: list[dict[str, Any]], images: list[bytes]) -> list[Fingerprint | str]:
    """Each image's Fingerprint from a hashing job's rows (decoded later, only if a look-up needs colours), or why
    it does not decode."""
    return [
        Fingerprint(row["sha256"], row["phash"], row["phash_mirror"], data) if row["bad"] is None else str(row["bad"])
        for row, data in zip(rows, images, strict=True)
    ]
