"""`DATASET.json`: the machine-readable dataset card of a snapshot that is not a LookBench release.

A snapshot imported from another benchmark names its own subsets, the protocol `lookbench eval` scores it by, and
its licence, citation and source. A snapshot without the file is a LookBench snapshot (the four subsets and noise).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from lookbench._util.jsontext import loads
from lookbench.errors import SnapshotError, first_problem

CARD_NAME = "DATASET.json"
CARD_FORMAT = "lookbench-dataset/1"
_SUBSET_NAME = re.compile(r"[a-z][a-z0-9_]{0,63}")
RESERVED_SUBSETS = frozenset({"noise", "overall"})


class SubsetCard(BaseModel):
    """One subset of the dataset: its display title and row counts per split."""

    model_config = ConfigDict(extra="forbid")

    title: str
    splits: dict[str, int] = Field(default_factory=dict)
    description: str = ""


class SourceFile(BaseModel):
    """A file of the distribution the importer read, with its sha256."""

    model_config = ConfigDict(extra="forbid")

    path: str
    sha256: str
    bytes: int


class DatasetCard(BaseModel):
    """What the snapshot holds, where it came from, under which licence, and how it is scored."""

    model_config = ConfigDict(extra="forbid")

    format: str = CARD_FORMAT
    name: str
    title: str
    protocol: str | None = None
    """The named metric set `lookbench eval` applies (see `lookbench legacy list`); None: LookBench metrics only."""
    licence: str
    citation: str
    homepage: str
    source_location: str = ""
    source_files: list[SourceFile] = Field(default_factory=list)
    subsets: dict[str, SubsetCard]
    options: dict[str, str] = Field(default_factory=dict)
    notes: list[str] = Field(default_factory=list)
    importer: dict[str, str] = Field(default_factory=dict)

    @field_validator("subsets")
    @classmethod
    def _names(cls, value: dict[str, SubsetCard]) -> dict[str, SubsetCard]:
        for name in value:
            if not _SUBSET_NAME.fullmatch(name) or name in RESERVED_SUBSETS:
                raise ValueError(f"subset name {name!r} must be lowercase letters, digits and '_' (not noise/overall)")
        return value


def read_card(root: Path) -> DatasetCard | None:
    """The card of a snapshot folder, or None when it has none; a malformed card is an error naming the field."""
    path = root / CARD_NAME
    if not path.is_file():
        return None
    try:
        data = loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise SnapshotError(f"{path}: unreadable dataset card ({exc})") from exc
    except json.JSONDecodeError as exc:
        raise SnapshotError(f"{path}: line {exc.lineno}: not valid JSON ({exc.msg})") from exc
    if not isinstance(data, dict) or data.get("format") != CARD_FORMAT:
        raise SnapshotError(f"{path}: not a lookbench dataset card (format must be {CARD_FORMAT!r})")
    try:
        return DatasetCard.model_validate(data)
    except ValidationError as exc:
        raise SnapshotError(f"{path}: field {first_problem(exc)}") from exc


def card_json(card: DatasetCard) -> str:
    """The card as written to `DATASET.json`."""
    return card.model_dump_json(indent=2) + "\n"
