"""Shards: row ranges of one input, each with a fixed place on disk and the fingerprints its marker must match."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from lookbench._util.hashing import parts_sha256
from lookbench.errors import LookBenchError

MARKER_SUFFIX = ".done.json"


@dataclass(frozen=True)
class Shard:
    """Rows [start, stop) of one input of a job. Its marker and output live in `folder` under a name fixed by the
    range and by the input's content, so the same rows of the same content always land in the same place."""

    job: str
    start: int
    stop: int
    input_sha256: str
    """What the rows hold (e.g. their images' sha256 digests): a marker written for other content never matches."""
    job_sha256: str
    """What is done to them (model and preprocessing, endpoint and prompt): a marker of other work never matches."""
    folder: Path

    @property
    def rows(self) -> int:
        """Rows in the range."""
        return self.stop - self.start

    @property
    def name(self) -> str:
        """File name stem of its marker and output."""
        return f"{self.start:09d}-{self.stop:09d}-{self.input_sha256[:16]}"

    @property
    def marker_path(self) -> Path:
        """`<name>.done.json`, written last, by atomic rename, once the output is complete."""
        return self.folder / f"{self.name}{MARKER_SUFFIX}"

    def output_path(self, suffix: str = ".parquet") -> Path:
        """Where a shard that writes a file of its own puts it."""
        return self.folder / f"{self.name}{suffix}"

    @property
    def label(self) -> str:
        """How messages name it."""
        return f"{self.job} rows {self.start}..{self.stop - 1}"


def shard_ranges(total: int, shards: int | None, rows_per_shard: int, align: int = 1) -> list[tuple[int, int]]:
    """Cut `total` rows into `shards` ranges (None: ranges of `rows_per_shard` rows).

    Every range but the last holds a multiple of `align` rows (the batch size: batches never straddle shards, so a
    row is embedded in the same batch whatever runs the shard), so there may be fewer ranges than asked for.
    """
    if shards is not None and shards < 1:
        raise LookBenchError(f"--shards: expected a positive number of shards, got {shards}")
    if rows_per_shard < 1 or align < 1:
        raise ValueError(f"rows_per_shard {rows_per_shard} and align {align} must be positive")
    if total <= 0:
        return []
    size = math.ceil(total / shards) if shards is not None else rows_per_shard
    size = math.ceil(size / align) * align
    return [(start, min(start + size, total)) for start in range(0, total, size)]


def digest_fingerprint(digests: Iterable[bytes | None]) -> str:
    """sha256 over per-row content digests (None for a row without content), in row order."""
    return parts_sha256(*("-" if d is None else d.hex() for d in digests))


def text_fingerprint(keys: Iterable[str]) -> str:
    """sha256 over per-item keys (text), in order."""
    return parts_sha256(*keys)
