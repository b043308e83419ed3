"""Sitemap parsing (urlset and sitemapindex, plain or gzip), streamed with a cap on the decompressed size."""

from __future__ import annotations

import xml.etree.ElementTree as ET
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, cast

from lookbench._util.dates import optional_datetime

_READ = 1 << 16
_INFLATE = 1 << 20
_REFUSED = (b"<!DOCTYPE", b"<!ENTITY")


@dataclass(frozen=True)
class SitemapEntry:
    """One `<url>` or `<sitemap>` element."""

    loc: str
    lastmod: datetime | None


@dataclass
class Sitemap:
    """What one sitemap file lists, and what in it could not be used."""

    pages: list[SitemapEntry] = field(default_factory=list)
    children: list[SitemapEntry] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    more_pages: bool = False
    """Reading stopped at the caller's page limit; the file lists more pages."""


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def inflated(data: bytes, max_bytes: int) -> Iterator[bytes]:
    """The bytes of a (gzip) sitemap in chunks; ValueError once more than `max_bytes` come out."""
    if data[:2] != b"\x1f\x8b":
        if len(data) > max_bytes:
            raise ValueError(f"sitemap exceeds {max_bytes} bytes")
        yield data
        return
    inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
    total = 0
    try:
        for start in range(0, len(data), _READ):
            pending = data[start : start + _READ]
            while pending:
                out = inflater.decompress(pending, _INFLATE)
                pending = inflater.unconsumed_tail
                total += len(out)
                if total > max_bytes:
                    raise ValueError(f"decompressed sitemap exceeds the limit of {max_bytes} bytes")
                if out:
                    yield out
                if inflater.eof:
                    return
    except zlib.error as exc:
        raise ValueError(f"broken gzip sitemap ({exc})") from exc


def parse_sitemap(data: bytes, max_bytes: int, max_pages: int | None = None) -> Sitemap:
    """Pages and child sitemaps of one file; ValueError for malformed, refused or oversized XML.

    Work is linear in the file: it is fed to the parser in slices and each entry is dropped from the tree once
    read. With `max_pages`, reading stops after that many pages (`more_pages` then says the file lists more).
    """
    parser: ET.XMLPullParser = ET.XMLPullParser(events=("start", "end"))
    result = Sitemap()
    root: ET.Element | None = None
    target: list[SitemapEntry] | None = None
    tail = b""
    bad_dates = 0
    depth = 0
    try:
        for chunk in _slices(inflated(data, max_bytes)):
            window = tail + chunk
            if any(marker in window for marker in _REFUSED):
                raise ValueError("sitemap with a DOCTYPE/ENTITY declaration refused")
            tail = chunk[-16:]
            parser.feed(chunk)
            events = cast("Iterator[tuple[str, Any]]", parser.read_events())
            for event, element in events:
                if not isinstance(element, ET.Element):
                    continue
                if event == "start":
                    depth += 1
                    if root is None:
                        root = element
                        target = {"urlset": result.pages, "sitemapindex": result.children}.get(_local(element.tag))
                        if target is None:
                            raise ValueError(f"not a sitemap: root element <{_local(element.tag)}>")
                    continue
                depth -= 1
                if depth != 1 or root is None or target is None:
                    continue
                fields = {_local(child.tag): (child.text or "").strip() for child in element}
                if fields.get("loc"):
                    try:
                        lastmod = optional_datetime(fields.get("lastmod"))
                    except ValueError:
                        bad_dates += 1
                        lastmod = None
                    target.append(SitemapEntry(fields["loc"], lastmod))
                root.clear()  # every entry read so far is done with: the tree never grows with the file
                if max_pages is not None and len(result.pages) >= max_pages:
                    result.more_pages = True
                    break
            if result.more_pages:
                break
        else:
            parser.close()
    except ET.ParseError as exc:
        raise ValueError(f"malformed sitemap XML ({exc})") from exc
    if root is None:
        raise ValueError("empty sitemap")
    if bad_dates:
        result.problems.append(f"{bad_dates} lastmod value(s) are not ISO dates in range; those pages have none")
    return result


def _slices(chunks: Iterator[bytes]) -> Iterator[bytes]:
    """The chunks cut to at most `_READ` bytes, so the parser never builds a large tree in one feed."""
    for chunk in chunks:
        for start in range(0, len(chunk), _READ):
            yield chunk[start : start + _READ]
