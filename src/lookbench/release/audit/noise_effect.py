"""What the noise pool does to a model's scores: Fine R@1 with and without it, and the share of top-1 distractors."""

from __future__ import annotations

import numpy as np

from lookbench.embeddings.provider import EmbeddingProvider, ProviderBase, Skipped
from lookbench.evaluation.noise import NoisePool
from lookbench.evaluation.runner import EvalSettings, evaluate
from lookbench.metrics.definitions import DISTRACTOR_METRIC
from lookbench.models.meta import ModelMeta, ModelRun
from lookbench.results.audit_schema import NoiseEffect, WithAndWithout
from lookbench.snapshot.reader import Snapshot

FINE = "fine_recall@1"


class ReusedEmbeddings(ProviderBase):
    """A provider that reads each split's embeddings from the wrapped one once (the audit asks for them thrice);
    its skipped rows, card and sources are the wrapped provider's."""

    def __init__(self, inner: EmbeddingProvider) -> None:
        self.inner = inner
        self.spec = inner.spec
        self._memo: dict[tuple[str, str], np.ndarray] = {}

    @property
    def skipped(self) -> Skipped:  # type: ignore[override]
        """The wrapped provider's skipped rows."""
        return self.inner.skipped

    @property
    def meta(self) -> ModelMeta | None:  # type: ignore[override]
        """The wrapped provider's meta."""
        return self.inner.meta

    def source_of(self, subset: str, split: str) -> str | None:
        """The wrapped provider's file for the split, if any."""
        return self.inner.source_of(subset, split)

    def embed_split(self, snapshot: Snapshot, subset: str, split: str) -> np.ndarray:
        """The wrapped provider's array, fetched on first use."""
        key = (subset, split)
        if key not in self._memo:
            self._memo[key] = np.asarray(self.inner.embed_split(snapshot, subset, split))
        return self._memo[key]

    def describe(self) -> ModelRun:
        """The wrapped provider's description."""
        return self.inner.describe()


def noise_effect(
    snapshot: Snapshot, provider: EmbeddingProvider, subsets: list[str], resamples: int, seed: int
) -> dict[str, NoiseEffect]:
    """Per subset and overall: Fine R@1 with and without the noise pool, and distractor_share@1 with it."""
    runs = {
        pool: evaluate(
            snapshot, provider, EvalSettings(subsets=subsets, ks=(1,), resamples=resamples, seed=seed, noise=pool)
        ).result.metrics
        for pool in (NoisePool.ALL, NoisePool.NONE)
    }
    full, bare = runs[NoisePool.ALL], runs[NoisePool.NONE]
    return {
        scope: NoiseEffect.model_validate(
            {
                FINE: WithAndWithout(with_noise=metrics[FINE], without_noise=bare[scope][FINE]),
                DISTRACTOR_METRIC: metrics[DISTRACTOR_METRIC],
            }
        )
        for scope, metrics in full.items()
    }
