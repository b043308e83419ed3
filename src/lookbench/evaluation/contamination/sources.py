"""Which sources a run's samples came from, read from the snapshot when it is on local disk."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq

from lookbench.errors import LookBenchError
from lookbench.snapshot.reader import Snapshot, open_snapshot


def local_snapshot(location: str) -> Snapshot | None:
    """Open a snapshot only if it is a local folder (never downloads); None if it is not reachable."""
    if "://" in location or not Path(location).is_dir():
        return None
    try:
        return open_snapshot(location)
    except LookBenchError:
        return None


def snapshot_sources(snapshot: Snapshot | None) -> set[str]:
    """Distinct `source` values of every query split; empty without a snapshot or a source column."""
    found: set[str] = set()
    if snapshot is None:
        return found
    for subset in snapshot.subsets:
        for path in snapshot.files(subset, "query"):
            if "source" in pq.read_schema(path).names:
                found.update(str(v) for v in pq.read_table(path, columns=["source"])["source"].to_pylist() if v)
    return found
