"""Dedup: drop duplicates of earlier versions and within the batch (exact, perceptual, optional embedding)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from lookbench.release.dedup.hashes import phash_pair
from lookbench.release.dedup.history import history_index
from lookbench.release.dedup.index import FingerprintIndex, Match
from lookbench.release.sample import write_table
from lookbench.release.stages.base import BuildContext, StageResult, read_samples, write_samples

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


def _drop_row(row: dict[str, Any], against: str, match: Match) -> dict[str, Any]:
    fields = ("sample_id", "source", "source_url", "image_url", "image_sha256")
    return {
        **{k: row[k] for k in fields},
        "against": against,
        "tier": match.tier,
        "duplicate_of": match.key,
        "distance": float(match.distance),
    }


class DedupStage:
    """Earliest-seen wins: the batch is scanned in `first_seen_at` order; a kept sample takes its group's min date."""

    name = "dedup"

    def run(self, ctx: BuildContext, previous: Path | None) -> StageResult:
        """Fingerprint the batch, look each sample up in the earlier versions and in the samples kept so far."""
        settings = ctx.config.dedup
        folder = ctx.folder(self.name)
        table = read_samples(previous)
        table = table.take(pc.sort_indices(table, [("first_seen_at", "ascending"), ("sample_id", "ascending")]))
        history, versions = history_index(ctx.config.output, ctx.config.version, ctx.config.state_dir / "fingerprints")
        batch = FingerprintIndex()
        rows = table.to_pylist()
        kept: list[dict[str, Any]] = []
        position: dict[str, int] = {}
        dropped: list[dict[str, Any]] = []
        for row in rows:
            phash, flipped = phash_pair(row["image"])
            row["phash"], row["phash_mirror"] = phash, flipped
            match = history.lookup(row["image_sha256"], phash, flipped, settings.phash_threshold)
            if match is not None:
                dropped.append(_drop_row(row, "earlier", match))
                continue
            match = batch.lookup(row["image_sha256"], phash, flipped, settings.phash_threshold)
            if match is not None:
                dropped.append(_drop_row(row, "batch", match))
                first = kept[position[match.key]]
                first["first_seen_at"] = min(first["first_seen_at"], row["first_seen_at"])
                continue
            batch.add(row["sample_id"], row["image_sha256"], phash)
            position[row["sample_id"]] = len(kept)
            kept.append(row)
        if settings.embedding_model:
            from lookbench.release.dedup.embedding import embedding_duplicates

            found = embedding_duplicates(ctx, kept, settings.embedding_model, settings.embedding_threshold)
            dropped.extend(_drop_row(kept[i], against, match) for i, (against, match) in found.items())
            kept = [row for i, row in enumerate(kept) if i not in found]
        schema = table.schema.append(pa.field("phash", pa.string())).append(pa.field("phash_mirror", pa.string()))
        write_table(pa.Table.from_pylist(dropped, schema=DROPPED_SCHEMA), folder / "dropped.parquet")
        out = write_samples(ctx, self.name, pa.Table.from_pylist(kept, schema=schema))
        counts: dict[str, dict[str, int]] = {"earlier": {}, "batch": {}}
        for drop in dropped:
            tiers = counts[drop["against"]]
            tiers[drop["tier"]] = tiers.get(drop["tier"], 0) + 1
        stats = {
            "input": len(rows),
            "kept": len(kept),
            "excluded_as_duplicates_of_earlier_versions": counts["earlier"],
            "merged_within_batch": counts["batch"],
            "earlier_versions": versions,
            "earlier_images": len(history),
            "phash_threshold": settings.phash_threshold,
            "embedding_model": settings.embedding_model,
        }
        return StageResult(out, stats)
