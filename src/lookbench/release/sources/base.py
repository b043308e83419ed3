"""The Source Protocol and the context a source collects in."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Protocol

from lookbench.release.records import Problem, Sample


@dataclass
class CollectContext:
    """What a source may use while collecting: the release version, its own folders and a problem log."""

    version: str
    """The release being built (`vYYYYMMDD`)."""
    work: Path
    """This source's own work folder (raw pages, partial results)."""
    state: Path
    """This source's cross-release state folder."""
    source: str
    problems: list[Problem] = field(default_factory=list)

    def now(self) -> datetime:
        """The current UTC time, used as `first_seen_at`."""
        return datetime.now(timezone.utc)

    def report(self, url: str, message: str) -> None:
        """Record a problem with one input; the run goes on."""
        self.problems.append(Problem(self.source, url, message))


class Source(Protocol):
    """A source yields samples; bad inputs are reported through the context, never raised."""

    name: str
    kind: str

    def collect(self, ctx: CollectContext) -> Iterator[Sample]:
        """Yield the source's samples for this release."""
        ...

    def counts(self) -> dict[str, int]:
        """What the source did (requests, pages, images...), for the build log."""
        ...
