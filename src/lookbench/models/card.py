"""Model cards: the `ModelMeta` of each registered encoder, shipped as package data (`cards/*.json`)."""

from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources
from typing import Any

from pydantic import ValidationError

from lookbench.errors import LookBenchError, first_problem
from lookbench.models.meta import ModelMeta


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object hook that refuses repeated keys (plain `json` silently keeps the last one)."""
    seen: dict[str, Any] = {}
    for key, value in pairs:
        if key in seen:
            raise ValueError(f"field {key!r} appears twice")
        seen[key] = value
    return seen


def parse_card(text: str, where: str) -> ModelMeta:
    """Validate one card's JSON text; errors name `where` and the field."""
    try:
        meta = ModelMeta.model_validate(json.loads(text, object_pairs_hook=_no_duplicate_keys))
    except ValidationError as exc:
        raise LookBenchError(f"model card {where} is invalid: field {first_problem(exc)}") from exc
    except ValueError as exc:
        raise LookBenchError(f"model card {where} is invalid: {exc}") from exc
    if meta.id is None or meta.name is None:
        raise LookBenchError(f"model card {where} is invalid: a shipped card needs an id and a name")
    return meta


@lru_cache(maxsize=1)
def load_cards() -> dict[str, ModelMeta]:
    """Every shipped card by id, validated."""
    by_id: dict[str, ModelMeta] = {}
    folder = resources.files("lookbench.models") / "cards"
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if not entry.name.endswith(".json"):
            continue
        meta = parse_card(entry.read_text(encoding="utf-8"), entry.name)
        key = meta.id or ""  # parse_card refused a card without one
        if key in by_id:
            raise LookBenchError(f"duplicate model card id {key!r}")
        by_id[key] = meta
    return by_id


def card_for_spec(spec: str) -> ModelMeta | None:
    """The card whose runnable spec is exactly `spec`."""
    return next((meta for meta in load_cards().values() if meta.spec == spec), None)


def find_card(name: str) -> ModelMeta | None:
    """The card whose id, name or alias matches `name` (case-insensitive)."""
    wanted = name.strip().lower()
    for meta in load_cards().values():
        if wanted in {meta.id, (meta.name or "").lower(), *(a.lower() for a in meta.aliases)}:
            return meta
    return None
