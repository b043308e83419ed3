"""The Annotator Protocol, its item and outcome types, and validation of answers against the taxonomy."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from lookbench.taxonomy import Taxonomy


@dataclass(frozen=True)
class Item:
    """One crop to label: its id, encoded bytes, sha256 and category."""

    key: str
    image: bytes
    image_sha256: str
    category: str


@dataclass(frozen=True)
class Outcome:
    """Labels for an item, or the reason it was flagged (then `main_attribute` is None)."""

    main_attribute: str | None
    other_attributes: list[str] = field(default_factory=list)
    flag: str | None = None
    attempts: int = 0
    cached: bool = False

    def to_json(self) -> dict[str, Any]:
        """The cacheable form."""
        return {"main_attribute": self.main_attribute, "other_attributes": self.other_attributes, "flag": self.flag}


class Annotator(Protocol):
    """Labels crops with `{main_attribute, other_attributes}` from their category's vocabulary."""

    name: str

    def annotate(self, items: list[Item]) -> list[Outcome]:
        """One outcome per item, in order."""
        ...

    def describe(self) -> dict[str, Any]:
        """What labelled the rows (backend, model, prompt version, usage) for the log and the card."""
        ...


class InvalidAnswer(ValueError):
    """An answer outside the category's vocabulary or inconsistent with itself."""


def check_labels(taxonomy: Taxonomy, category: str, main: object, others: object) -> tuple[str, list[str]]:
    """Enum membership, no duplicates, main not repeated in others; returns the labels or raises InvalidAnswer."""
    allowed = set(taxonomy.category(category).attribute_names())
    if not isinstance(main, str) or main not in allowed:
        raise InvalidAnswer(f"main_attribute {main!r} is not in the {category} vocabulary")
    if not isinstance(others, list) or not all(isinstance(v, str) for v in others):
        raise InvalidAnswer("other_attributes must be a list of strings")
    outside = sorted(set(others) - allowed)
    if outside:
        raise InvalidAnswer(f"{outside} are not in the {category} vocabulary")
    if len(set(others)) != len(others):
        raise InvalidAnswer("other_attributes repeats a value")
    if main in others:
        raise InvalidAnswer(f"main_attribute {main!r} is repeated in other_attributes")
    return main, list(others)


def labels_from_answer(taxonomy: Taxonomy, category: str, answer: object) -> tuple[str, list[str]]:
    """Labels from an answer shaped by `category_json_schema` (one key per group plus main_attribute)."""
    if not isinstance(answer, dict):
        raise InvalidAnswer("the answer is not a JSON object")
    if answer.get("category", category) != category:
        raise InvalidAnswer(f"answer is for category {answer.get('category')!r}, not {category!r}")
    groups = taxonomy.category(category).attributes
    chosen: list[str] = []
    for group, values in groups.items():
        if group not in answer:
            raise InvalidAnswer(f"group {group!r} is missing")
        value = answer[group]
        picked = value if isinstance(value, list) else ([] if value is None else [value])
        if len(set(map(str, picked))) != len(picked):
            raise InvalidAnswer(f"group {group!r} repeats a value")
        bad = [v for v in picked if v not in values]
        if bad:
            raise InvalidAnswer(f"{bad} not allowed in group {group!r} for {category}")
        if isinstance(value, list) != taxonomy.groups[group].multi and value is not None:
            raise InvalidAnswer(f"group {group!r} has the wrong shape")
        chosen.extend(picked)
    main = answer.get("main_attribute")
    if main not in chosen:
        raise InvalidAnswer(f"main_attribute {main!r} is not one of the chosen values")
    return check_labels(taxonomy, category, main, [v for v in chosen if v != main])
