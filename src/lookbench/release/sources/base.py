"""The Source Protocol and the context a source collects in."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Protocol

from lookbench.release.config import ReleaseConfig
from lookbench.release.sample import Sample


@dataclass
class CollectContext:
    """What a source may use while collecting: the release, its own folders and a problem log."""

    release: ReleaseConfig
    work: Path
    """This source's own work folder (raw pages, partial results)."""
    state: Path
    """This source's cross-release state folder."""
    problems: list[dict[str, Any]] = field(default_factory=list)

    def now(self) -> datetime:
        """The current UTC time, used as `first_seen_at`."""
        return datetime.now(timezone.utc)

    def report(self, url: str, message: str) -> None:
        """Record a problem with one input; the run goes on."""
        self.problems.append({"url": url, "error": message, "at": self.now().isoformat()})

    def write_problems(self, path: Path) -> None:
        """Write the problems as JSON lines."""
        path.write_text("".join(json.dumps(p) + "\n" for p in self.problems), encoding="utf-8")


class Source(Protocol):
    """A source yields samples; bad inputs are reported through the context, never raised."""

    name: str
    kind: str

    def collect(self, ctx: CollectContext) -> Iterator[Sample]:
        """Yield the source's samples for this release."""
        ...
