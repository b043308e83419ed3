"""The numbers every training report shows: Fine/Coarse/Item R@1 and the top-1 distractor share with the noise pool,
and Fine/Coarse R@1 without it (a gain that only rejects distractors shows up as a gap between the two)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from lookbench.embeddings.provider import EmbeddingProvider
from lookbench.evaluation.noise import NoisePool
from lookbench.evaluation.runner import EvalSettings, evaluate
from lookbench.metrics.aggregate import OVERALL
from lookbench.metrics.definitions import DISTRACTOR_METRIC
from lookbench.results.io import save_run
from lookbench.snapshot.reader import Snapshot

HEADLINE = ("fine_recall@1", "coarse_recall@1", "item_recall@1", DISTRACTOR_METRIC)
NO_NOISE = "__noise-none"
"""Suffix of the metrics (and the result file) scored against each subset's gallery alone."""
QUIET_HEADLINE = ("fine_recall@1", "coarse_recall@1")
REPORTED = (*HEADLINE, *(f"{m}{NO_NOISE}" for m in QUIET_HEADLINE))
"""Every headline key, in report order."""


def score_headline(
    snapshot: Snapshot, provider: EmbeddingProvider, settings: EvalSettings, target: Path
) -> dict[str, dict[str, Any]]:
    """Evaluate with the noise pool into `target`, and (when the snapshot has one) without it into
    `target`'s `__noise-none` sibling (the embeddings are reused); return the headline metrics."""
    output = evaluate(snapshot, provider, settings)
    save_run(output.result, output.per_query, target)
    overall = output.result.metrics[OVERALL]
    metrics = {k: overall[k].model_dump() for k in HEADLINE if k in overall}
    if snapshot.has_noise:
        quiet = evaluate(snapshot, provider, replace(settings, noise=NoisePool.NONE))
        save_run(quiet.result, quiet.per_query, target.with_name(f"{target.stem}{NO_NOISE}{target.suffix}"))
        alone = quiet.result.metrics[OVERALL]
        metrics.update({f"{k}{NO_NOISE}": alone[k].model_dump() for k in QUIET_HEADLINE if k in alone})
    return metrics


def headline_text(metrics: dict[str, dict[str, Any]]) -> str:
    """`name value [low, high]` in percent for every reported metric present."""
    return ", ".join(
        f"{k} {100 * metrics[k]['value']:.2f} [{100 * metrics[k]['ci_low']:.2f}, {100 * metrics[k]['ci_high']:.2f}]"
        for k in REPORTED
        if k in metrics
    )
