"""Publish: write `OUT/vYYYYMMDD/<subset>/{query,gallery[,train]}.parquet` (+ noise), its card and MANIFEST.json,
atomically."""

from __future__ import annotations

import os
import shutil
from collections import defaultdict
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pyarrow as pa

from lookbench import __version__
from lookbench._util.atomic import write_text_atomic
from lookbench._util.images import opened
from lookbench._util.jsontext import loads
from lookbench.errors import ReleaseError, SnapshotError
from lookbench.release.audit.run import audit_snapshot
from lookbench.release.card import root_card, version_card
from lookbench.release.config import PublishConfig
from lookbench.release.records import Sample
from lookbench.release.stages.base import StageContext, StageResult, StageStats, samples_of
from lookbench.results.audit_io import AUDIT_NAME, write_audit
from lookbench.results.audit_schema import AuditReport, AuditSnapshot
from lookbench.snapshot.composed import composed_table
from lookbench.snapshot.manifest import manifest_problems, read_manifest, write_manifest
from lookbench.snapshot.reader import Snapshot
from lookbench.snapshot.schema import COMPOSED, NOISE, TRAIN
from lookbench.snapshot.writer import image_value, rows_to_table, write_split

EXTRA_COLUMNS = (
    "first_seen_at",
    "source",
    "source_url",
    "source_published_at",
    "image_sha256",
    "published_at_origin",
    "image_url",
    "license",
    "product_id",
    "title",
    "brand",
    "generated",
    "generation",
)
"""Per-sample time-stamp and provenance columns carried into the snapshot."""

LABELLING_STAGES = ("crop", "annotate", "audit", "distractors", "compose")

LABEL_EXTRAS = ("outfit_id", "label_source", "excluded_attributes")
"""Columns the labelling stages add (crop outfit, who labelled the row, attributes excluded by the audit), when set."""


class PublishStats(StageStats):
    """The published version, or the one recovered after a crash between its rename and the marker."""

    version: str
    subsets: dict[str, dict[str, int]]
    skipped_subsets: list[str]
    recovered: bool = False


def snapshot_row(sample: Sample) -> dict[str, Any]:
    """A snapshot split row from a placed sample; whole-image samples get a full-image bbox."""
    with opened(sample.image) as im:
        width, height = im.size
        ext = (im.format or "img").lower()
    row = sample.to_row()
    raw = sample.raw_image
    bbox = sample.bbox if raw else None
    extra = {k: row[k] for k in LABEL_EXTRAS if row.get(k) is not None}
    return {
        "image": image_value(sample.image, f"{sample.item_ID}.{ext}"),
        "raw_image": image_value(raw, f"{sample.outfit_id or sample.item_ID}.raw") if raw else None,
        "category": sample.category,
        "main_attribute": sample.main_attribute,
        "other_attributes": sample.other_attributes,
        "bbox": [float(v) for v in bbox] if bbox else [0.0, 0.0, float(width), float(height)],
        "item_ID": sample.item_ID,
        "task": sample.subset,
        "difficulty": "unrated",
        **{k: row[k] for k in EXTRA_COLUMNS},
        **extra,
        **(_composed_columns(sample) if sample.modification_text is not None else {}),
    }


def _composed_columns(sample: Sample) -> dict[str, Any]:
    """A composed query's text, changes and explicit targets (compose stage)."""
    changes = loads(sample.changes) if sample.changes else None
    return {"modification_text": sample.modification_text, "changes": changes, "target_ids": sample.target_ids}


def _split_table(subset: str, split: str, rows: list[dict[str, Any]]) -> pa.Table:
    """A split's table; composed queries type their text, changes and targets as the composed schema says."""
    return composed_table(rows) if subset == COMPOSED and split != "gallery" else rows_to_table(rows)


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def source_audit(staging: Path, version: str) -> AuditReport:
    """The model-free audit of the version being published (docs/audit.md), filed under its final name."""
    snapshot = Snapshot(staging)
    report = audit_snapshot(snapshot)
    named = AuditSnapshot(id=version, name=version, content_hash=snapshot.content_hash)
    return report.model_copy(update={"snapshot": named})


def tool_versions() -> dict[str, str]:
    """Versions of the tool and the libraries whose behaviour shapes the output."""
    from importlib.metadata import PackageNotFoundError, version

    found = {"lookbench": __version__}
    for name in ("pyarrow", "pillow", "imagehash", "httpx", "warcio", "protego", "openai", "numpy"):
        try:
            found[name] = version(name)
        except PackageNotFoundError:
            continue
    return found


class PublishStage:
    """Writes into a hidden staging folder and renames it into place; existing versions are never touched."""

    name = "publish"
    stats_type = PublishStats

    def __init__(self, settings: PublishConfig) -> None:
        self.settings = settings

    def check(self) -> None:
        """Nothing to load."""

    def fingerprint(self, ctx: StageContext) -> str:
        """Title, changelog, sources and the whole config's hash (which the manifest records)."""
        return self.settings.fingerprint()

    def run(self, ctx: StageContext, previous: Path | None) -> StageResult:
        """Write the splits, the version card and the manifest, then refresh the output root's card."""
        target = ctx.output / self.settings.version
        if target.exists() or target.is_symlink():
            return self._recover(ctx, target)
        samples = samples_of(previous)
        by_split: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
        for sample in samples:
            by_split[(str(sample.subset), str(sample.split))].append(snapshot_row(sample))
        subsets: dict[str, dict[str, int]] = {}
        skipped: list[str] = []
        for subset in sorted({s for s, _ in by_split}):
            splits = ("gallery",) if subset == NOISE else ("query", "gallery")
            if any(not by_split[(subset, sp)] for sp in splits):
                skipped.append(subset)
                continue
            held = tuple(  # composed queries for tuning; training rows of products first seen before the window
                sp for sp in ("validation", TRAIN) if by_split.get((subset, sp))
            )
            subsets[subset] = {sp: len(by_split[(subset, sp)]) for sp in (*splits, *held)}
        if not any(subset != NOISE for subset in subsets):
            raise ReleaseError(
                f"{self.settings.version}: no queries: no subset has both queries and gallery rows "
                f"({len(samples)} placed rows); nothing is published and the release date stays free"
            )
        staging = ctx.output / f".{self.settings.version}.staging"
        if staging.exists():
            shutil.rmtree(staging)
        for subset, counts in subsets.items():
            for split in counts:
                write_split(
                    _split_table(subset, split, by_split[(subset, split)]), staging / subset / f"{split}.parquet"
                )
        release = self._release(ctx, samples, subsets, skipped)
        audit = source_audit(staging, self.settings.version)
        write_audit(audit, staging / AUDIT_NAME)
        log = [*(e.to_json() for e in ctx.log), {"stage": self.name, "status": "ran", "seconds": None,
                                                  "stats": {"subsets": subsets}}]  # fmt: skip
        write_text_atomic(staging / "README.md", version_card(release, log, audit))
        write_manifest(
            staging,
            release=release,
            tool_versions=tool_versions(),
            config_sha256=self.settings.config_sha256,
            created_at=datetime.now(timezone.utc).isoformat(),
            build_log=log,
        )
        os.replace(staging, target)
        write_text_atomic(ctx.output / "README.md", root_card(ctx.output, self.settings.title))
        return StageResult(
            target, PublishStats(version=self.settings.version, subsets=subsets, skipped_subsets=skipped)
        )

    def _recover(self, ctx: StageContext, target: Path) -> StageResult:
        """The version exists: finish it if this config published it (a crash after the rename), else refuse."""
        try:
            manifest = read_manifest(target) if target.is_dir() else None
        except (SnapshotError, OSError, ValueError):
            manifest = None
        ours = manifest is not None and manifest.get("config_sha256") == self.settings.config_sha256
        if not ours or manifest is None or manifest_problems(target, manifest):
            raise ReleaseError(
                f"{target} already exists; published versions are never modified, pick a new release_date"
            )
        write_text_atomic(ctx.output / "README.md", root_card(ctx.output, self.settings.title))
        release = manifest.get("release", {})
        stats = PublishStats(
            version=self.settings.version,
            subsets=release.get("subsets", {}),
            skipped_subsets=release.get("skipped_subsets", []),
            recovered=True,
        )
        return StageResult(target, stats)

    def _release(
        self, ctx: StageContext, samples: list[Sample], subsets: dict[str, dict[str, int]], skipped: list[str]
    ) -> dict[str, Any]:
        published = [s.source_published_at for s in samples if s.source_published_at is not None]
        seen = [s.first_seen_at for s in samples]
        collect = ctx.stats_json("collect").get("sources", {})
        settings = self.settings
        sources = [
            {
                "name": s.name,
                "kind": s.kind,
                "license": s.license,
                "samples": collect.get(s.name, {}).get("samples", 0),
                "problems": collect.get(s.name, {}).get("problem_count", 0),
            }
            for s in settings.sources
        ]
        return {
            "title": settings.title,
            "version": settings.version,
            "release_date": settings.release_date.isoformat(),
            "changelog": settings.changelog,
            "subsets": subsets,
            "skipped_subsets": skipped,
            "sources": sources,
            "window": {
                "published_from": _iso(min(published, default=None)),
                "published_to": _iso(max(published, default=None)),
                "first_seen_from": _iso(min(seen, default=None)),
                "first_seen_to": _iso(max(seen, default=None)),
            },
            "dedup": ctx.stats_json("dedup"),
            "labelling": {s: ctx.stats_json(s) for s in LABELLING_STAGES if ctx.stats_json(s)},
        }
