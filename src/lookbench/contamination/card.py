"""The model-card facts that decide contamination, parsed leniently from a result's `model["card"]`."""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

from pydantic import BaseModel, ConfigDict, field_validator, model_validator

from lookbench.dates import date_as_given, lenient_date

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


class CardFacts(BaseModel):
    """Release date, training cutoff, training data, size and name of a model, as far as its card says."""

    model_config = ConfigDict(extra="ignore")

    name: str | None = None
    release_date: dt.date | None = None
    training_cutoff: dt.date | None = None
    training_data: list[str] = []
    params: int | None = None
    release_text: str | None = None
    """The release date as the card gives it (`2020-03`), for display."""
    cutoff_text: str | None = None
    """The training cutoff as the card gives it, for display."""

    @model_validator(mode="before")
    @classmethod
    def _given_dates(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        return {
            **data,
            "release_text": date_as_given(data.get("release_date")),
            "cutoff_text": date_as_given(data.get("training_cutoff")),
        }

    @field_validator("release_date", "training_cutoff", mode="before")
    @classmethod
    def _date(cls, value: Any) -> dt.date | None:
        return lenient_date(value)

    @field_validator("training_data", mode="before")
    @classmethod
    def _names(cls, value: Any) -> list[str]:
        if value is None:
            return []
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list | tuple):
            return []
        return [str(v).strip() for v in value if v is not None and str(v).strip()]

    @field_validator("params", mode="before")
    @classmethod
    def _params(cls, value: Any) -> int | None:
        return parameter_count(value)

    def cutoff_bound(self) -> tuple[dt.date, str, bool] | None:
        """The last day the training data can come from, as given, and whether it is the release date standing in
        for an undeclared cutoff (a model cannot be trained on data published after its release)."""
        if self.training_cutoff is not None:
            return self.training_cutoff, self.cutoff_text or self.training_cutoff.isoformat(), False
        if self.release_date is not None:
            return self.release_date, self.release_text or self.release_date.isoformat(), True
        return None

    @classmethod
    def of_model(cls, model: dict[str, Any]) -> CardFacts:
        """Facts from a result's `model` dict; an absent or malformed card gives all-unknown facts."""
        card = model.get("card")
        return cls.model_validate(card) if isinstance(card, dict) else cls()
