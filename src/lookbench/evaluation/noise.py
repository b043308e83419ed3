"""Whether a run searches each subset's gallery together with the shared noise pool or alone."""

from __future__ import annotations

from enum import Enum

from lookbench.snapshot.labels import SplitLabels
from lookbench.snapshot.reader import Snapshot
from lookbench.snapshot.schema import NOISE


class NoisePool(str, Enum):
    """Which distractors join each subset's corpus."""

    ALL = "all"
    """Every noise row (the benchmark as published)."""
    NONE = "none"
    """No noise: each subset is searched against its gallery alone."""


def noise_rows(snapshot: Snapshot, pool: NoisePool) -> int:
    """Noise rows appended to every subset's corpus under `pool` (0 when the snapshot has none)."""
    if pool is NoisePool.NONE or not snapshot.has_noise:
        return 0
    return snapshot.num_rows(NOISE, "gallery")


def corpus_labels(snapshot: Snapshot, subset: str, pool: NoisePool) -> SplitLabels:
    """The labels of a subset's corpus under `pool`: its gallery, then the noise rows searched with it."""
    if pool is NoisePool.NONE:
        return snapshot.labels(subset, "gallery")
    return snapshot.corpus_labels(subset)


def noise_tag(pool: NoisePool) -> str:
    """`__noise-none` for a run without the noise pool; empty for the default, so default names do not change."""
    return "" if pool is NoisePool.ALL else f"__noise-{pool.value}"


def noise_text(pool: NoisePool) -> str:
    """`without the noise pool` for titles; empty for the default."""
    return "" if pool is NoisePool.ALL else "without the noise pool"
