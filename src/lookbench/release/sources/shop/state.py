"""Cross-release crawl state: when each page was fetched and the sitemap `lastmod` it had then."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from datetime import datetime
from pathlib import Path

from lookbench._util.atomic import write_text_atomic
from lookbench._util.dates import optional_datetime
from lookbench._util.jsontext import loads
from lookbench.errors import ReleaseError


@dataclass
class PageRecord:
    """One fetched page."""

    release: str
    fetched_at: str
    lastmod: str | None


class CrawlState:
    """`pages.json` under the source's state folder; earlier releases' records drive incremental crawls."""

    def __init__(self, folder: Path, release: str) -> None:
        self.path = folder / "pages.json"
        self.release = release
        try:
            raw = loads(self.path.read_text(encoding="utf-8")) if self.path.is_file() else {}
            self.pages: dict[str, PageRecord] = {url: PageRecord(**rec) for url, rec in raw.items()}
        except (OSError, ValueError, TypeError, AttributeError) as exc:
            raise ReleaseError(f"{self.path}: crawl state is unreadable ({exc}); delete it to crawl afresh") from exc

    def previous(self, url: str) -> PageRecord | None:
        """The record from an earlier release (a re-run of this release does not count)."""
        record = self.pages.get(url)
        return record if record is not None and record.release < self.release else None

    def unchanged(self, url: str, lastmod: datetime | None) -> bool:
        """True if the page was fetched in an earlier release and its lastmod has not moved since."""
        record = self.previous(url)
        if record is None or lastmod is None:
            return False
        try:
            seen = optional_datetime(record.lastmod) or optional_datetime(record.fetched_at)
        except ValueError:
            return False
        return seen is not None and lastmod <= seen

    def record(self, url: str, fetched_at: datetime, lastmod: datetime | None) -> None:
        """Note a fetch in this release."""
        self.pages[url] = PageRecord(self.release, fetched_at.isoformat(), lastmod.isoformat() if lastmod else None)

    def save(self) -> None:
        """Write the state atomically."""
        data = {url: asdict(rec) for url, rec in sorted(self.pages.items())}
        write_text_atomic(self.path, json.dumps(data, indent=1) + "\n")
