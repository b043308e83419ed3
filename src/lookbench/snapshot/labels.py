"""Per-row labels of one split, read without the image bytes (compared in `lookbench._util.labels` canonical form)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class SplitLabels:
    """The labels the metrics need, one entry per parquet row, in row order."""

    category: list[str]
    main_attribute: list[str]
    other_attributes: list[list[str]]
    item_id: list[str]
    outfit_key: list[str | None]
    first_seen_at: np.ndarray | None = None
    """datetime64[us] (UTC) per row, NaT where unknown; None when the split has no such column."""

    def __len__(self) -> int:
        return len(self.category)

    def attribute_set(self, row: int) -> frozenset[str]:
        """A_i: the main attribute together with the other attributes (empty strings dropped)."""
        values = [self.main_attribute[row], *self.other_attributes[row]]
        return frozenset(v for v in values if v)

    def repeated_ids(self) -> dict[str, list[int]]:
        """Every item_ID held by more than one row, with its rows (several photos of one product)."""
        rows: dict[str, list[int]] = {}
        for row, item in enumerate(self.item_id):
            rows.setdefault(item, []).append(row)
        return {item: found for item, found in rows.items() if len(found) > 1}

    def take(self, rows: np.ndarray) -> SplitLabels:
        """The labels of the given rows, in that order."""
        idx = [int(r) for r in rows]
        return SplitLabels(
            category=[self.category[i] for i in idx],
            main_attribute=[self.main_attribute[i] for i in idx],
            other_attributes=[self.other_attributes[i] for i in idx],
            item_id=[self.item_id[i] for i in idx],
            outfit_key=[self.outfit_key[i] for i in idx],
            first_seen_at=None if self.first_seen_at is None else self.first_seen_at[np.asarray(idx, dtype=int)],
        )

    @staticmethod
    def concat(parts: list[SplitLabels]) -> SplitLabels:
        """Row-wise concatenation; dates become NaT where a part has none."""
        dates: np.ndarray | None = None
        if any(p.first_seen_at is not None for p in parts):
            dates = np.concatenate(
                [
                    p.first_seen_at
                    if p.first_seen_at is not None
                    else np.full(len(p), np.datetime64("NaT"), dtype="datetime64[us]")
                    for p in parts
                ]
            )
        return SplitLabels(
            category=[c for p in parts for c in p.category],
            main_attribute=[m for p in parts for m in p.main_attribute],
            other_attributes=[o for p in parts for o in p.other_attributes],
            item_id=[i for p in parts for i in p.item_id],
            outfit_key=[k for p in parts for k in p.outfit_key],
            first_seen_at=dates,
        )
