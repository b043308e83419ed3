"""Split: per subset, one query and one gallery positive per product with 2+ images; single images are distractors."""

from __future__ import annotations

import hashlib
from collections import defaultdict
from pathlib import Path
from typing import Any

import pyarrow as pa

from lookbench.release.stages.base import BuildContext, StageResult, read_samples, write_samples
from lookbench.snapshot.schema import NOISE


def item_id(source: str, product_id: str) -> str:
    """A stable item_ID for a product of a source."""
    return hashlib.sha1(f"{source}\0{product_id}".encode()).hexdigest()[:16]


def _order(seed: int, text: str) -> str:
    return hashlib.sha256(f"{seed}\0{text}".encode()).hexdigest()


class SplitStage:
    """A product's images never straddle splits under different ids: extras beyond the pair are left out."""

    name = "split"

    def run(self, ctx: BuildContext, previous: Path | None) -> StageResult:
        """Assign (subset, split, item_ID) to samples; write one row per placement."""
        seed = ctx.config.split.seed
        rows = read_samples(previous).to_pylist()
        groups: dict[tuple[str, str, str], list[dict[str, Any]]] = defaultdict(list)
        for row in rows:
            for subset in row["subsets"]:
                groups[(subset, row["source"], row["product_id"])].append(row)
        placed: list[dict[str, Any]] = []
        stats: dict[str, dict[str, int]] = {}
        for (subset, source, product), members in sorted(groups.items(), key=lambda kv: _order(seed, repr(kv[0]))):
            counts = stats.setdefault(subset, {"query": 0, "gallery": 0, "distractors": 0, "left_out": 0})
            # a street-look crop (it has a scene) is the query; its product's studio image the gallery positive
            members = sorted(members, key=lambda r: (r.get("raw_image") is None, _order(seed, r["image_sha256"])))
            if subset == NOISE:
                for row in members:
                    placed.append({**row, "subset": NOISE, "split": "gallery", "item_ID": f"noise-{row['sample_id']}"})
                counts["gallery"] += len(members)
                continue
            ident = item_id(source, product)
            if len(members) >= 2:
                placed.append({**members[0], "subset": subset, "split": "query", "item_ID": ident})
                placed.append({**members[1], "subset": subset, "split": "gallery", "item_ID": ident})
                counts["query"] += 1
                counts["gallery"] += 1
                counts["left_out"] += len(members) - 2
            else:
                placed.append({**members[0], "subset": subset, "split": "gallery", "item_ID": ident})
                counts["gallery"] += 1
                counts["distractors"] += 1
        schema = read_samples(previous).schema
        for name in ("subset", "split", "item_ID"):
            schema = schema.append(pa.field(name, pa.string()))
        return StageResult(write_samples(ctx, self.name, pa.Table.from_pylist(placed, schema=schema)), stats)
