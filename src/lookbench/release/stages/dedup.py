"""Dedup: drop duplicates of earlier versions and within the batch (exact, perceptual and colour, crop, embedding)."""

from __future__ import annotations

import re
import shutil
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa

from lookbench._util.hashing import json_sha256, sha256_hex
from lookbench.errors import ReleaseError
from lookbench.release.config import DedupConfig
from lookbench.release.embedding import ImageEmbedder, image_embedder
from lookbench.release.fingerprints.batch import open_batch, write_batch
from lookbench.release.fingerprints.embedding import embedding_duplicates
from lookbench.release.fingerprints.groups import Edge, resolve
from lookbench.release.records import Sample, write_table
from lookbench.release.sharding import (
    CANDIDATE_SCHEMA,
    CPU_SHARD_ITEMS,
    DECISION_SCHEMA,
    HASH_SCHEMA,
    HASHING,
    DedupPairs,
    ImageHashes,
    Pair,
)
from lookbench.release.stages.base import StageContext, StageResult, StageStats, run_items, samples_of, save_samples
from lookbench.search.duplicates.history import (
    FINGERPRINT_SCHEMA,
    history_store,
    prune_history_stores,
    versions_fingerprint,
)
from lookbench.search.duplicates.store import open_store
from lookbench.shards.executor import Needs
from lookbench.shards.table import MapResult, TableJob

PAIR_ITEMS = 512
"""Batch rows or pairs per candidate or decision shard."""
BATCH_NAME = re.compile(r"batch-[0-9a-f]{16}")
"""How a batch's fingerprint folder is named (by its content): older ones are removed when a new one is written."""
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
        ("via", pa.string()),
        ("hops", pa.int64()),
    ]
)


class DedupStats(StageStats):
    """What was dropped, against what, by which tier."""

    input: int
    kept: int
    excluded_as_duplicates_of_earlier_versions: dict[str, int]
    merged_within_batch: dict[str, int]
    kept_apart_by_colour: int
    candidate_pairs: int = 0
    accepted_pairs: int = 0
    transitive_chains: int = 0
    """Images dropped through another one: no accepted pair of their own with the image kept (docs/release.md)."""
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
    """A sample left out as a duplicate: of which image (its group's first), and by which accepted pair (with `via`,
    `hops` accepted pairs away from it)."""

    sample: Sample
    against: str
    duplicate_of: str
    via: str
    tier: str
    distance: float
    hops: int

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
            "tier": self.tier,
            "duplicate_of": self.duplicate_of,
            "distance": float(self.distance),
            "via": self.via,
            "hops": self.hops,
        }


def exact_edges(hashed: Hashed, rank: list[tuple[Any, ...]]) -> list[Edge]:
    """Batch images with equal bytes, each paired with the first of them (decided by their stored sha256)."""
    rows: dict[str, list[int]] = {}
    for row, found in enumerate(hashed.rows):
        rows.setdefault(str(found["sha256"]), []).append(row)
    edges: list[Edge] = []
    for same in rows.values():
        first = min(same, key=rank.__getitem__)
        edges.extend(Edge(row, first, "exact", 0.0) for row in same if row != first)
    return edges


def history_keys(store: Path | None, rows: list[int]) -> dict[int, str]:
    """The keys (`version/subset/split#row`) of some rows of the history store."""
    if store is None or not rows:
        return {}
    keys = open_store(store).keys
    return {row: str(keys[row].as_py()) for row in rows}


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


@dataclass(frozen=True)
class Hashed:
    """The batch's decodable samples in their canonical order (the order of the batch store's rows), their hashing
    rows (`HASH_SCHEMA`), and why each other sample's image does not decode."""

    samples: list[Sample]
    rows: list[dict[str, Any]]
    bad: list[tuple[Sample, str]]


def canonical(samples: list[Sample]) -> list[Sample]:
    """The samples in an order that does not depend on the order they came in."""
    return sorted(
        samples,
        key=lambda s: (
            s.sample_id,
            s.first_seen_at,
            s.image_sha256,
            s.source,
            s.source_url or "",
            s.image_url or "",
            s.product_id,
            s.category,
            s.main_attribute,
            s.title or "",
        ),
    )


def hash_as_shards(ctx: StageContext, stage: str, samples: list[Sample]) -> Hashed:
    """Each sample's fingerprint and crop view, or why its image does not decode: every distinct image decoded and
    hashed once, by one shard (CPU work: tasks on Ray)."""
    first: dict[str, bytes] = {}
    digests = [sha256_hex(sample.image) for sample in samples]
    for digest, sample in zip(digests, samples, strict=True):
        first.setdefault(digest, sample.image)
    job = TableJob("hash", Needs("cpu"), HASH_SCHEMA, ImageHashes())
    result = run_items(ctx, stage, job, list(first.values()), list(first), HASHING, CPU_SHARD_ITEMS)
    found = dict(zip(first, result.rows, strict=True))
    hashed = Hashed([], [], [])
    for digest, sample in zip(digests, samples, strict=True):
        row = found[digest]
        if row["bad"] is not None:
            hashed.bad.append((sample, str(row["bad"])))
        else:
            hashed.samples.append(sample)
            hashed.rows.append(row)
    return hashed


def batch_folder(ctx: StageContext, stage: str, hashed: Hashed) -> Path:
    """The batch's fingerprints on disk (`batch.py`), named by their content: reused when it is there and whole,
    rebuilt (and reported) when it is damaged."""
    digest = json_sha256([HASHING, [s.sample_id for s in hashed.samples], [r["sha256"] for r in hashed.rows]])
    folder = ctx.folder(stage) / f"batch-{digest[:16]}"
    if folder.is_dir():
        try:
            open_batch(folder)
            return folder
        except ReleaseError as exc:
            ctx.report(stage, str(folder), f"{exc}; rebuilt")
            shutil.rmtree(folder)
    for old in ctx.folder(stage).glob("batch-*"):
        if old.is_dir() and not old.is_symlink() and BATCH_NAME.fullmatch(old.name):
            shutil.rmtree(old)
    columns = {name: [row[name] for row in hashed.rows] for name in ("sha256", "phash", "windows", "grey", "aspect")}
    table = pa.table({"key": [s.sample_id for s in hashed.samples], **columns}, schema=FINGERPRINT_SCHEMA)
    mirrors = [str(row["phash_mirror"]) for row in hashed.rows]
    mirror_windows = [row["mirror_windows"] for row in hashed.rows]
    write_batch(folder, table, mirrors, mirror_windows, [s.image for s in hashed.samples])
    return folder


def rank_of(sample: Sample, row: int, priority: list[str]) -> tuple[Any, ...]:
    """A batch image's place in the order a group keeps its first of: earliest first seen, then the source's place
    in `dedup.source_priority` (unlisted after), then sample id (and row, for equal ids). History images come
    before every batch image, oldest version first."""
    place = priority.index(sample.source) if sample.source in priority else len(priority)
    return (1, sample.first_seen_at, place, sample.sample_id, row)


class DedupStage:
    """Duplicate groups over the batch and the earlier versions, each kept as its first image (docs/release.md)."""

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

    def sharded(self, ctx: StageContext, job: TableJob, items: list[Any], keys: list[str], what: str) -> MapResult:
        """One of dedup's table jobs on the build's executor (CPU work: each worker maps the stores once)."""
        return run_items(ctx, self.name, job, items, keys, json_sha256([self.settings.fingerprint(), what]), PAIR_ITEMS)

    def run(self, ctx: StageContext, previous: Path | None) -> StageResult:
        """Hash the batch and store its fingerprints; find candidate pairs and decide them, as shards; then keep the
        first image of every group of accepted pairs."""
        samples = canonical(samples_of(previous))
        store, versions = history_store(
            ctx.output, ctx.version, ctx.state / "fingerprints", lambda path, why: ctx.report(self.name, str(path), why)
        )
        hashed = hash_as_shards(ctx, self.name, samples)
        for sample, why in hashed.bad:
            ctx.report(sample.source, sample.source_url or sample.sample_id, f"dedup: left out, {why}")
        kept, dropped, counts = self.groups(ctx, hashed, store)
        return self.finish(ctx, samples, kept, dropped, counts, store, versions)

    def groups(
        self, ctx: StageContext, hashed: Hashed, store: Path | None
    ) -> tuple[list[Sample], list[Dropped], Counter[str]]:
        """(kept samples, dropped ones, counters): candidates and decisions as shards, then the groups."""
        found = hashed.samples
        if not found:
            return [], [], Counter()
        folder = batch_folder(ctx, self.name, hashed)
        sides = (ctx.output, store, folder, self.settings)
        what = [folder.name, None if store is None else store.name]
        keys = [f"{row}:{r['sha256']}" for row, r in enumerate(hashed.rows)]
        job = TableJob("candidates", Needs("cpu"), CANDIDATE_SCHEMA, DedupPairs(*sides, "candidates"))
        candidates = self.sharded(ctx, job, list(range(len(found))), keys, json_sha256(what))
        rank = [rank_of(sample, row, self.settings.source_priority) for row, sample in enumerate(found)]
        pairs: set[Pair] = set()
        for row, got in enumerate(candidates.rows):
            pairs.update(("earlier", row, other) for other in got["earlier"])
            for other in got["batch"]:
                later, earlier = (row, other) if rank[other] < rank[row] else (other, row)
                pairs.add(("batch", later, earlier))
        ordered = sorted(pairs)
        job = TableJob("decisions", Needs("cpu"), DECISION_SCHEMA, DedupPairs(*sides, "decisions"))
        pair_keys = [f"{a}:{q}:{i}" for a, q, i in ordered]
        decisions = self.sharded(ctx, job, ordered, pair_keys, json_sha256([*what, "decisions"]))
        edges = exact_edges(hashed, rank)
        counts: Counter[str] = Counter(candidate_pairs=len(ordered))
        offset = len(found)  # history row h is node offset + h
        for (against, query, other), decided in zip(ordered, decisions.rows, strict=True):
            counts["kept_apart_by_colour"] += decided["colour_rejected"]
            if decided["tier"] is not None:
                node = other + offset if against == "earlier" else other
                edges.append(Edge(query, node, decided["tier"], decided["distance"]))
        counts["accepted_pairs"] = len(edges)
        ranks: dict[int, tuple[Any, ...]] = dict(enumerate(rank))
        ranks.update((e.b, (0, e.b - offset)) for e in edges if e.b >= offset)
        names = history_keys(store, sorted({e.b - offset for e in edges if e.b >= offset}))

        def name(node: int) -> str:
            return found[node].sample_id if node < offset else names[node - offset]

        dropped_rows: set[int] = set()
        dropped: list[Dropped] = []
        for found_drop in resolve(edges, ranks):
            if found_drop.node >= offset:
                continue  # an earlier version's image is never dropped
            dropped_rows.add(found_drop.node)
            against = "earlier" if found_drop.representative >= offset else "batch"
            dropped.append(
                Dropped(
                    found[found_drop.node],
                    against,
                    name(found_drop.representative),
                    name(found_drop.via),
                    found_drop.tier,
                    found_drop.distance,
                    found_drop.hops,
                )
            )
            counts["transitive_chains"] += found_drop.hops > 1
        kept = [sample for row, sample in enumerate(found) if row not in dropped_rows]
        return kept, dropped, counts

    def finish(
        self,
        ctx: StageContext,
        samples: list[Sample],
        kept: list[Sample],
        dropped: list[Dropped],
        found: Counter[str],
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
            dropped.extend(
                Dropped(kept[i], against, match.key, match.key, match.tier, match.distance, 1)
                for i, (against, match) in found_embedded.items()
            )
            kept = [sample for i, sample in enumerate(kept) if i not in found_embedded]
        kept.sort(key=lambda s: (s.first_seen_at, s.sample_id))
        photo_dates(kept)
        pruned = [] if store is None else prune_history_stores(store.parent, store)
        table = pa.Table.from_pylist([d.row() for d in dropped], schema=DROPPED_SCHEMA)
        write_table(table, ctx.folder(self.name) / "dropped.parquet")
        counts: dict[str, Counter[str]] = {"earlier": Counter(), "batch": Counter()}
        for drop in dropped:
            counts[drop.against][drop.tier] += 1
        stats = DedupStats(
            input=len(samples),
            kept=len(kept),
            excluded_as_duplicates_of_earlier_versions=dict(counts["earlier"]),
            merged_within_batch=dict(counts["batch"]),
            kept_apart_by_colour=found["kept_apart_by_colour"],
            candidate_pairs=found["candidate_pairs"],
            accepted_pairs=found["accepted_pairs"],
            transitive_chains=found["transitive_chains"],
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
