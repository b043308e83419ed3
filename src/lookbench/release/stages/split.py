"""Split: products first seen before the evaluation window train (every image, split `train`); of the rest, per
subset one query and one gallery positive per product with 2+ images; single images are distractors."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path

from lookbench._util.hashing import parts_sha256, sha1_hex
from lookbench.release.config import SplitConfig
from lookbench.release.records import Sample
from lookbench.release.stages.base import StageContext, StageResult, StageStats, samples_of, save_samples
from lookbench.snapshot.schema import NOISE, TRAIN


class SplitCounts(StageStats):
    """Placements in one subset."""

    query: int = 0
    gallery: int = 0
    distractors: int = 0
    left_out: int = 0
    train: int = 0


class SplitStats(StageStats):
    """Placements per subset, and the products held out for training."""

    subsets: dict[str, SplitCounts]
    train_products: int = 0


def item_id(source: str, product_id: str) -> str:
    """A stable item_ID for a product of a source."""
    return sha1_hex(f"{source}\0{product_id}")[:16]


def _order(seed: int, text: str) -> str:
    return parts_sha256(str(seed), text)


class SplitStage:
    """A product's images never straddle splits under different ids: extras beyond the pair are left out."""

    name = "split"
    stats_type = SplitStats

    def __init__(self, settings: SplitConfig) -> None:
        self.settings = settings

    def check(self) -> None:
        """Nothing to load."""

    def fingerprint(self, ctx: StageContext) -> str:
        """The split settings."""
        return self.settings.fingerprint()

    def run(self, ctx: StageContext, previous: Path | None) -> StageResult:
        """Assign (subset, split, item_ID) to samples; write one row per placement."""
        seed = self.settings.seed
        samples = samples_of(previous)
        training = self.training_products(samples)
        groups: dict[tuple[str, str, str], list[Sample]] = defaultdict(list)
        for sample in samples:
            for subset in sample.subsets:
                groups[(subset, sample.source, sample.product_id)].append(sample)
        placed: list[Sample] = []
        stats: dict[str, SplitCounts] = {}
        for (subset, source, product), members in sorted(groups.items(), key=lambda kv: _order(seed, repr(kv[0]))):
            counts = stats.setdefault(subset, SplitCounts())
            if subset != NOISE and (source, product) in training:
                ident = item_id(source, product)
                members = sorted(members, key=lambda s: _order(seed, s.image_sha256))
                placed += [replace(s, subset=subset, split=TRAIN, item_ID=ident) for s in members]
                counts.train += len(members)
                continue
            # a street-look crop (it has a scene) is the query; its product's studio image the gallery positive
            members = sorted(members, key=lambda s: (s.raw_image is None, _order(seed, s.image_sha256)))
            if subset == NOISE:
                placed += [replace(s, subset=NOISE, split="gallery", item_ID=f"noise-{s.sample_id}") for s in members]
                counts.gallery += len(members)
                continue
            ident = item_id(source, product)
            if len(members) >= 2:
                placed.append(replace(members[0], subset=subset, split="query", item_ID=ident))
                placed.append(replace(members[1], subset=subset, split="gallery", item_ID=ident))
                counts.query += 1
                counts.gallery += 1
                counts.left_out += len(members) - 2
            else:
                placed.append(replace(members[0], subset=subset, split="gallery", item_ID=ident))
                counts.gallery += 1
                counts.distractors += 1
        stats_out = SplitStats(subsets=stats, train_products=len(training))
        return StageResult(save_samples(ctx, self.name, placed), stats_out)

    def training_products(self, samples: list[Sample]) -> set[tuple[str, str]]:
        """(source, product id) of every product, noise aside, whose earliest image predates `train_before`: the
        whole product trains, in every subset, so no product is in both a training and an evaluation split."""
        cutoff = self.settings.train_before
        if cutoff is None:
            return set()
        start = datetime.combine(cutoff, datetime.min.time(), tzinfo=timezone.utc)
        first: dict[tuple[str, str], datetime] = {}
        for sample in samples:
            if sample.subsets == [NOISE]:
                continue
            key = (sample.source, sample.product_id)
            first[key] = min(first.get(key, sample.first_seen_at), sample.first_seen_at)
        return {key for key, seen in first.items() if seen < start}
