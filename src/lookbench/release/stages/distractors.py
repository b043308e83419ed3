"""Distractor mining: keep `noise` candidates whose nearest benchmark item's cosine lies in a band."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa

from lookbench.release.config import DistractorConfig
from lookbench.release.embedding import ImageEmbedder, image_embedder, unit_rows
from lookbench.release.records import write_table
from lookbench.release.stages.base import StageContext, StageResult, StageStats, samples_of, save_samples
from lookbench.snapshot.schema import NOISE

DROPPED_SCHEMA = pa.schema([("sample_id", pa.string()), ("similarity", pa.float64()), ("reason", pa.string())])


class DistractorStats(StageStats):
    """The model, band and what it kept."""

    model: str
    band: list[float]
    candidates: int
    kept: int
    near_duplicates: int
    unrelated: int
    similarity_quartiles: list[float]


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
    stats_type = DistractorStats

    def __init__(self, settings: DistractorConfig) -> None:
        self.settings = settings
        self._embedder: ImageEmbedder | None = None

    def check(self) -> None:
        """Load the model, so a bad spec stops the build before collect."""
        if self._embedder is None:
            self._embedder = image_embedder(self.settings.model, "distractors.model")

    def fingerprint(self, ctx: StageContext) -> str:
        """The model and band."""
        return self.settings.fingerprint()

    def run(self, ctx: StageContext, previous: Path | None) -> StageResult:
        """Embed benchmark items and candidates under the model and filter the candidates."""
        self.check()
        assert self._embedder is not None
        samples = samples_of(previous)
        candidates = [s for s in samples if NOISE in s.subsets]
        items = [s for s in samples if any(subset != NOISE for subset in s.subsets)]
        sims = (
            nearest_similarity(
                self._embedder.embed_images([s.image for s in candidates]),
                self._embedder.embed_images([s.image for s in items]) if items else np.zeros((0, 0)),
            )
            if candidates
            else np.zeros(0)
        )
        verdicts = band_verdicts(sims, self.settings.band)
        dropped: list[dict[str, object]] = []
        for sample, sim, verdict in zip(candidates, sims, verdicts, strict=True):
            if verdict != "keep":
                sample.subsets = [s for s in sample.subsets if s != NOISE]
                dropped.append({"sample_id": sample.sample_id, "similarity": float(sim), "reason": verdict})
        kept = [s for s in samples if s.subsets]
        write_table(pa.Table.from_pylist(dropped, schema=DROPPED_SCHEMA), ctx.folder(self.name) / "dropped.parquet")
        stats = DistractorStats(
            model=self.settings.model,
            band=list(self.settings.band),
            candidates=len(candidates),
            kept=verdicts.count("keep"),
            near_duplicates=verdicts.count("near-duplicate"),
            unrelated=verdicts.count("unrelated"),
            similarity_quartiles=[round(float(q), 4) for q in np.quantile(sims, [0.25, 0.5, 0.75])]
            if len(sims)
            else [],
        )
        return StageResult(save_samples(ctx, self.name, kept), stats)
