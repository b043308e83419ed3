"""Model cards: what is known about each registered encoder, shipped as package data (`cards/*.json`)."""

from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from lookbench.embeddings.facts import ModelFacts
from lookbench.errors import LookBenchError

Unknown = Literal["unknown"]
REPORTED_SOURCE = "reported by the authors: LookBench leaderboard release v2601 (snapshot v20251201)"


class ReportedResult(BaseModel):
    """Published LookBench numbers (percent), `subset -> metric -> @k -> value`, as the authors reported them."""

    model_config = ConfigDict(extra="forbid")

    source: str = REPORTED_SOURCE
    leaderboard_name: str
    snapshot: str = "v20251201"
    metrics: dict[str, dict[str, dict[str, float]]]


class ModelCard(BaseModel):
    """One encoder's facts; `spec` is None when no adapter here can run it (closed or non-PyTorch weights)."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9.\-]*$")
    name: str
    aliases: list[str] = []
    spec: str | None
    family: str
    revision: str
    parameters: str
    embedding_dim: int | Unknown
    input_resolution: int | Unknown
    license: str
    open_weights: bool | Unknown
    release_date: str
    training_cutoff: str
    training_data: list[str]
    weights_source: str
    requires: list[str] = []
    notes: str = ""
    reported: ReportedResult | None = None

    def facts(self) -> ModelFacts:
        """The card's fact sheet, recorded in result files (`model.card`), which contamination flags read."""
        return ModelFacts(
            id=self.id,
            name=self.name,
            release_date=self.release_date,
            training_cutoff=self.training_cutoff,
            training_data=tuple(self.training_data),
            params=self.parameters,
            license=self.license,
            open_weights=self.open_weights,
            weights_source=self.weights_source,
        )


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object hook that refuses repeated keys (plain `json` silently keeps the last one)."""
    seen: dict[str, Any] = {}
    for key, value in pairs:
        if key in seen:
            raise ValueError(f"field {key!r} appears twice")
        seen[key] = value
    return seen


def parse_card(text: str, where: str) -> ModelCard:
    """Validate one card's JSON text; errors name `where` and the field."""
    try:
        return ModelCard.model_validate(json.loads(text, object_pairs_hook=_no_duplicate_keys))
    except ValueError as exc:
        raise LookBenchError(f"model card {where} is invalid: {exc}") from exc


@lru_cache(maxsize=1)
def load_cards() -> dict[str, ModelCard]:
    """Every shipped card by id, validated."""
    cards: dict[str, ModelCard] = {}
    folder = resources.files("lookbench.models") / "cards"
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if not entry.name.endswith(".json"):
            continue
        card = parse_card(entry.read_text(encoding="utf-8"), entry.name)
        if card.id in cards:
            raise LookBenchError(f"duplicate model card id {card.id!r}")
        cards[card.id] = card
    return cards


def card_for_spec(spec: str) -> ModelCard | None:
    """The card whose runnable spec is exactly `spec`."""
    return next((card for card in load_cards().values() if card.spec == spec), None)


def find_card(name: str) -> ModelCard | None:
    """The card whose id, name or alias matches `name` (case-insensitive)."""
    wanted = name.strip().lower()
    for card in load_cards().values():
        if wanted in {card.id, card.name.lower(), *(a.lower() for a in card.aliases)}:
            return card
    return None
