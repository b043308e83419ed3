"""The model-card facts that decide contamination, parsed leniently from a result's `model["card"]`."""

from __future__ import annotations

import datetime as dt
from typing import Any

from pydantic import BaseModel, ConfigDict, field_validator

UNKNOWN_WORDS = frozenset({"", "unknown", "none", "null", "n/a", "na", "?"})


def lenient_date(value: Any) -> dt.date | None:
    """An ISO date (or datetime, or YYYY-MM / YYYY) as a date; None for unknown or unparseable values."""
    if value is None:
        return None
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, dt.date):
        return value
    text = str(value).strip()
    if text.lower() in UNKNOWN_WORDS:
        return None
    for candidate in (text, text[:10]):
        try:
            return dt.date.fromisoformat(candidate)
        except ValueError:
            continue
    for fmt in ("%Y-%m", "%Y"):
        try:
            return dt.datetime.strptime(text, fmt).date()
        except ValueError:
            continue
    return None


class CardFacts(BaseModel):
    """Release date, training cutoff, training data, size and name of a model, as far as its card says."""

    model_config = ConfigDict(extra="ignore")

    name: str | None = None
    release_date: dt.date | None = None
    training_cutoff: dt.date | None = None
    training_data: list[str] = []
    params: int | None = None

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
        try:
            return None if value is None or isinstance(value, bool) else int(float(value))
        except (TypeError, ValueError):
            return None

    @classmethod
    def of_model(cls, model: dict[str, Any]) -> CardFacts:
        """Facts from a result's `model` dict; an absent or malformed card gives all-unknown facts."""
        card = model.get("card")
        return cls.model_validate(card) if isinstance(card, dict) else cls()
