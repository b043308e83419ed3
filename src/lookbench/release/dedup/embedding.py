"""Optional embedding tier: cosine similarity of model embeddings (a `resolve_model` spec) above a threshold."""

from __future__ import annotations

from typing import Any

import numpy as np

from lookbench.models.registry import resolve_model
from lookbench.release.dedup.history import earlier_versions
from lookbench.release.dedup.index import Match
from lookbench.release.stages.base import BuildContext
from lookbench.snapshot import NOISE, open_snapshot
from lookbench.snapshot.reader import Snapshot
from lookbench.snapshot.schema import SPLITS
from lookbench.snapshot.writer import image_value, rows_to_table, write_split

BATCH_SUBSET = "real_studio_flat"


def _unit(matrix: np.ndarray) -> np.ndarray:
    matrix = np.asarray(matrix, dtype=np.float64)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix / np.where(norms == 0, 1, norms)


def _batch_snapshot(ctx: BuildContext, kept: list[dict[str, Any]]) -> Snapshot:
    """The kept samples as a one-split snapshot, so any EmbeddingProvider can embed them."""
    root = ctx.folder("dedup") / "embedding-batch" / "v00000000"
    rows = [
        {
            "image": image_value(row["image"]),
            "raw_image": None,
            "category": row["category"] or "unknown",
            "main_attribute": row["main_attribute"],
            "other_attributes": row["other_attributes"],
            "bbox": None,
            "item_ID": row["sample_id"],
            "task": "dedup",
            "difficulty": "",
        }
        for row in kept
    ]
    for split in SPLITS:
        write_split(rows_to_table(rows), root / BATCH_SUBSET / f"{split}.parquet")
    return open_snapshot(root)


def embedding_duplicates(
    ctx: BuildContext, kept: list[dict[str, Any]], spec: str, threshold: float
) -> dict[int, tuple[str, Match]]:
    """`{index in kept: (against, match)}` for samples whose embedding is within `threshold` cosine of another."""
    if not kept:
        return {}
    provider = resolve_model(spec)
    batch = _unit(provider.embed_split(_batch_snapshot(ctx, kept), BATCH_SUBSET, "gallery"))
    keys: list[str] = []
    parts: list[np.ndarray] = []
    for folder in earlier_versions(ctx.config.output, ctx.config.version):
        snap = open_snapshot(folder)
        splits = [(s, sp) for s in snap.subsets for sp in SPLITS] + ([(NOISE, "gallery")] if snap.has_noise else [])
        for subset, split in splits:
            parts.append(_unit(provider.embed_split(snap, subset, split)))
            keys.extend(f"{folder.name}/{subset}/{split}#{r}" for r in range(len(parts[-1])))
    history = np.concatenate(parts) if parts else np.zeros((0, batch.shape[1]))
    found: dict[int, tuple[str, Match]] = {}
    for i, vector in enumerate(batch):
        if len(history):
            sims = history @ vector
            best = int(np.argmax(sims))
            if sims[best] >= threshold:
                found[i] = ("earlier", Match(keys[best], "embedding", float(1 - sims[best])))
                continue
        earlier = [j for j in range(i) if j not in found]
        if earlier:
            sims = batch[earlier] @ vector
            best = int(np.argmax(sims))
            if sims[best] >= threshold:
                found[i] = ("batch", Match(kept[earlier[best]]["sample_id"], "embedding", float(1 - sims[best])))
    return found
