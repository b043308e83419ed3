"""Audit one snapshot: sample, measure the image statistics, probe, and (with a model) probe its embeddings and
measure the noise effect."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, replace

import numpy as np
from threadpoolctl import threadpool_limits

import lookbench
from lookbench._util.limits import (
    MAX_PERMUTATIONS,
    MAX_RESAMPLES,
    MAX_SAMPLE,
    check_allocation,
    check_count,
)
from lookbench.embeddings.checks import check_embeddings
from lookbench.embeddings.provider import EmbeddingProvider
from lookbench.errors import LookBenchError
from lookbench.release.audit.calibration import (
    ALPHA,
    PERMUTATIONS,
    PLANTED_BRIGHTNESS,
    Outcome,
    brightened,
    permutation_test,
)
from lookbench.release.audit.labels import label_consistency
from lookbench.release.audit.noise_effect import ReusedEmbeddings, noise_effect
from lookbench.release.audit.probe import NO_VARIATION, bootstrap_auc, fit_probe, out_of_fold_scores, unmeasurable
from lookbench.release.audit.sampling import stratified_rows
from lookbench.release.audit.shortcuts import (
    Reference,
    evaluated_reference,
    query_shortcuts,
)
from lookbench.release.audit.statistics import GROUPS, WIDTH, Decoded, pixel_statistics, statistics_of
from lookbench.results.audit_schema import (
    AuditReport,
    AuditSnapshot,
    EmbeddingProbe,
    ImageStatisticsProbe,
    NoiseEffect,
    PlantedShift,
    QuerySide,
    Sampling,
    Separability,
    SeparationTest,
    SkippedImage,
    StatisticAuc,
)
from lookbench.snapshot.reader import Snapshot
from lookbench.snapshot.schema import NOISE

Progress = Callable[[str], None]
Parts = list[tuple[str, str, np.ndarray]]
"""(subset, split, sorted rows) per part of a sample."""
# ONE_BLAS_THREAD: the probes make thousands of small matrix products; a second BLAS thread gains little on them
# and, on a busy machine, makes each product wait for a descheduled spinning thread (a 1280-d probe fit took 72 s
# with two OpenBLAS threads and 5.9 s with one, load 28 on 2 cores).
NO_NOISE = "the snapshot has no noise pool: there are no distractors to tell apart from the galleries"


@dataclass(frozen=True)
class AuditSettings:
    """Sample sizes, seed and resampling of an audit (docs/audit.md#sampling)."""

    seed: int = 0
    per_side: int = 2000
    """Images sampled from the galleries (stratified by subset) and from the noise pool (by category)."""
    queries_per_subset: int = 500
    folds: int = 5
    resamples: int = 1000
    permutations: int = PERMUTATIONS
    alpha: float = ALPHA
    planted: tuple[float, ...] = PLANTED_BRIGHTNESS


@dataclass(frozen=True)
class Side:
    """Sampled rows of one side (a split per subset) and their statistics; failed rows already dropped."""

    parts: Parts
    features: np.ndarray
    decoded: list[Decoded] | None = None
    """Each kept row's resize and file facts (the noise sample's, for the planted shifts)."""

    @property
    def size(self) -> int:
        """Number of sampled rows kept."""
        return len(self.features)


def check_settings(settings: AuditSettings) -> None:
    """Refuse counts over their limits, and a test that cannot be calibrated: alpha outside (0, 1), too few
    permutations to ever reach it, or too many for memory."""
    check_count("--per-side", settings.per_side, MAX_SAMPLE, low=1)
    check_count("--queries", settings.queries_per_subset, MAX_SAMPLE, low=1)
    check_count("--resamples", settings.resamples, MAX_RESAMPLES)
    check_count("--permutations", settings.permutations, MAX_PERMUTATIONS, low=1)
    # the shuffled labels, their out-of-fold scores and the stacked copy: three (2 * per_side, permutations + 1)
    check_allocation(
        f"--permutations {settings.permutations:,} over --per-side {settings.per_side:,}",
        3 * 8 * 2 * settings.per_side * (settings.permutations + 1),
        "lower either",
    )
    if not 0.0 < settings.alpha < 1.0:
        raise LookBenchError(f"--alpha {settings.alpha:g}: must lie strictly between 0 and 1")
    needed = int(np.ceil(1.0 / settings.alpha - 1.0 - 1e-9))
    if settings.permutations < needed:
        raise LookBenchError(
            f"--permutations {settings.permutations} cannot reach --alpha {settings.alpha:g}: at least {needed} are "
            "needed (the smallest p-value is 1 / (permutations + 1))"
        )


def _measure(snapshot: Snapshot, wanted: Parts, skipped: list[SkippedImage], keep_decoded: bool = False) -> Side:
    """Statistics of the wanted rows; rows that do not decode are recorded in `skipped` and dropped."""
    parts = []
    blocks = []
    decoded: list[Decoded] = []
    for subset, split, rows in wanted:
        measured = statistics_of(snapshot.image_rows(subset, split, rows.tolist()), rows, keep_decoded)
        failed = measured.failed
        skipped += [SkippedImage(subset=subset, split=split, row=r, error=e) for r, e in sorted(failed.items())]
        keep = ~np.isnan(measured.features).any(axis=1)
        parts.append((subset, split, rows[keep]))
        blocks.append(measured.features[keep])
        decoded += [d for d in measured.decoded or [] if d is not None]
    features = np.concatenate(blocks) if blocks else np.zeros((0, WIDTH))
    return Side(parts=parts, features=features, decoded=decoded if keep_decoded else None)


def _gallery_sample(snapshot: Snapshot, subsets: list[str], settings: AuditSettings) -> Parts:
    strata = [s for s in subsets for _ in range(snapshot.num_rows(s, "gallery"))]
    picked = stratified_rows(strata, settings.per_side, np.random.default_rng([settings.seed, 0]))
    offsets = np.cumsum([0] + [snapshot.num_rows(s, "gallery") for s in subsets])
    return [
        (s, "gallery", picked[(picked >= offsets[i]) & (picked < offsets[i + 1])] - offsets[i])
        for i, s in enumerate(subsets)
    ]


def _noise_sample(snapshot: Snapshot, settings: AuditSettings) -> Parts:
    categories = snapshot.labels(NOISE, "gallery").category
    return [
        (NOISE, "gallery", stratified_rows(categories, settings.per_side, np.random.default_rng([settings.seed, 1])))
    ]


def _query_sample(snapshot: Snapshot, subset: str, settings: AuditSettings, index: int) -> np.ndarray:
    rows = snapshot.num_rows(subset, "query")
    rng = np.random.default_rng([settings.seed, 2, index])
    return np.sort(rng.choice(rows, min(rows, settings.queries_per_subset), replace=False))


def _probe(
    x: np.ndarray, noise: np.ndarray, settings: AuditSettings
) -> tuple[float | None, tuple[float, float] | None, str | None]:
    """(AUC, interval, reason it is missing)."""
    reason = unmeasurable(x, noise)
    if reason is not None:
        return None, None, reason
    with threadpool_limits(limits=1, user_api="blas"):  # see ONE_BLAS_THREAD
        scores = out_of_fold_scores(x, noise, settings.folds, settings.seed)
        estimate = bootstrap_auc(scores, noise, settings.resamples, settings.seed)
    return estimate.auc, (estimate.low, estimate.high), None


def _noise_side_share(x: np.ndarray, noise: np.ndarray, queries: dict[str, np.ndarray]) -> dict[str, float]:
    with threadpool_limits(limits=1, user_api="blas"):  # see ONE_BLAS_THREAD
        probe = fit_probe(x, noise)
    return {s: float((probe.noise_score(q) > 0).mean()) if len(q) else 0.0 for s, q in queries.items()}


def _embeddings(provider: EmbeddingProvider, snapshot: Snapshot, parts: Parts) -> np.ndarray:
    """Checked, L2-normalised embeddings of the sampled rows (whole splits are read: the cache holds them so); rows
    left out of the sample (an image that does not decode among them) are not checked."""
    blocks = []
    for subset, split, rows in parts:
        raw = np.asarray(provider.embed_split(snapshot, subset, split))
        where = f"{provider.spec} {subset}/{split}"
        unsampled = np.setdiff1d(np.arange(len(raw)), rows).tolist()
        blocks.append(check_embeddings(raw, snapshot.num_rows(subset, split), where, ignore_rows=unsampled)[rows])
    return np.concatenate(blocks) if blocks else np.zeros((0, 1))


def audit_snapshot(
    snapshot: Snapshot,
    provider: EmbeddingProvider | None = None,
    settings: AuditSettings | None = None,
    progress: Progress | None = None,
    baselines: Sequence[EmbeddingProvider] = (),
    reference: Reference | None = None,
) -> AuditReport:
    """Audit `snapshot` (and `provider`'s embeddings of it, when given); score `baselines` on the query side against
    `reference`, else against `provider`."""
    settings = settings or AuditSettings()
    check_settings(settings)
    say = progress or (lambda _msg: None)
    started = time.perf_counter()
    timings: dict[str, float] = {}
    subsets = snapshot.subsets_of_kind("image")
    if not subsets:
        raise LookBenchError(f"{snapshot.root}: no image subsets to audit")
    for subset in subsets:
        snapshot.check_task(subset, "image")
    skipped: list[SkippedImage] = []

    say("image statistics: sampling and decoding")
    gallery = _measure(snapshot, _gallery_sample(snapshot, subsets, settings), skipped)
    noise = _measure(snapshot, _noise_sample(snapshot, settings), skipped, True) if snapshot.has_noise else None
    query_sides = {s: _measure(snapshot, [(s, "query", _query_sample(snapshot, s, settings, i))], skipped)
                   for i, s in enumerate(subsets)}  # fmt: skip
    timings["decode_s"] = time.perf_counter() - started

    t0 = time.perf_counter()
    say("image statistics: probing")
    stats_probe, stats_share = _statistics_probe(gallery, noise, query_sides, settings)
    timings["image_statistics_s"] = time.perf_counter() - t0
    embedding_probe, embed_share, effect = None, None, None
    if provider is not None:
        provider = ReusedEmbeddings(provider)
        embedding_probe, embed_share, effect = _model_side(
            snapshot, provider, (gallery, noise, query_sides), subsets, settings, say, timings
        )
    shortcuts = None
    if baselines:
        t0 = time.perf_counter()
        say("query side: trivial baselines")
        if reference is None and provider is not None:
            name = provider.describe().name or provider.spec
            reference = evaluated_reference(snapshot, provider, name, subsets, settings.resamples, settings.seed)
        shortcuts = query_shortcuts(snapshot, baselines, subsets, reference, settings.resamples, settings.seed)
        timings["query_side_s"] = time.perf_counter() - t0

    noise_labels = snapshot.labels(NOISE, "gallery") if snapshot.has_noise else None
    consistency = {
        s: label_consistency(snapshot.labels(s, "query"), snapshot.labels(s, "gallery"), noise_labels) for s in subsets
    }
    timings["total_s"] = time.perf_counter() - started
    return AuditReport(
        lookbench_version=lookbench.__version__,
        snapshot=AuditSnapshot(id=snapshot.snapshot_id, name=snapshot.name, content_hash=snapshot.content_hash),
        sampling=Sampling(
            seed=settings.seed,
            per_side=settings.per_side,
            gallery_images=sum(snapshot.num_rows(s, "gallery") for s in subsets),
            noise_images=snapshot.num_rows(NOISE, "gallery") if snapshot.has_noise else 0,
            gallery_sampled=gallery.size,
            noise_sampled=0 if noise is None else noise.size,
            queries_per_subset=settings.queries_per_subset,
            folds=settings.folds,
            resamples=settings.resamples,
        ),
        separability=Separability(image_statistics=stats_probe, embedding_probe=embedding_probe),
        queries={
            s: QuerySide(
                queries=q.size,
                image_statistics=None if stats_share is None else stats_share[s],
                embedding_probe=None if embed_share is None else embed_share[s],
            )
            for s, q in query_sides.items()
        },
        noise_effect=effect,
        shortcuts=shortcuts,
        label_consistency=consistency,
        skipped_images=skipped,
        timings={k: round(v, 3) for k, v in timings.items()},
    )


def _statistics_probe(
    gallery: Side, noise: Side | None, query_sides: dict[str, Side], settings: AuditSettings
) -> tuple[ImageStatisticsProbe, dict[str, float] | None]:
    """The image-statistics probe of gallery against noise, each statistic group alone, and the queries' noise side."""
    if noise is None:
        return ImageStatisticsProbe(auc=None, ci=None, reason=NO_NOISE), None
    x = np.concatenate([gallery.features, noise.features])
    is_noise = np.r_[np.zeros(gallery.size, bool), np.ones(noise.size, bool)]
    value, ci, reason = _probe(x, is_noise, settings)
    top: list[StatisticAuc] = []
    share = None
    if reason is None:
        for group in GROUPS:
            group_auc, _, _ = _probe(x[:, group.columns], is_noise, replace(settings, resamples=0))
            top.append(StatisticAuc(name=group.name, auc=0.5 if group_auc is None else group_auc))
        top.sort(key=lambda s: -s.auc)
        share = _noise_side_share(x, is_noise, {s: q.features for s, q in query_sides.items()})
        test = _separation_test(gallery, noise, settings)
    else:
        test = None
    return ImageStatisticsProbe(auc=value, ci=ci, top_statistics=top, reason=reason, test=test), share


def _separation_test(gallery: Side, noise: Side, settings: AuditSettings) -> SeparationTest:
    """The permutation test on the sample, then on the sample with brightened noise pixels, smallest factor first,
    up to the first one it flags."""
    is_noise = np.r_[np.zeros(gallery.size, bool), np.ones(noise.size, bool)]

    def run(noise_features: np.ndarray) -> Outcome:
        x = np.concatenate([gallery.features, noise_features])
        with threadpool_limits(limits=1, user_api="blas"):  # see ONE_BLAS_THREAD
            return permutation_test(x, is_noise, settings.permutations, settings.alpha, settings.seed, settings.folds)

    observed = run(noise.features)
    planted: list[PlantedShift] = []
    for factor in sorted(settings.planted):
        shifted = np.asarray([pixel_statistics(brightened(d.pixels, factor), d.header) for d in noise.decoded or []])
        outcome = run(shifted)
        detected = outcome.p_value <= settings.alpha
        planted.append(
            PlantedShift(brightness=factor, statistic=outcome.statistic, p_value=outcome.p_value, detected=detected)
        )
        if detected:
            break
    smallest = planted[-1].brightness if planted and planted[-1].detected else None
    separable = observed.p_value <= settings.alpha
    return SeparationTest(
        **asdict(observed), permutations=settings.permutations, alpha=settings.alpha, separable=separable,
        planted=planted, smallest_detected_brightness=smallest,
    )  # fmt: skip


def _model_side(
    snapshot: Snapshot,
    provider: EmbeddingProvider,
    samples: tuple[Side, Side | None, dict[str, Side]],
    subsets: list[str],
    settings: AuditSettings,
    say: Progress,
    timings: dict[str, float],
) -> tuple[EmbeddingProbe, dict[str, float] | None, dict[str, NoiseEffect] | None]:
    """The linear probe on the model's embeddings of the same samples, and the noise effect on retrieval."""
    gallery, noise, query_sides = samples
    reused = provider
    name = provider.describe().name or provider.spec
    t0 = time.perf_counter()
    say(f"embedding probe: {name}")
    embed_share: dict[str, float] | None = None
    if noise is None:
        embedding_probe = EmbeddingProbe(model=name, auc=None, ci=None, reason=NO_NOISE)
    else:
        e_gallery = _embeddings(reused, snapshot, gallery.parts)
        e_noise = _embeddings(reused, snapshot, noise.parts)
        x = np.concatenate([e_gallery, e_noise])
        is_noise = np.r_[np.zeros(len(e_gallery), bool), np.ones(len(e_noise), bool)]
        value, ci, reason = _probe(x, is_noise, settings)
        if reason == NO_VARIATION:
            reason = "the model returns the same vector for every sampled image: nothing to separate them by"
        embedding_probe = EmbeddingProbe(model=name, auc=value, ci=ci, reason=reason)
        if reason is None:
            queries = {s: _embeddings(reused, snapshot, q.parts) for s, q in query_sides.items()}
            embed_share = _noise_side_share(x, is_noise, queries)
    timings["embedding_probe_s"] = time.perf_counter() - t0
    effect: dict[str, NoiseEffect] | None = None
    if snapshot.has_noise:
        t0 = time.perf_counter()
        say("noise effect: evaluating with and without the noise pool")
        effect = noise_effect(snapshot, reused, subsets, settings.resamples, settings.seed)
        timings["noise_effect_s"] = time.perf_counter() - t0
    return embedding_probe, embed_share, effect
