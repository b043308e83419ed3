"""Named sets of queries: the overlap report's per-query classes (`overlap_queries.json`) or a plain list of query
ids, read to restrict a paired comparison to some queries or to leave some out.

A query id is `SUBSET/ROW`: the subset and the query's row in that subset's query split, as the per-query result
files key them (`subset`, `query_row`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from lookbench._util.atomic import write_text_atomic
from lookbench._util.jsontext import loads
from lookbench.errors import ResultError, first_problem
from lookbench.taxonomy.designs import LABEL_CLASSES

NEAR_DUPLICATE_PIXELS = "near_duplicate_pixels"
OVERLAP_CLASSES = (*LABEL_CLASSES, NEAR_DUPLICATE_PIXELS)
"""Every class of `overlap_queries.json`, in report order."""
OVERLAP_QUERIES_FORMAT: Literal["lookbench-overlap-queries/1"] = "lookbench-overlap-queries/1"
OVERLAP_QUERIES_FILE = "overlap_queries.json"
"""Written beside the guard's `guard.json`."""

OverlapClass = Literal["identical", "same_design_other_colour", "strict_fine_match", "near_duplicate_pixels"]
QueryKey = tuple[str, int]
"""(subset, query row)."""

_STRICT = ConfigDict(extra="forbid", strict=True)


class QueryRef(BaseModel):
    """One query of an evaluation snapshot."""

    model_config = _STRICT
    subset: str = Field(min_length=1)
    row: int = Field(ge=0)
    item_id: str

    @property
    def key(self) -> QueryKey:
        """(subset, row), the per-query table's key."""
        return self.subset, self.row


class SnapshotQueries(BaseModel):
    """Of one evaluation snapshot's labelled queries, those the training set reaches, by class (a query can be in
    several)."""

    model_config = _STRICT
    snapshot: str
    content_hash: str
    queries: int = Field(ge=0)
    """Labelled queries compared (the label classes' denominator)."""
    labels_compared: bool
    """False when either side has no labels (then the label classes are empty by construction)."""
    classes: dict[OverlapClass, list[QueryRef]]


class OverlapQueries(BaseModel):
    """`overlap_queries.json`: per evaluation snapshot, the queries in each overlap class."""

    model_config = _STRICT
    format: Literal["lookbench-overlap-queries/1"] = OVERLAP_QUERIES_FORMAT
    training: list[str]
    """The training sources (snapshot locations) measured."""
    snapshots: list[SnapshotQueries]

    def save(self, path: Path) -> None:
        """Write atomically as indented JSON."""
        write_text_atomic(path, self.model_dump_json(indent=2) + "\n")

    def for_snapshot(self, content_hash: str, path: Path) -> SnapshotQueries:
        """The entry of the snapshot with this content hash."""
        for entry in self.snapshots:
            if entry.content_hash == content_hash:
                return entry
        held = ", ".join(f"{e.snapshot} ({e.content_hash[:12]})" for e in self.snapshots) or "none"
        raise ResultError(f"{path}: no overlap report for snapshot content {content_hash[:12]} (it holds {held})")


def parse_query_id(text: str, where: str) -> QueryKey:
    """`SUBSET/ROW` as (subset, row)."""
    subset, _, row = text.strip().rpartition("/")
    if not subset or not row.isdigit():
        raise ResultError(f"{where}: {text.strip()!r} is not a query id (SUBSET/ROW, e.g. real_studio_flat/12)")
    return subset, int(row)


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise ResultError(f"query file not found: {path}") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise ResultError(f"{path}: cannot read the query file ({exc})") from exc


def _overlap_queries(path: Path, data: object) -> OverlapQueries:
    try:
        return OverlapQueries.model_validate(data)
    except ValidationError as exc:
        raise ResultError(f"{path}: not an {OVERLAP_QUERIES_FILE} file: field {first_problem(exc)}") from exc


def read_query_set(path: Path, classes: list[str], content_hash: str) -> set[QueryKey]:
    """The queries a file names: the union of `classes` (all when empty) of an `overlap_queries.json` for the
    snapshot with `content_hash`, or a plain list of query ids (one per line; blank lines and `#` comments
    ignored; `classes` must then be empty)."""
    unknown = [c for c in classes if c not in OVERLAP_CLASSES]
    if unknown:
        raise ResultError(f"--overlap-class {unknown[0]!r}: choose from {', '.join(OVERLAP_CLASSES)}")
    text = _read_text(path)
    if text.lstrip().startswith(("{", "[")):
        try:
            data = loads(text)
        except json.JSONDecodeError as exc:
            raise ResultError(f"{path}: not valid JSON ({exc})") from exc
        entry = _overlap_queries(path, data).for_snapshot(content_hash, path)
        if not entry.labels_compared and set(classes or OVERLAP_CLASSES) - {NEAR_DUPLICATE_PIXELS}:
            raise ResultError(f"{path}: {entry.snapshot} had no labels to compare; only {NEAR_DUPLICATE_PIXELS} holds")
        held = {str(name): refs for name, refs in entry.classes.items()}
        return {ref.key for name in classes or OVERLAP_CLASSES for ref in held.get(name, [])}
    if classes:
        raise ResultError(f"{path}: --overlap-class needs an {OVERLAP_QUERIES_FILE} file, not a list of query ids")
    found: set[QueryKey] = set()
    for number, line in enumerate(text.splitlines(), 1):
        content = line.split("#", 1)[0].strip()
        if content:
            found.add(parse_query_id(content, f"{path} line {number}"))
    return found


class QuerySelection(BaseModel):
    """Which paired queries a comparison keeps: those `only` names (all when None), less those `exclude` names."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    only: Path | None = None
    exclude: Path | None = None
    classes: tuple[str, ...] = ()
    """Overlap classes read from an `overlap_queries.json` (all when empty)."""

    def describe(self) -> str:
        """One line for the console."""
        named = f" ({', '.join(self.classes)})" if self.classes else ""
        parts = [f"only {self.only}{named}"] if self.only else []
        parts += [f"excluding {self.exclude}{named}"] if self.exclude else []
        return "; ".join(parts) or "all paired queries"

    def keep(self, keys: list[QueryKey], content_hash: str) -> list[bool]:
        """For each paired query, whether the selection keeps it; a named query that is not among `keys` is an
        error (a list for another snapshot or a typo), and so is keeping none."""
        known = set(keys)
        named: dict[Path, set[QueryKey]] = {}
        for path in (self.only, self.exclude):
            if path is not None:
                named[path] = read_query_set(path, list(self.classes), content_hash)
                if named[path] - known:
                    first = sorted(named[path] - known)[0]
                    raise ResultError(
                        f"{path}: {len(named[path] - known)} query id(s) are not among the {len(known)} paired "
                        f"queries, e.g. {first[0]}/{first[1]}"
                    )
        only = named[self.only] if self.only is not None else known
        exclude = named[self.exclude] if self.exclude is not None else set()
        kept = [key in only and key not in exclude for key in keys]
        if not any(kept):
            raise ResultError(f"no query remains after {self.describe()}: a paired test needs at least one")
        return kept
