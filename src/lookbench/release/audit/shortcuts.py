"""Query-side shortcuts: trivial, fashion-blind baselines scored by the evaluator itself, per subset and overall, as
a ratio to a named model's score with its paired bootstrap interval; a baseline that reaches half of the model is
flagged."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa

from lookbench.embeddings.provider import EmbeddingProvider
from lookbench.errors import LookBenchError
from lookbench.evaluation.noise import NoisePool
from lookbench.evaluation.runner import EvalSettings, evaluate
from lookbench.metrics.aggregate import OVERALL
from lookbench.metrics.bootstrap import ratio_interval, subset_rng
from lookbench.results.audit_schema import BaselineScore, QueryShortcuts, TrivialBaseline
from lookbench.results.io import load_result, per_query_path
from lookbench.results.per_query import read_per_query
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
    per_query: pa.Table | None
    """The model's per-query table of that run (None: a results file without one beside it), for the ratios'
    intervals."""


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
    # a result copied without its per-query file still gives the ratios, only not their intervals
    beside = bool(result.per_query_file) and per_query_path(path, result).is_file()
    per_query = read_per_query(per_query_path(path, result), result.per_query_sha256, path) if beside else None
    return Reference(name=result.model_name, source=f"results file {path.name}", scores=scores, per_query=per_query)


def _settings(subsets: list[str], resamples: int, seed: int) -> EvalSettings:
    return EvalSettings(subsets=subsets, ks=(1,), resamples=resamples, seed=seed, noise=NoisePool.ALL)


def evaluated_reference(
    snapshot: Snapshot, provider: EmbeddingProvider, name: str, subsets: list[str], resamples: int, seed: int
) -> Reference:
    """The model's scores, evaluated as the baselines are."""
    output = evaluate(snapshot, provider, _settings(subsets, resamples, seed))
    scores = {scope: m[METRIC] for scope, m in output.result.metrics.items()}
    return Reference(name=name, source="evaluated", scores=scores, per_query=output.per_query)


Hits = dict[tuple[str, int], tuple[float, int]]
"""(subset, query row) -> (METRIC, cluster) of one run."""


def _hits(per_query: pa.Table) -> Hits:
    """(subset, query row) -> (METRIC, cluster) of one run's per-query table."""
    keys = zip(per_query["subset"].to_pylist(), per_query["query_row"].to_pylist(), strict=True)
    values = zip(per_query[METRIC].to_pylist(), per_query["cluster"].to_pylist(), strict=True)
    return dict(zip(keys, values, strict=True))


def _ratio_interval(
    baseline: Hits, reference: Hits | None, scope: str, resamples: int, seed: int
) -> tuple[float, float] | None:
    """The paired bootstrap interval of the baseline's score over the reference's on `scope`, resampling the
    evaluator's clusters (whole outfits) of the queries both runs scored; None when the reference has no table."""
    if reference is None:
        return None
    pairs = [
        (subset, cluster, hit, reference[(subset, row)][0])
        for (subset, row), (hit, cluster) in baseline.items()
        if (scope == OVERALL or subset == scope) and (subset, row) in reference
    ]
    if not pairs:
        return None
    _, clusters = np.unique([f"{p[0]}\x00{p[1]}" for p in pairs], return_inverse=True)
    return ratio_interval(
        np.array([p[2] for p in pairs]), np.array([p[3] for p in pairs]), clusters, subset_rng(seed, scope), resamples
    )


def _score(
    value: MetricValue, reference: Reference | None, scope: str, interval: tuple[float, float] | None
) -> BaselineScore:
    ref = None if reference is None else reference.scores.get(scope)
    if ref is None:
        return BaselineScore(value=value, ratio=None, flagged=False)
    ratio = value.value / ref.value if ref.value > 0 else None
    return BaselineScore(
        value=value,
        ratio=ratio,
        ratio_ci_low=None if ratio is None or interval is None else interval[0],
        ratio_ci_high=None if ratio is None or interval is None else interval[1],
        flagged=value.value > 0 and value.value >= SHARE_FLAGGED * ref.value,
    )


def _flag_line(model: str, scope: str, score: BaselineScore) -> str:
    if score.ratio is None:
        return f"{model} on {scope}"
    if score.ratio_ci_low is None or score.ratio_ci_high is None:
        return f"{model} on {scope} ({score.ratio:.2f} of the model)"
    interval = f"95% {score.ratio_ci_low:.2f}-{score.ratio_ci_high:.2f}"
    return f"{model} on {scope} ({score.ratio:.2f} of the model, {interval})"


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
    ref_hits = None if reference is None or reference.per_query is None else _hits(reference.per_query)
    for provider in baselines:
        output = evaluate(snapshot, provider, settings)
        hits = _hits(output.per_query)
        scores = {}
        for scope, m in output.result.metrics.items():
            interval = _ratio_interval(hits, ref_hits, scope, resamples, seed)
            scores[scope] = _score(m[METRIC], reference, scope, interval)
        scored.append(TrivialBaseline(model=provider.spec, scores=scores))
    flagged = [_flag_line(b.model, scope, s) for b in scored for scope, s in b.scores.items() if s.flagged]
    return QueryShortcuts(
        metric=METRIC,
        share_flagged=SHARE_FLAGGED,
        reference=None if reference is None else reference.name,
        reference_source=None if reference is None else reference.source,
        reference_scores=None if reference is None else reference.scores,
        baselines=scored,
        flagged=flagged,
    )
