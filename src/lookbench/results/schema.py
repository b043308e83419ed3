"""The result-file schema (version 2): what a run measured and exactly what produced it."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from lookbench._util.limits import MAX_K, MAX_RESAMPLES
from lookbench.models.meta import ModelRun

RESULT_SCHEMA_VERSION = "2.0"
"""The `model` record a `ModelRun`: the spec, identity, dimension and facts in its `meta` (a `ModelMeta`). No 1.x
file was ever released: readers accept 2.x only."""
READABLE_MAJORS = ("2",)


FRACTION_SLACK = 1e-6
"""How far past [0, 1] a metric may round (an nDCG of float32 gains can exceed 1 in its last digits)."""


def fraction(value: float) -> float:
    """A metric value: finite and in [0, 1] (within rounding); NaN, infinities and absurd values are refused."""
    if not -FRACTION_SLACK <= value <= 1 + FRACTION_SLACK:  # False for NaN as well
        raise ValueError(f"{value!r} is not a fraction in [0, 1]")
    return value


class MetricValue(BaseModel):
    """A mean (a fraction in [0, 1]) with its 95% bootstrap interval over `n` units."""

    model_config = ConfigDict(extra="forbid")

    value: float = Field(strict=True)
    ci_low: float = Field(strict=True)
    ci_high: float = Field(strict=True)
    n: int = Field(ge=0, strict=True)

    _fractions = field_validator("value", "ci_low", "ci_high")(fraction)

    @model_validator(mode="after")
    def _ordered(self) -> MetricValue:
        if self.ci_low > self.ci_high:
            raise ValueError(f"interval [{self.ci_low!r}, {self.ci_high!r}] is inverted")
        return self


class CategoryValue(BaseModel):
    """A per-category mean without interval."""

    model_config = ConfigDict(extra="forbid")

    value: float = Field(strict=True)
    n: int = Field(ge=0, strict=True)

    _fraction = field_validator("value")(fraction)


class SubsetInfo(BaseModel):
    """Sizes of one evaluated task."""

    model_config = ConfigDict(extra="forbid")

    queries: int
    gallery: int
    corpus: int
    skipped_queries: int = 0
    skipped_corpus: int = 0


class SnapshotInfo(BaseModel):
    """Which data was evaluated."""

    model_config = ConfigDict(extra="forbid")

    id: str
    location: str
    content_hash: str
    noise_rows: int
    subsets: dict[str, SubsetInfo]


class BootstrapConfig(BaseModel):
    """How the confidence intervals were computed."""

    model_config = ConfigDict(extra="forbid")

    resamples: int = Field(ge=0, le=MAX_RESAMPLES)
    seed: int
    confidence: float
    unit: str = "query; whole outfits on street-look subsets"


class DateWindow(BaseModel):
    """Queries kept by their first_seen_at date (inclusive bounds, ISO dates); None means unbounded."""

    model_config = ConfigDict(extra="forbid")

    since: str | None = None
    until: str | None = None
    kept_queries: int
    total_queries: int


class SearchInfo(BaseModel):
    """The search backend and its settings; approximate backends add their recall against exact search."""

    model_config = ConfigDict(extra="forbid")

    backend: str
    device: str | None = None
    index: str | None = None
    nlist: int | str | None = None
    nprobe: int | None = None
    hnsw_m: int | None = None
    ef_search: int | None = None
    ef_construction: int | None = None
    small_part_flat_below: int | None = None
    recall: dict[str, dict[str, float]] | None = Field(
        default=None, description="subset -> recall@K against exact search, on `recall_queries` sampled queries"
    )
    recall_queries: int | None = None


class RunConfig(BaseModel):
    """Settings of the run that change the numbers."""

    model_config = ConfigDict(extra="forbid")

    fine_rule: str
    ks: list[int] = Field(min_length=1)

    @field_validator("ks")
    @classmethod
    def _ks_in_range(cls, ks: list[int]) -> list[int]:
        if any(not 1 <= k <= MAX_K for k in ks):
            raise ValueError(f"cut-offs must lie in 1..{MAX_K}, got {ks}")
        return ks

    search_backend: str
    search: SearchInfo | None = None
    bootstrap: BootstrapConfig
    window: DateWindow | None = None
    protocol: str | None = None
    """The official protocol the snapshot's dataset card names (a legacy benchmark), else None."""
    noise: Literal["all", "none"] = "all"
    """Whether each subset was searched with the shared noise pool (`all`) or against its gallery alone."""


class ResultFile(BaseModel):
    """One evaluation of one model on one snapshot."""

    model_config = ConfigDict(extra="forbid")

    schema_version: str = RESULT_SCHEMA_VERSION
    lookbench_version: str
    created_at: str
    snapshot: SnapshotInfo
    model: ModelRun
    config: RunConfig
    environment: dict[str, str]
    metrics: dict[str, dict[str, MetricValue]] = Field(description="subset or 'overall' -> metric -> value")
    per_category: dict[str, dict[str, dict[str, CategoryValue]]] = Field(
        description="subset -> category -> metric -> value"
    )
    breakdowns: dict[str, dict[str, dict[str, dict[str, MetricValue]]]] = Field(
        default_factory=dict,
        description="composed subset -> breakdown (change_group, num_changes) -> key -> metric -> value",
    )
    skipped: list[dict[str, Any]] = Field(default_factory=list)
    per_query_file: str | None = None
    per_query_sha256: str | None = None
    """sha256 of the per-query file as written with this JSON; checked whenever the pair is loaded."""
    warnings: list[str] = Field(default_factory=list)
    """What the snapshot's labels make doubtful (e.g. queries whose category is absent from the gallery)."""
    timings: dict[str, float] = Field(default_factory=dict)

    @property
    def model_name(self) -> str:
        """A short display name for the model."""
        return self.model.name or self.model.spec or "unknown"
