"""`<shard>.done.json`: what a finished shard did, written last by atomic rename; matched before a shard is skipped."""

from __future__ import annotations

import os
import socket

from pydantic import BaseModel, ConfigDict, ValidationError

from lookbench._util.atomic import write_text_atomic
from lookbench._util.jsontext import loads
from lookbench.shards.plan import Shard


class ShardMarker(BaseModel):
    """A finished shard: its range and fingerprints, what its output holds, the rows left out, and its counters."""

    model_config = ConfigDict(extra="forbid")

    job: str
    start: int
    stop: int
    input_sha256: str
    job_sha256: str
    output_rows: int
    """Rows its output holds (an embedding shard: the vectors it is answerable for)."""
    output_sha256: str | None = None
    """sha256 of its output file, for shards that write one."""
    bad: dict[int, str] = {}
    """Rows left out (an image that does not decode, a photo the detector rejected): row -> reason."""
    stats: dict[str, float] = {}
    """Counters summed over shards by the driver (requests, tokens, images embedded...)."""
    problems: list[str] = []
    """Problems met on the way that did not stop the shard (e.g. an unusable cache file, asked again)."""
    seconds: float = 0.0
    worker: str = ""

    def matches(self, shard: Shard) -> bool:
        """True if it was written for this range of this content by this work."""
        return (self.job, self.start, self.stop, self.input_sha256, self.job_sha256) == (
            shard.job,
            shard.start,
            shard.stop,
            shard.input_sha256,
            shard.job_sha256,
        )


def worker_name() -> str:
    """host:pid of the process running a shard."""
    return f"{socket.gethostname()}:{os.getpid()}"


def new_marker(shard: Shard, output_rows: int, **fields: object) -> ShardMarker:
    """A marker for `shard` (not yet written)."""
    return ShardMarker(
        job=shard.job,
        start=shard.start,
        stop=shard.stop,
        input_sha256=shard.input_sha256,
        job_sha256=shard.job_sha256,
        output_rows=output_rows,
        worker=worker_name(),
        **fields,  # type: ignore[arg-type]
    )


def write_marker(shard: Shard, marker: ShardMarker) -> ShardMarker:
    """Write the marker by atomic rename: the last thing a shard does, after its output is in place."""
    write_text_atomic(shard.marker_path, marker.model_dump_json(indent=1))
    return marker


def read_marker(shard: Shard) -> ShardMarker | None:
    """The shard's marker if it is there, readable and written for this shard; else None."""
    path = shard.marker_path
    try:
        marker = ShardMarker.model_validate(loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError, ValidationError):
        return None
    return marker if marker.matches(shard) else None
