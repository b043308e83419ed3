"""The composed query columns (modification text, structured changes, explicit targets): types, reading, checks,
writing, and the changes between two attribute sets."""

from __future__ import annotations

import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from lookbench._util.labels import canonical_text, normalise_label
from lookbench.errors import SnapshotError
from lookbench.snapshot.cells import list_cell, reading
from lookbench.snapshot.labels import SplitLabels
from lookbench.snapshot.splits import SplitSource
from lookbench.snapshot.writer import rows_to_table
from lookbench.taxonomy import Taxonomy, TaxonomyError
from lookbench.taxonomy.loader import load_taxonomy

CHANGE_TYPE = pa.struct([pa.field("group", pa.string()), pa.field("from", pa.string()), pa.field("to", pa.string())])
COMPOSED_COLUMNS: dict[str, pa.DataType] = {
    "modification_text": pa.string(),
    "changes": pa.list_(CHANGE_TYPE),
    "target_ids": pa.list_(pa.string()),
}
"""Columns of a composed query split besides the required five (which describe the reference item)."""

MAX_CHANGES = 2
MAX_TEXT_CHARS = 4096
QUERY_SPLITS: tuple[str, ...] = ("query", "validation")


@dataclass(frozen=True)
class Change:
    """One structured change: in `group`, the reference's `source` value becomes `target`.

    An empty `source` adds `target` (a multi-valued group such as details); an empty `target` removes `source`.
    """

    group: str
    source: str
    target: str

    def as_row(self) -> dict[str, str | None]:
        """The parquet struct value (`from`/`to` null where empty)."""
        return {"group": self.group, "from": self.source or None, "to": self.target or None}


@dataclass(frozen=True)
class ComposedQueries:
    """The queries of one composed split, in row order: the reference items' labels plus what to change."""

    labels: SplitLabels
    texts: list[str]
    changes: list[tuple[Change, ...]]
    target_ids: list[tuple[str, ...]]

    def __len__(self) -> int:
        return len(self.texts)

    def take(self, rows: np.ndarray) -> ComposedQueries:
        """The given rows, in that order."""
        idx = [int(r) for r in rows]
        return ComposedQueries(
            labels=self.labels.take(rows),
            texts=[self.texts[i] for i in idx],
            changes=[self.changes[i] for i in idx],
            target_ids=[self.target_ids[i] for i in idx],
        )


def _change(path: Path, row: int, value: Any) -> Change:
    where = f"{path}: row {row}: changes"
    if not isinstance(value, dict):
        raise SnapshotError(f"{where}: each change must be an object {{group, from, to}}, got {type(value).__name__}")
    unknown = sorted(set(value) - {"group", "from", "to"})
    if unknown:
        raise SnapshotError(f"{where}: unknown field(s) {', '.join(map(repr, unknown))}; expected group, from, to")
    group = normalise_label(value.get("group"))
    source = normalise_label(value.get("from"))
    target = normalise_label(value.get("to"))
    if not group:
        raise SnapshotError(f"{where}: a change has an empty group")
    if not source and not target:
        raise SnapshotError(f"{where}: a change in group {group!r} has neither a from nor a to value")
    if source == target:
        raise SnapshotError(f"{where}: a change in group {group!r} has from = to = {source!r}")
    return Change(group, source, target)


def _checked_changes(path: Path, row: int, changes: tuple[Change, ...], reference: frozenset[str]) -> None:
    where = f"{path}: row {row}: changes"
    if len(changes) > MAX_CHANGES:
        raise SnapshotError(f"{where}: {len(changes)} changes; a composed query has one or two")
    values = [v for c in changes for v in (c.source, c.target) if v]
    if len(values) != len(set(values)):
        raise SnapshotError(f"{where}: a value appears in more than one change ({', '.join(values)})")
    for change in changes:
        if change.source and change.source not in reference:
            raise SnapshotError(
                f"{where}: from value {change.source!r} is not an attribute of the reference item "
                f"({', '.join(sorted(reference)) or 'none'})"
            )
        if change.target and change.target in reference:
            raise SnapshotError(f"{where}: to value {change.target!r} is already an attribute of the reference item")
    groups = load_taxonomy().groups
    for change in changes:
        if change.group not in groups:
            raise SnapshotError(f"{where}: unknown group {change.group!r}; the taxonomy's: {', '.join(groups)}")
        for side, value in (("from", change.source), ("to", change.target)):
            if value and value not in groups[change.group].attributes:
                raise SnapshotError(f"{where}: {side} value {value!r} is not in the taxonomy's group {change.group!r}")


def _text(path: Path, row: int, value: object) -> str:
    """The modification text exactly as given (no trimming: a protocol's text reaches the text tower unchanged)."""
    if isinstance(value, bytes):
        try:
            value = value.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise SnapshotError(
                f"{path}: row {row}: modification_text is not UTF-8 (byte 0x{value[exc.start]:02x} at {exc.start})"
            ) from exc
    if value is not None and not isinstance(value, str):
        raise SnapshotError(f"{path}: row {row}: modification_text must be text, got {type(value).__name__}")
    if value is None or not value.strip():
        raise SnapshotError(f"{path}: row {row}: modification_text is empty")
    return value


def _read_file(
    path: Path, start: int, labels: SplitLabels
) -> tuple[list[str], list[tuple[Change, ...]], list[tuple[str, ...]]]:
    with reading(path):
        names = pq.read_schema(path).names
        if "modification_text" not in names:
            raise SnapshotError(f"{path}: missing column modification_text (a composed query split needs it)")
        table = pq.read_table(path, columns=[c for c in COMPOSED_COLUMNS if c in names])
        values = {c: table[c].to_pylist() if c in names else [None] * table.num_rows for c in COMPOSED_COLUMNS}
    texts: list[str] = []
    changes: list[tuple[Change, ...]] = []
    targets: list[tuple[str, ...]] = []
    for row in range(table.num_rows):
        text = _text(path, row, values["modification_text"][row])
        if len(text) > MAX_TEXT_CHARS:
            raise SnapshotError(
                f"{path}: row {row}: modification_text is {len(text):,} characters (at most {MAX_TEXT_CHARS:,})"
            )
        row_changes = tuple(_change(path, row, v) for v in list_cell(path, row, "changes", values["changes"][row]))
        _checked_changes(path, row, row_changes, labels.attribute_set(start + row))
        ids: dict[str, None] = {}
        for value in list_cell(path, row, "target_ids", values["target_ids"][row]):
            item = canonical_text(value)
            if item is not None:
                ids.setdefault(item, None)
        reference = labels.item_id[start + row]
        if reference in ids:
            raise SnapshotError(
                f"{path}: row {row}: target_ids holds the reference item {reference!r}, "
                "which is excluded from the ranking"
            )
        if not row_changes and not ids:
            raise SnapshotError(f"{path}: row {row}: a composed query needs changes, target_ids or both")
        texts.append(text)
        changes.append(row_changes)
        targets.append(tuple(ids))
    return texts, changes, targets


def read_composed_queries(snapshot: SplitSource, subset: str, split: str = "query") -> ComposedQueries:
    """Read and check the composed columns of a query split; errors name the file, row and field."""
    if split not in QUERY_SPLITS:
        raise SnapshotError(f"{subset}: composed queries live in the query or validation split, not {split!r}")
    labels = snapshot.labels(subset, split)
    texts: list[str] = []
    changes: list[tuple[Change, ...]] = []
    targets: list[tuple[str, ...]] = []
    for path in snapshot.files(subset, split):
        t, c, g = _read_file(path, len(texts), labels)
        texts += t
        changes += c
        targets += g
    return ComposedQueries(labels=labels, texts=texts, changes=changes, target_ids=targets)


def check_composed(snapshot: SplitSource, subset: str) -> list[str]:
    """Read every composed query split of a subset (raising on unscorable rows); return warnings."""
    gallery = set(snapshot.labels(subset, "gallery").item_id)
    warnings = []
    for split in QUERY_SPLITS:
        if split == "validation" and not snapshot.has_split(subset, split):
            continue
        queries = read_composed_queries(snapshot, subset, split)
        absent = sum(1 for ids in queries.target_ids if ids and not any(i in gallery for i in ids))
        if absent:
            warnings.append(
                f"{subset}/{split}: {absent} of {len(queries)} queries name target_ids none of which is in the "
                "gallery; unless the label rule finds items for them they score 0"
            )
    return warnings


def has_changes(snapshot: SplitSource, subsets: Sequence[str]) -> bool:
    """True if some query or validation row of the given composed subsets carries structured changes."""
    for subset in subsets:
        for split in QUERY_SPLITS:
            if snapshot.has_split(subset, split) and any(read_composed_queries(snapshot, subset, split).changes):
                return True
    return False


def changes_between(
    reference: frozenset[str], target: frozenset[str], taxonomy: Taxonomy | None = None
) -> tuple[Change, ...] | None:
    """The changes that turn the reference's attributes into the target's, one per group (one per value added or
    removed in a multi-valued group), in taxonomy order; None if a differing value is not in the taxonomy."""
    tax = taxonomy or load_taxonomy()
    order = list(tax.groups)
    by_group: dict[str, tuple[set[str], set[str]]] = {}
    for value in reference ^ target:
        try:
            group = tax.group_of(value)
        except TaxonomyError:
            return None
        ref, tgt = by_group.setdefault(group, (set(), set()))
        (ref if value in reference else tgt).add(value)
    changes: list[Change] = []
    for group in sorted(by_group, key=order.index):
        removed, added = by_group[group]
        if tax.groups[group].multi:
            changes += [Change(group, v, "") for v in sorted(removed)] + [Change(group, "", v) for v in sorted(added)]
        elif len(removed) <= 1 and len(added) <= 1:
            changes.append(Change(group, next(iter(removed), ""), next(iter(added), "")))
        else:
            return None
    return tuple(changes)


def composed_table(rows: Sequence[Mapping[str, Any]]) -> pa.Table:
    """A composed query split: the rows' snapshot columns plus `modification_text`, `changes` (list of Change or
    {group, from, to}) and `target_ids`, typed as the composed schema says."""
    base = [{k: v for k, v in row.items() if k not in COMPOSED_COLUMNS} for row in rows]
    table = rows_to_table(base)
    for name, dtype in COMPOSED_COLUMNS.items():
        values = [row.get(name) for row in rows]
        if name == "changes":
            values = [[c.as_row() if isinstance(c, Change) else c for c in v or ()] for v in values]
        table = table.append_column(pa.field(name, dtype), pa.array(values, type=dtype))
    return table


def in_validation(product: str, fraction: float, seed: int) -> bool:
    """Whether a product's queries are held out for tuning: a seeded hash of its id below `fraction`."""
    return zlib.crc32(f"{seed}\0{product}".encode()) / 2**32 < fraction
