"""The fact sheet of a model: the card facts contamination reads, one strict type for every source of them.

Shipped model cards, `python:` models, `embeddings:` folders (`model.json`) and `lookbench train` exports all
build a `ModelFacts`; result files record it as `model.card`.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, field_validator

from lookbench.dates import date_as_given, lenient_date

UNKNOWN = "unknown"
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


class ModelFacts(BaseModel):
    """Release date, training cutoff, training data and size of a model, as its card gives them.

    Dates are text as given (`2020-03`, `2012 (ImageNet)`, an ISO date or `unknown`); a partial date stands for
    its whole period, so it is read as the period's last day (the conservative reading for contamination).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str | None = None
    name: str | None = None
    release_date: str = UNKNOWN
    training_cutoff: str = UNKNOWN
    training_data: tuple[str, ...] = ()
    params: str | int | None = None
    """As given: a count, or text such as `4.7M` or `~88M (image tower)` (free text: `parameters` reads what it
    can)."""
    license: str | None = None
    open_weights: bool | Literal["unknown"] | None = None
    weights_source: str | None = None

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

    def cutoff_bound(self) -> tuple[dt.date, str, bool] | None:
        """The last day the training data can come from, as given, and whether it is the release date standing in
        for an undeclared cutoff (a model cannot be trained on data published after its release)."""
        cutoff, release = self.cutoff_day, self.release_day
        if cutoff is not None:
            return cutoff, self.cutoff_text or cutoff.isoformat(), False
        if release is not None:
            return release, self.release_text or release.isoformat(), True
        return None

    @classmethod
    def lenient(cls, card: Any) -> ModelFacts | None:
        """Facts from a card recorded by schema 1.0-1.2 result files (any dict): unknown keys and values that do
        not parse are dropped, as those files' readers ignored them; None when there is no card."""
        if not isinstance(card, dict):
            return None
        kept: dict[str, Any] = {}
        for key, value in card.items():
            if key in cls.model_fields:
                try:
                    cls.model_validate({key: value})
                except ValueError:
                    continue
                kept[key] = value
        return cls.model_validate(kept)
