"""Publish: write `OUT/vYYYYMMDD/<subset>/{query,gallery}.parquet` (+ noise), its card and MANIFEST.json, atomically."""

from __future__ import annotations

import io
import os
import shutil
from collections import defaultdict
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from PIL import Image

from lookbench import __version__
from lookbench.atomic import write_text_atomic
from lookbench.errors import BuildError
from lookbench.release.card import root_card, version_card
from lookbench.release.stages.base import BuildContext, StageResult, read_samples
from lookbench.snapshot.manifest import write_manifest
from lookbench.snapshot.schema import NOISE
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

PART2_STAGES = ("crop", "annotate", "audit", "distractors")

LABEL_EXTRAS = ("outfit_id", "label_source", "excluded_attributes")
"""Columns part-2 stages add (crop outfit, who labelled the row, attributes excluded by the audit), when set."""


def snapshot_row(row: dict[str, Any]) -> dict[str, Any]:
    """A snapshot split row from a placed work row; whole-image samples get a full-image bbox."""
    with Image.open(io.BytesIO(row["image"])) as im:
        width, height = im.size
        ext = (im.format or "img").lower()
    raw = row.get("raw_image")
    bbox = row.get("bbox") if raw else None
    extra = {k: row[k] for k in LABEL_EXTRAS if row.get(k) is not None}
    return {
        "image": image_value(row["image"], f"{row['item_ID']}.{ext}"),
        "raw_image": image_value(raw, f"{row.get('outfit_id') or row['item_ID']}.raw") if raw else None,
        "category": row["category"],
        "main_attribute": row["main_attribute"],
        "other_attributes": row["other_attributes"],
        "bbox": [float(v) for v in bbox] if bbox else [0.0, 0.0, float(width), float(height)],
        "item_ID": row["item_ID"],
        "task": row["subset"],
        "difficulty": row.get("difficulty") or "unrated",
        **{k: row[k] for k in EXTRA_COLUMNS},
        **extra,
    }


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def tool_versions() -> dict[str, str]:
    """Versions of the tool and the libraries whose behaviour shapes the output."""
    from importlib.metadata import PackageNotFoundError, version

    found = {"lookbench": __version__}
    for name in ("pyarrow", "pillow", "imagehash", "httpx", "warcio", "numpy"):
        try:
            found[name] = version(name)
        except PackageNotFoundError:
            continue
    return found


class PublishStage:
    """Writes into a hidden staging folder and renames it into place; existing versions are never touched."""

    name = "publish"

    def run(self, ctx: BuildContext, previous: Path | None) -> StageResult:
        """Write the splits, the version card and the manifest, then refresh the output root's card."""
        config = ctx.config
        target = config.output / config.version
        if target.exists():
            raise BuildError(f"{target} already exists; published versions are never modified, pick a new release_date")
        staging = config.output / f".{config.version}.staging"
        if staging.exists():
            shutil.rmtree(staging)
        rows = read_samples(previous).to_pylist()
        by_split: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
        for row in rows:
            by_split[(row["subset"], row["split"])].append(snapshot_row(row))
        subsets: dict[str, dict[str, int]] = {}
        skipped: list[str] = []
        for subset in sorted({s for s, _ in by_split}):
            splits = ("gallery",) if subset == NOISE else ("query", "gallery")
            if any(not by_split[(subset, sp)] for sp in splits):
                skipped.append(subset)
                continue
            for split in splits:
                write_split(rows_to_table(by_split[(subset, split)]), staging / subset / f"{split}.parquet")
            subsets[subset] = {sp: len(by_split[(subset, sp)]) for sp in splits}
        if not subsets:
            raise BuildError(f"{config.version}: no subset has both queries and gallery rows; nothing to publish")
        release = self._release(ctx, rows, subsets, skipped)
        log = [*ctx.log, {"stage": self.name, "status": "ran", "seconds": None, "stats": {"subsets": subsets}}]
        write_text_atomic(staging / "README.md", version_card(release, log))
        write_manifest(
            staging,
            release=release,
            tool_versions=tool_versions(),
            config_sha256=config.config_hash(),
            created_at=datetime.now(timezone.utc).isoformat(),
            build_log=log,
        )
        os.replace(staging, target)
        write_text_atomic(config.output / "README.md", root_card(config.output, config.title))
        return StageResult(target, {"version": config.version, "subsets": subsets, "skipped_subsets": skipped})

    def _release(
        self, ctx: BuildContext, rows: list[dict[str, Any]], subsets: dict[str, dict[str, int]], skipped: list[str]
    ) -> dict[str, Any]:
        published = [r["source_published_at"] for r in rows if r["source_published_at"] is not None]
        seen = [r["first_seen_at"] for r in rows]
        collect = ctx.stats_of("collect").get("sources", {})
        sources = [
            {
                "name": s.name,
                "kind": s.kind,
                "license": s.license,
                "samples": collect.get(s.name, {}).get("samples", 0),
                "problems": collect.get(s.name, {}).get("problem_count", 0),
            }
            for s in ctx.config.sources
        ]
        return {
            "title": ctx.config.title,
            "version": ctx.config.version,
            "release_date": ctx.config.release_date.isoformat(),
            "changelog": ctx.config.changelog,
            "subsets": subsets,
            "skipped_subsets": skipped,
            "sources": sources,
            "window": {
                "published_from": _iso(min(published, default=None)),
                "published_to": _iso(max(published, default=None)),
                "first_seen_from": _iso(min(seen, default=None)),
                "first_seen_to": _iso(max(seen, default=None)),
            },
            "dedup": ctx.stats_of("dedup"),
            "labelling": {s: ctx.stats_of(s) for s in PART2_STAGES if ctx.stats_of(s)},
        }
