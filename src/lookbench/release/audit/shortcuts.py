"""Query-side shortcuts: trivial, fashion-blind baselines scored by the evaluator itself, per subset and overall, as
a ratio to a named model's score; a baseline that reaches half of the model is flagged."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from lookbench.embeddings.provider import EmbeddingProvider
from lookbench.errors import LookBenchError
from lookbench.evaluation.noise import NoisePool
from lookbench.evaluation.runner import EvalSettings, evaluate
from lookbench.metrics.aggregate import OVERALL
from lookbench.results.audit_schema import BaselineScore, NoiseEffect, QueryShortcuts, TrivialBaseline
from lookbench.results.io import load_result
from lookbench.results.schema import MetricValue
from lookbench.snapshot.reader import Snapshot

METRIC = "fine_recall@1"
SHARE_FLAGGED = 0.5
"""A baseline whose score reaches this share of the reference model's is flagged."""


@dataclass(frozen=True)
class Reference:
    """The named model the baselines are compared with."""

    name: str
    source: str
    """`evaluated` (by the audit, with `--model`) or the result file it was read from."""
    scores: dict[str, MetricValue]
    """Scope (each subset, `overall`) -> METRIC with the noise pool."""


def reference_from_results(path: Path, snapshot: Snapshot, subsets: Sequence[str]) -> Reference:
    """The reference scores of a `lookbench eval` result file of this snapshot, with the noise pool, every subset."""
    result = load_result(path)
    if result.snapshot.content_hash != snapshot.content_hash:
        raise LookBenchError(
            f"{path}: evaluates snapshot {result.snapshot.id} (content hash {result.snapshot.content_hash[:12]}), "
            f"not the audited {snapshot.name} ({snapshot.content_hash[:12]})"
        )
    if result.config.noise != "all":
        raise LookBenchError(f"{path}: evaluated without the noise pool; the baselines are scored with it")
    scores: dict[str, MetricValue] = {}
    for scope in [*subsets, OVERALL]:
        value = result.metrics.get(scope, {}).get(METRIC)
        if value is None:
            raise LookBenchError(f"{path}: no {METRIC} for {scope} (evaluate every image subset)")
        scores[scope] = value
    return Reference(name=result.model_name, source=f"results file {path.name}", scores=scores)


def reference_from_noise_effect(name: str, effect: dict[str, NoiseEffect]) -> Reference:
    """The model's own scores with the noise pool, as the audit's noise effect measured them."""
    return Reference(
        name=name, source="evaluated", scores={s: e.fine_recall_at_1.with_noise for s, e in effect.items()}
    )


def _settings(subsets: list[str], resamples: int, seed: int) -> EvalSettings:
    return EvalSettings(subsets=subsets, ks=(1,), resamples=resamples, seed=seed, noise=NoisePool.ALL)


def evaluated_reference(
    snapshot: Snapshot, provider: EmbeddingProvider, name: str, subsets: list[str], resamples: int, seed: int
) -> Reference:
    """The model's scores, evaluated as the baselines are."""
    metrics = evaluate(snapshot, provider, _settings(subsets, resamples, seed)).result.metrics
    return Reference(name=name, source="evaluated", scores={scope: m[METRIC] for scope, m in metrics.items()})


def _score(value: MetricValue, reference: Reference | None, scope: str) -> BaselineScore:
    ref = None if reference is None else reference.scores.get(scope)
    if ref is None:
        return BaselineScore(value=value, ratio=None, flagged=False)
    ratio = value.value / ref.value if ref.value > 0 else None
    return BaselineScore(value=value, ratio=ratio, flagged=value.value > 0 and value.value >= SHARE_FLAGGED * ref.value)


def query_shortcuts(
    snapshot: Snapshot,
    baselines: Sequence[EmbeddingProvider],
    subsets: list[str],
    reference: Reference | None,
    resamples: int,
    seed: int,
) -> QueryShortcuts:
    """Each baseline evaluated as `lookbench eval` would (main fine rule, with the noise pool), against `reference`."""
    settings = _settings(subsets, resamples, seed)
    scored = []
    for provider in baselines:
        metrics = evaluate(snapshot, provider, settings).result.metrics
        scores = {scope: _score(m[METRIC], reference, scope) for scope, m in metrics.items()}
        scored.append(TrivialBaseline(model=provider.spec, scores=scores))
    flagged = [
        f"{b.model} on {scope}" + (f" ({s.ratio:.2f} of the model)" if s.ratio is not None else "")
        for b in scored
        for scope, s in b.scores.items()
        if s.flagged
    ]
    return QueryShortcuts(
        metric=METRIC,
        share_flagged=SHARE_FLAGGED,
        reference=None if reference is None else reference.name,
        reference_source=None if reference is None else reference.source,
        reference_scores=None if reference is None else reference.scores,
        baselines=scored,
        flagged=flagged,
    )
