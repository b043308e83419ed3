"""Reading, validating and writing LookBench snapshots."""

from lookbench.snapshot.reader import Snapshot, open_snapshot
from lookbench.snapshot.schema import NOISE, SUBSETS, SplitName

__all__ = ["NOISE", "SUBSETS", "Snapshot", "SplitName", "open_snapshot"]
