"""What a run is asked to do besides data and model: the settings that change the numbers."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from lookbench._util.limits import MAX_RESAMPLES, check_count
from lookbench.evaluation.noise import NoisePool
from lookbench.metrics.definitions import DEFAULT_KS, FineRule
from lookbench.results.schema import BootstrapConfig
from lookbench.search.backend import SearchBackend
from lookbench.search.exact import ExactSearch


@dataclass
class EvalSettings:
    """Everything besides data and model that changes the numbers."""

    subsets: Sequence[str] | None = None
    ks: tuple[int, ...] | None = DEFAULT_KS
    """Cut-offs; None: the snapshot protocol's (a legacy benchmark's), else LookBench's."""
    fine_rule: FineRule = FineRule.MAIN
    resamples: int = 1000
    seed: int = 0
    confidence: float = 0.95
    since: np.datetime64 | None = None
    until: np.datetime64 | None = None
    backend: SearchBackend = field(default_factory=ExactSearch)
    recall_queries: int = 500
    """Queries per subset (at most) searched exactly to measure an approximate backend's recall."""
    compose: str = "auto"
    """How composed subsets' queries are embedded (see `lookbench.evaluation.composed.methods.METHODS`)."""
    noise: NoisePool = NoisePool.ALL
    """Search each subset with the shared noise pool (`all`) or against its gallery alone (`none`)."""

    def __post_init__(self) -> None:
        check_count("resamples", self.resamples, MAX_RESAMPLES)

    def bootstrap(self) -> BootstrapConfig:
        """How the confidence intervals are drawn, as the result records it."""
        return BootstrapConfig(resamples=self.resamples, seed=self.seed, confidence=self.confidence)
