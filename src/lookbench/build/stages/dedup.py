"""Dedup: drop duplicates of earlier versions and within the batch (exact, perceptual and colour, crop, embedding)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa

from lookbench._util.hashing import json_sha256, sha256_hex
from lookbench.build.config import DedupConfig
from lookbench.build.embedding import ImageEmbedder, image_embedder
from lookbench.build.fingerprints.embedding import embedding_duplicates
from lookbench.build.fingerprints.hashes import Fingerprint
from lookbench.build.fingerprints.history import history_store, prune_history_stores, versions_fingerprint
from lookbench.build.fingerprints.index import FingerprintIndex, Lookup, Match
from lookbench.build.fingerprints.store import open_store
from lookbench.build.records import Sample, write_table
from lookbench.build.sharding import (
    CPU_SHARD_ITEMS,
    HASH_SCHEMA,
    HASHING,
    LOOKUP_SCHEMA,
    HistoryLookups,
    ImageHashes,
    fingerprints_of,
    lookup_of,
)
from lookbench.build.stages.base import (
    StageContext,
    StageResult,
    StageStats,
    run_items,
    samples_of,
    save_samples,
    stage_shards,
)
from lookbench.shards.executor import Needs, ShardError
from lookbench.shards.table import RowStream, TableItems, TableJob

DROPPED_SCHEMA = pa.schema(
    [
        ("sample_id", pa.string()),
        ("source", pa.string()),
        ("source_url", pa.string()),
        ("image_url", pa.string()),
        ("image_sha256", pa.string()),
        ("against", pa.string()),
        ("tier", pa.string()),
        ("duplicate_of", pa.string()),
        ("distance", pa.float64()),
    ]
)


class DedupStats(StageStats):
    """What was dropped, against what, by which tier."""

    input: int
    kept: int
    excluded_as_duplicates_of_earlier_versions: dict[str, int]
    merged_within_batch: dict[str, int]
    kept_apart_by_colour: int
    earlier_versions: list[str]
    earlier_images: int
    phash_threshold: int
    colour_threshold: float
    crops: bool = False
    crop_phash_threshold: int | None = None
    crop_pairs: str | None = None
    embedding_model: str | None
    pruned_history_stores: list[str] = []


@dataclass(frozen=True)
class Dropped:
    """A sample left out as a duplicate."""

    sample: Sample
    against: str
    match: Match

    def row(self) -> dict[str, object]:
        """Its line in `dedup/dropped.parquet`."""
        s = self.sample
        return {
            "sample_id": s.sample_id,
            "source": s.source,
            "source_url": s.source_url,
            "image_url": s.image_url,
            "image_sha256": s.image_sha256,
            "against": self.against,
            "tier": self.match.tier,
            "duplicate_of": self.match.key,
            "distance": float(self.match.distance),
        }


def photo_dates(samples: list[Sample]) -> None:
    """Every crop of one street photo takes the photo's date: the earliest `first_seen_at` among its crops."""
    earliest: dict[str, Sample] = {}
    for sample in samples:
        if sample.raw_image:
            key = sha256_hex(sample.raw_image)
            if key not in earliest or sample.first_seen_at < earliest[key].first_seen_at:
                earliest[key] = sample
    for sample in samples:
        if sample.raw_image:
            sample.first_seen_at = earliest[sha256_hex(sample.raw_image)].first_seen_at


def hash_as_shards(ctx: StageContext, stage: str, samples: list[Sample]) -> list[Fingerprint | str]:
    """Each sample's fingerprint, or why its image does not decode: every distinct image decoded and pHashed once,
    by one shard (CPU work: tasks on Ray)."""
    first: dict[str, bytes] = {}
    digests = [sha256_hex(sample.image) for sample in samples]
    for digest, sample in zip(digests, samples, strict=True):
        first.setdefault(digest, sample.image)
    job = TableJob("hash", Needs("cpu"), HASH_SCHEMA, ImageHashes())
    images = list(first.values())
    result = run_items(ctx, stage, job, images, list(first), HASHING, CPU_SHARD_ITEMS)
    found = dict(zip(first, fingerprints_of(result.rows, images), strict=True))
    return [found[digest] for digest in digests]


class DedupStage:
    """Earliest-seen wins: the batch is scanned in `first_seen_at` order; a kept sample takes its group's min date."""

    name = "dedup"
    stats_type = DedupStats

    def __init__(self, settings: DedupConfig) -> None:
        self.settings = settings
        self._embedder: ImageEmbedder | None = None

    def check(self) -> None:
        """Load the embedding model, if one is configured, so a bad spec stops the build before collect."""
        if self.settings.embedding_model and self._embedder is None:
            self._embedder = image_embedder(self.settings.embedding_model, "dedup.embedding_model")

    def fingerprint(self, ctx: StageContext) -> str:
        """The dedup settings and the earlier versions looked up."""
        return json_sha256([self.settings.fingerprint(), versions_fingerprint(ctx.output, ctx.version)])

    def earlier_lookups(self, ctx: StageContext, store: Path, found: list[Fingerprint]) -> RowStream:
        """Each decodable sample's look-up row in the earlier versions, as shards on the executor (CPU work: each
        worker maps the history store; the answers do not depend on the batch, so they are the same on any
        executor), streamed: the first shards' answers are read while the later shards run."""
        settings = self.settings
        mapper = HistoryLookups(
            ctx.output,
            store,
            settings.phash_threshold,
            settings.colour_threshold,
            settings.crops,
            settings.crop_phash_threshold,
            settings.crop_pairs,
        )
        job = TableJob("history", Needs("cpu"), LOOKUP_SCHEMA, mapper)
        what = json_sha256([settings.fingerprint(), HASHING, store.name])
        # Copies: a shard run in this process decodes its queries in the shards' thread, the batch pass in this one.
        items = [query.undecoded() for query in found]
        folder, track = stage_shards(ctx, self.name, job)
        work = TableItems(job, folder, items, [query.sha256 for query in found], what, ctx.shards, CPU_SHARD_ITEMS)
        return RowStream(ctx.executor, work, track)

    def run(self, ctx: StageContext, previous: Path | None) -> StageResult:
        """Fingerprint the batch, look each sample up in the earlier versions and in the samples kept so far: the
        look-ups in the earlier versions run as shards while the batch is scanned in order, each sample as soon as
        its look-up there is in."""
        samples = sorted(samples_of(previous), key=lambda s: (s.first_seen_at, s.sample_id))
        store, versions = history_store(
            ctx.output, ctx.version, ctx.state / "fingerprints", lambda path, why: ctx.report(self.name, str(path), why)
        )
        queries = hash_as_shards(ctx, self.name, samples)
        found = [query for query in queries if not isinstance(query, str)]
        if store is None:
            kept, dropped, rejected = self.scan_batch(ctx, samples, queries, iter([Lookup(None)] * len(found)))
        else:
            with self.earlier_lookups(ctx, store, found) as stream:
                rows = iter(stream)
                kept, dropped, rejected = self.scan_batch(ctx, samples, queries, map(lookup_of, rows))
                if next(rows, None) is not None:
                    raise ShardError(f"{self.name}: the history look-ups hold more rows than the batch has images")
            assert stream.run is not None
            ctx.say(f"{self.name}: history {stream.run.summary()}")
        return self.finish(ctx, samples, kept, dropped, rejected, store, versions)

    def scan_batch(
        self, ctx: StageContext, samples: list[Sample], queries: list[Fingerprint | str], earlier: Iterator[Lookup]
    ) -> tuple[list[Sample], list[Dropped], int]:
        """The in-order pass: each decodable sample's look-up in the earlier versions (next of `earlier`), then, if
        none matched, in the samples kept so far; (kept, dropped, candidates kept apart by colour)."""
        settings = self.settings
        kept: list[Sample] = []
        by_id: dict[str, Sample] = {}
        batch = FingerprintIndex(lambda key: by_id[key].image, crop_pairs=settings.crop_pairs)
        dropped: list[Dropped] = []
        rejected = 0
        for sample, query in zip(samples, queries, strict=True):
            if isinstance(query, str):
                ctx.report(sample.source, sample.source_url or sample.sample_id, f"dedup: left out, {query}")
                continue
            for against in ("earlier", "batch"):
                found = (
                    next(earlier)
                    if against == "earlier"
                    else batch.lookup(
                        query,
                        settings.phash_threshold,
                        settings.colour_threshold,
                        settings.crops,
                        settings.crop_phash_threshold,
                    )
                )
                rejected += found.colour_rejected
                if found.match is not None:
                    dropped.append(Dropped(sample, against, found.match))
                    if against == "batch":
                        first = by_id[found.match.key]
                        first.first_seen_at = min(first.first_seen_at, sample.first_seen_at)
                    break
            else:
                batch.add(sample.sample_id, query.sha256, query.phash, query.windows if settings.crops else None)
                by_id[sample.sample_id] = sample
                kept.append(sample)
        return kept, dropped, rejected

    def finish(
        self,
        ctx: StageContext,
        samples: list[Sample],
        kept: list[Sample],
        dropped: list[Dropped],
        rejected: int,
        store: Path | None,
        versions: list[str],
    ) -> StageResult:
        """The embedding tier, the photos' dates, the dropped table and the stats."""
        settings = self.settings
        if settings.embedding_model:
            self.check()
            assert self._embedder is not None
            found_embedded = embedding_duplicates(
                self._embedder,
                [s.image for s in kept],
                [s.sample_id for s in kept],
                ctx.output,
                ctx.version,
                settings.embedding_threshold,
            )
            dropped.extend(Dropped(kept[i], against, match) for i, (against, match) in found_embedded.items())
            kept = [sample for i, sample in enumerate(kept) if i not in found_embedded]
        photo_dates(kept)
        pruned = [] if store is None else prune_history_stores(store.parent, store)
        table = pa.Table.from_pylist([d.row() for d in dropped], schema=DROPPED_SCHEMA)
        write_table(table, ctx.folder(self.name) / "dropped.parquet")
        counts: dict[str, Counter[str]] = {"earlier": Counter(), "batch": Counter()}
        for drop in dropped:
            counts[drop.against][drop.match.tier] += 1
        stats = DedupStats(
            input=len(samples),
            kept=len(kept),
            excluded_as_duplicates_of_earlier_versions=dict(counts["earlier"]),
            merged_within_batch=dict(counts["batch"]),
            kept_apart_by_colour=rejected,
            earlier_versions=versions,
            earlier_images=0 if store is None else len(open_store(store)),
            phash_threshold=settings.phash_threshold,
            colour_threshold=settings.colour_threshold,
            crops=settings.crops,
            crop_phash_threshold=settings.crop_phash_threshold if settings.crops else None,
            crop_pairs=settings.crop_pairs if settings.crops else None,
            embedding_model=settings.embedding_model,
            pruned_history_stores=pruned,
        )
        return StageResult(save_samples(ctx, self.name, kept), stats)
