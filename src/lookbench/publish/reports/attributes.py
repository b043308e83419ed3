"""Query main attributes from the snapshot, when it is reachable, for the per-attribute breakdown."""

from __future__ import annotations

from lookbench.snapshot.reader import Snapshot


def main_attributes(snapshot: Snapshot | None, subsets: set[str]) -> dict[tuple[str, int], str] | None:
    """{(subset, query row): main attribute}; None when the snapshot is not available."""
    if snapshot is None:
        return None
    out: dict[tuple[str, int], str] = {}
    for subset in snapshot.subsets:
        if subset in subsets:
            for row, value in enumerate(snapshot.labels(subset, "query").main_attribute):
                out[(subset, row)] = value
    return out
