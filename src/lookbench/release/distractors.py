"""Distractor mining: keep `noise` candidates whose nearest benchmark item's cosine lies in a band."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from lookbench.errors import BuildError
from lookbench.release.embed import embed_images, provider_for, unit_rows
from lookbench.release.sample import write_table
from lookbench.release.stages.base import BuildContext, StageResult, read_samples, write_samples
from lookbench.snapshot.schema import NOISE

DROPPED_SCHEMA = pa.schema([("sample_id", pa.string()), ("similarity", pa.float64()), ("reason", pa.string())])


def nearest_similarity(candidates: np.ndarray, items: np.ndarray) -> np.ndarray:
    """Cosine similarity of each candidate to its nearest item."""
    if len(items) == 0:
        return np.full(len(candidates), -1.0)
    return (unit_rows(candidates) @ unit_rows(items).T).max(axis=1)


def band_verdicts(similarity: np.ndarray, band: tuple[float, float]) -> list[str]:
    """`keep`, `near-duplicate` (above the band) or `unrelated` (below) per candidate."""
    low, high = band
    return ["near-duplicate" if s > high else "unrelated" if s < low else "keep" for s in similarity]


class DistractorStage:
    """Candidates come from sources feeding `noise`; those outside the band leave the noise split."""

    name = "distractors"

    def run(self, ctx: BuildContext, previous: Path | None) -> StageResult:
        """Embed benchmark items and candidates under the model spec and filter the candidates."""
        config = ctx.config.distractors
        if config is None:
            raise BuildError("distractors stage without a distractors section")
        table = read_samples(previous)
        rows = table.to_pylist()
        candidates = [r for r in rows if NOISE in r["subsets"]]
        items = [r for r in rows if any(s != NOISE for s in r["subsets"])]
        provider = provider_for(config.model)
        folder = ctx.folder(self.name)
        sims = (
            nearest_similarity(
                embed_images(provider, [r["image"] for r in candidates], folder / "candidates"),
                embed_images(provider, [r["image"] for r in items], folder / "items"),
            )
            if candidates
            else np.zeros(0)
        )
        verdicts = band_verdicts(sims, config.band)
        dropped: list[dict[str, Any]] = []
        for row, sim, verdict in zip(candidates, sims, verdicts, strict=True):
            if verdict != "keep":
                row["subsets"] = [s for s in row["subsets"] if s != NOISE]
                dropped.append({"sample_id": row["sample_id"], "similarity": float(sim), "reason": verdict})
        kept = [r for r in rows if r["subsets"]]
        write_table(pa.Table.from_pylist(dropped, schema=DROPPED_SCHEMA), folder / "dropped.parquet")
        stats = {
            "model": config.model,
            "band": list(config.band),
            "candidates": len(candidates),
            "kept": verdicts.count("keep"),
            "near_duplicates": verdicts.count("near-duplicate"),
            "unrelated": verdicts.count("unrelated"),
            "similarity_quartiles": [round(float(q), 4) for q in np.quantile(sims, [0.25, 0.5, 0.75])]
            if len(sims)
            else [],
        }
        return StageResult(write_samples(ctx, self.name, pa.Table.from_pylist(kept, schema=table.schema)), stats)
