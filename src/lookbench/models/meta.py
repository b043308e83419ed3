"""`ModelMeta`: everything known about a model (its facts, its spec and how it loads) in one strict type.

Shipped model cards (`cards/*.json`), `python:` models' `card`, `embeddings:` folders' `model.json`, mteb models
and `lookbench train` exports all build one; a result file records it as `model.meta` of its `ModelRun`
(`ModelMeta.result_record`), and the Hub card is built from it.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator

from lookbench._util.dates import date_as_given, lenient_date
from lookbench.models.spec import ModelSpec

UNKNOWN = "unknown"
Unknown = Literal["unknown"]
REPORTED_SOURCE = "reported by the authors: LookBench leaderboard release v2601 (snapshot v20251201)"
FACT_FIELDS = (
    "id",
    "name",
    "release_date",
    "training_cutoff",
    "training_data",
    "params",
    "license",
    "open_weights",
    "weights_source",
)
"""The fact sheet that schema-1.x result files recorded as `model.card` (and bundles still do), in its order."""
_UNIONS: dict[str, tuple[type | tuple[type, ...], type | tuple[type, ...], str]] = {
    "embed_dim": (int, bool, "a whole number or 'unknown'"),
    "input_resolution": (int, bool, "a whole number or 'unknown'"),
    "open_weights": (bool, (), "true, false or 'unknown'"),
    "params": ((str, int), bool, "a count or text such as '4.7M'"),
}
"""Field -> (the types it takes, those it refuses among them, what to say) for fields of a union type."""
_SIZE = re.compile(r"^\s*([\d.]+(?:e\d+)?)\s*([kmbt]?)\b", re.IGNORECASE)
_SCALE = {"": 1, "k": 10**3, "m": 10**6, "b": 10**9, "t": 10**12}


def parameter_count(value: Any) -> int | None:
    """A parameter count from a number or text such as `4.7M`, `0.3B` or `1.5e8`; None if unknown."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return int(value)
    match = _SIZE.match(str(value))
    if match is None:
        return None
    try:
        return int(float(match.group(1)) * _SCALE[match.group(2).lower()])
    except ValueError:
        return None


class ReportedResult(BaseModel):
    """Published LookBench numbers (percent), `subset -> metric -> @k -> value`, as the authors reported them."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    source: str = REPORTED_SOURCE
    leaderboard_name: str
    snapshot: str = "v20251201"
    metrics: dict[str, dict[str, dict[str, float]]]


class ModelMeta(BaseModel):
    """What is known about one model: identity, spec (how it loads), size, dates, training data and licence.

    Dates are text as given (`2020-03`, `2012 (ImageNet)`, an ISO date or `unknown`); a partial date stands for
    its whole period, so it is read as the period's last day (the conservative reading for contamination).
    """

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    id: str | None = Field(default=None, pattern=r"^[a-z0-9][a-z0-9.\-]*$")
    """The shipped card's id (`efficientnet-lite0`)."""
    name: str | None = None
    aliases: tuple[str, ...] = ()
    spec: str | None = None
    """`kind:argument`, what `lookbench eval -m` loads; None when no adapter here can run it."""
    kind: str | None = None
    """The adapter that ran it (`onnx`, `timm`, `embeddings`...), which may differ from the spec's kind."""
    model_id: str | None = None
    """The adapter's name for the weights (a Hub repo, a timm name)."""
    family: str | None = None
    revision: str | None = None
    release_date: str = UNKNOWN
    training_cutoff: str = UNKNOWN
    training_data: tuple[str, ...] = ()
    params: str | int | None = None
    """As given: a count, or text such as `4.7M` or `~88M (image tower)` (`parameters` reads what it can)."""
    embed_dim: int | Unknown | None = None
    input_resolution: int | Unknown | None = None
    license: str | None = None
    open_weights: bool | Unknown | None = None
    weights_source: str | None = None
    requires: tuple[str, ...] = ()
    notes: str = ""
    reported: ReportedResult | None = None

    @field_validator("release_date", "training_cutoff", mode="before")
    @classmethod
    def _date_text(cls, value: Any) -> Any:
        if isinstance(value, dt.date):
            return (value.date() if isinstance(value, dt.datetime) else value).isoformat()
        if value is None:
            return UNKNOWN
        if isinstance(value, str) and value.strip().lower() != UNKNOWN and lenient_date(value) is None:
            raise ValueError(f"expected a date (YYYY, YYYY-MM, YYYY-MM-DD, ISO) or 'unknown', got {value!r}")
        return value

    @field_validator("training_data", mode="before")
    @classmethod
    def _names(cls, value: Any) -> Any:
        if isinstance(value, list | tuple):
            return tuple(str(v).strip() for v in value if v is not None and str(v).strip())
        return value

    @field_validator("embed_dim", "input_resolution", "open_weights", "params", mode="before")
    @classmethod
    def _one_of(cls, value: Any, info: ValidationInfo) -> Any:
        # one error naming the field, not one per member of its union
        wanted = _UNIONS[info.field_name or ""]
        if value is None or value == UNKNOWN or (isinstance(value, wanted[0]) and not isinstance(value, wanted[1])):
            return value
        raise ValueError(f"expected {wanted[2]}, got {value!r}")

    @field_validator("aliases", "requires", mode="before")
    @classmethod
    def _listed(cls, value: Any) -> Any:
        return tuple(value) if isinstance(value, list) else value  # JSON gives lists; the type is frozen

    @property
    def loader(self) -> ModelSpec | None:
        """The spec as the kind of loader and what it loads (`ModelSpec.parse`); None if no adapter here can run it
        (or no `:`)."""
        return None if self.spec is None else ModelSpec.parse(self.spec)

    @property
    def release_day(self) -> dt.date | None:
        """The release date (a partial date's last day); None if unknown."""
        return lenient_date(self.release_date)

    @property
    def cutoff_day(self) -> dt.date | None:
        """The training cutoff (a partial date's last day); None if unknown."""
        return lenient_date(self.training_cutoff)

    @property
    def release_text(self) -> str | None:
        """The release date as the card gives it (`2020-03`), for display; None if unknown."""
        return date_as_given(self.release_date)

    @property
    def cutoff_text(self) -> str | None:
        """The training cutoff as the card gives it, for display; None if unknown."""
        return date_as_given(self.training_cutoff)

    @property
    def parameters(self) -> int | None:
        """The parameter count when `params` starts with one (`4.7M`, `0.3B`, `1.5e8`); None otherwise."""
        return parameter_count(self.params)

    @property
    def has_facts(self) -> bool:
        """Whether any fact of the card's fact sheet (`FACT_FIELDS`) is known: False reads as "no card"."""
        facts = set(FACT_FIELDS)
        return self.model_dump(include=facts) != ModelMeta().model_dump(include=facts)

    def fact_sheet(self) -> dict[str, Any] | None:
        """The fact sheet as JSON, in the form schema-1.x results recorded as `model.card`; None without facts."""
        return self.model_dump(mode="json", include=set(FACT_FIELDS)) if self.has_facts else None

    def cutoff_bound(self) -> tuple[dt.date, str, bool] | None:
        """The last day the training data can come from, as given, and whether it is the release date standing in
        for an undeclared cutoff (a model cannot be trained on data published after its release)."""
        cutoff, release = self.cutoff_day, self.release_day
        if cutoff is not None:
            return cutoff, self.cutoff_text or cutoff.isoformat(), False
        if release is not None:
            return release, self.release_text or release.isoformat(), True
        return None

    def merged(self, **known: Any) -> ModelMeta:
        """This meta with the fields in `known` that are not None taking their place, validated."""
        given = {k: v for k, v in known.items() if v is not None}
        return ModelMeta.model_validate({**self.model_dump(exclude_defaults=True), **given})

    def result_record(self, name: str, **run: Any) -> ModelRun:
        """The model record of a result file: this meta (without the shipped card's aliases, requirements, notes
        and reported numbers) under the run's display `name`, with how the run embedded (`ModelRun`'s fields)."""
        kept = self.model_copy(update={"aliases": (), "requires": (), "notes": "", "reported": None})
        return ModelRun.model_validate({"name": name, "meta": kept, **run})


class Composition(BaseModel):
    """How a run's composed queries were embedded: the method and, per composed subset, what it recorded."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    method: str
    subsets: dict[str, dict[str, Any]]


class ModelRun(BaseModel):
    """The `model` record of a result file: the run's display name, the model's `ModelMeta` (spec, identity,
    dimension, facts) and how it embedded; built by `ModelMeta.result_record`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    """The display name (a composed run's names its method)."""
    meta: ModelMeta
    precision: str | None = None
    """The precision a torch model ran at; None: the model's own."""
    composition: Composition | None = None
    input_kind: str | None = None
    preprocess: dict[str, Any] | None = None
    storage_dtype: str | None = None
    jpeg_draft: bool | None = None
    decode: str | None = None
    batch_size: int | None = None
    workers: int | None = None
    cache: str | None = None
    skipped: dict[str, dict[str, str]] = Field(default_factory=dict)
    """`subset/split -> row -> error` of images left out as undecodable."""
    sharding: dict[str, Any] | None = None
    details: dict[str, Any] = Field(default_factory=dict)
    """What the model's adapter says about itself (file, output, weights, architecture, device, factory...)."""

    @property
    def spec(self) -> str:
        """The spec that ran (every run has one)."""
        return self.meta.spec or self.name


IDENTITY = ("spec", "kind", "model_id", "revision")
"""The fields that say which model ran, kept in its `meta`."""
