"""The audit report (version 1): separability of distractors from galleries, queries on the noise side, the
noise effect on a model's scores and the label-rule consistency check."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator

from lookbench.results.schema import MetricValue, fraction

AUDIT_SCHEMA_VERSION = "2"

_STRICT = ConfigDict(extra="forbid", strict=True, populate_by_name=True)


def optional_fraction(value: float | None) -> float | None:
    """An AUC or share: None, or finite and in [0, 1]."""
    return None if value is None else fraction(value)


def interval(value: tuple[float, float] | None) -> tuple[float, float] | None:
    """An AUC's interval: None, or two fractions, the low one first."""
    if value is not None:
        low, high = fraction(value[0]), fraction(value[1])
        if low > high:
            raise ValueError(f"interval [{low!r}, {high!r}] is inverted")
    return value


class StatisticAuc(BaseModel):
    """One image statistic's own cross-validated AUC (gallery vs noise)."""

    model_config = _STRICT

    name: str
    auc: float

    _auc = field_validator("auc")(fraction)


class PlantedShift(BaseModel):
    """The calibrated test on the sample with every sampled noise image's pixels brightened by `brightness`."""

    model_config = _STRICT

    brightness: float
    statistic: float
    p_value: float
    detected: bool

    _fractions = field_validator("statistic", "p_value")(fraction)


class SeparationTest(BaseModel):
    """The calibrated gallery-vs-noise test: a max-statistic permutation test (docs/audit.md#method)."""

    model_config = _STRICT

    statistic: float
    """The largest cross-validated AUC of the ridge discriminant over the statistic groups and all together."""
    statistic_group: str
    null_quantile: float
    """The (1 - alpha) quantile of the same maximum under shuffled gallery/noise labels."""
    p_value: float
    permutations: int
    alpha: float
    separable: bool
    """p_value <= alpha: the noise pool is told from the galleries by its image statistics."""
    planted: list[PlantedShift] = Field(default_factory=list)
    smallest_detected_brightness: float | None = None
    """The smallest planted brightness factor the test flags (None: none of those tried)."""

    _fractions = field_validator("statistic", "null_quantile", "p_value", "alpha")(fraction)


class ImageStatisticsProbe(BaseModel):
    """A linear probe on model-free image statistics; `auc` is None with a `reason` where it cannot be measured."""

    model_config = _STRICT

    auc: float | None
    ci: tuple[float, float] | None
    top_statistics: list[StatisticAuc] = Field(default_factory=list)
    reason: str | None = None
    test: SeparationTest | None = None
    """The calibrated test (None where `auc` is, and in reports of schema 1)."""

    _auc = field_validator("auc")(optional_fraction)
    _ci = field_validator("ci")(interval)


class EmbeddingProbe(BaseModel):
    """A linear probe on a model's embeddings; `auc` is None with a `reason` where it cannot be measured."""

    model_config = _STRICT

    model: str
    auc: float | None
    ci: tuple[float, float] | None
    reason: str | None = None

    _auc = field_validator("auc")(optional_fraction)
    _ci = field_validator("ci")(interval)


class Separability(BaseModel):
    """How well distractors (noise) are told apart from gallery images: cross-validated AUC, 0.5 = not at all."""

    model_config = _STRICT

    image_statistics: ImageStatisticsProbe
    embedding_probe: EmbeddingProbe | None = None


class QuerySide(BaseModel):
    """Share of a subset's (sampled) queries each probe places on the noise side (None: that probe did not run)."""

    model_config = _STRICT

    queries: int
    image_statistics: float | None
    embedding_probe: float | None = None

    _shares = field_validator("image_statistics", "embedding_probe")(optional_fraction)


class WithAndWithout(BaseModel):
    """A metric with the noise pool and without it."""

    model_config = _STRICT

    with_noise: MetricValue
    without_noise: MetricValue


class NoiseEffect(BaseModel):
    """What the noise pool does to one scope's scores."""

    model_config = _STRICT

    fine_recall_at_1: WithAndWithout = Field(alias="fine_recall@1")
    distractor_share_at_1: MetricValue = Field(alias="distractor_share@1")


class BaselineScore(BaseModel):
    """A trivial baseline's score on one scope, its ratio to the reference model's (None: no reference, or the
    reference scores 0) with that ratio's paired bootstrap interval, and whether it reaches `share_flagged` of it."""

    model_config = _STRICT

    value: MetricValue
    ratio: float | None
    ratio_ci_low: float | None = None
    """95% interval of the ratio over paired resamples of the queries' clusters (None: no ratio, no resamples or a
    reference without its per-query table)."""
    ratio_ci_high: float | None = None
    flagged: bool


class TrivialBaseline(BaseModel):
    """One fashion-blind baseline (a model spec) scored per subset and overall."""

    model_config = _STRICT

    model: str
    scores: dict[str, BaselineScore]


class QueryShortcuts(BaseModel):
    """Query-side shortcuts: what trivial baselines score with the benchmark's own metric, against a named model."""

    model_config = _STRICT

    metric: str
    share_flagged: float
    reference: str | None
    """The named model's name (None: no `--model` or `--reference-results`, so no ratios)."""
    reference_source: str | None
    reference_scores: dict[str, MetricValue] | None
    baselines: list[TrivialBaseline]
    flagged: list[str]
    """`<baseline> on <scope> (<ratio> of the model)` for every flagged score."""


class LabelConsistency(BaseModel):
    """Per subset: the label rule's own ceiling and how many queries a distractor carries the labels of."""

    model_config = _STRICT

    queries: int
    with_gallery_fine_match: int
    """Queries with at least one gallery row that fine-matches them (rule `main`): a perfect labeller's ceiling."""
    noise_carries_main: int
    """Queries for which some noise row has their category and main attribute (ties a perfect labeller, rule main)."""
    noise_carries_all: int
    """Queries for which some noise row has their category and every attribute of theirs (rule strict)."""


class Sampling(BaseModel):
    """What was sampled, with which seed (see docs/audit.md#sampling)."""

    model_config = _STRICT

    seed: int
    per_side: int
    gallery_images: int
    noise_images: int
    gallery_sampled: int
    noise_sampled: int
    queries_per_subset: int
    folds: int
    resamples: int


class SkippedImage(BaseModel):
    """An image the statistics could not read (left out of the probe)."""

    model_config = _STRICT

    subset: str
    split: str
    row: int
    error: str


class AuditSnapshot(BaseModel):
    """Which snapshot was audited."""

    model_config = _STRICT

    id: str
    name: str
    content_hash: str


class AuditReport(BaseModel):
    """The whole audit of one snapshot."""

    model_config = _STRICT

    schema_version: str = AUDIT_SCHEMA_VERSION
    lookbench_version: str
    snapshot: AuditSnapshot
    sampling: Sampling
    separability: Separability
    queries: dict[str, QuerySide]
    noise_effect: dict[str, NoiseEffect] | None = None
    shortcuts: QueryShortcuts | None = None
    """None when no baselines were asked for (the audit of a built release)."""
    label_consistency: dict[str, LabelConsistency]
    skipped_images: list[SkippedImage] = Field(default_factory=list)
    timings: dict[str, float] = Field(default_factory=dict)

    def to_json(self) -> str:
        """The report as indented JSON, metric keys as `fine_recall@1`."""
        return self.model_dump_json(by_alias=True, indent=2) + "\n"
