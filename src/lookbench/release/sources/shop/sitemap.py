"""Sitemap parsing (urlset and sitemapindex, plain or gzip) with `lastmod` dates."""

from __future__ import annotations

import gzip
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from datetime import datetime

from lookbench.release.dates import parse_when


@dataclass(frozen=True)
class SitemapEntry:
    """One `<url>` or `<sitemap>` element."""

    loc: str
    lastmod: datetime | None


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def parse_sitemap(data: bytes) -> tuple[list[SitemapEntry], list[SitemapEntry]]:
    """Return (page entries, child sitemap entries); raise ValueError for malformed XML."""
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    if b"<!DOCTYPE" in data[:2000] or b"<!ENTITY" in data:
        raise ValueError("sitemap with a DOCTYPE/ENTITY declaration refused")
    try:
        root = ET.fromstring(data)
    except ET.ParseError as exc:
        raise ValueError(f"malformed sitemap XML ({exc})") from exc
    pages: list[SitemapEntry] = []
    children: list[SitemapEntry] = []
    target = {"urlset": pages, "sitemapindex": children}.get(_local(root.tag))
    if target is None:
        raise ValueError(f"not a sitemap: root element <{_local(root.tag)}>")
    for element in root:
        fields = {_local(child.tag): (child.text or "").strip() for child in element}
        if fields.get("loc"):
            target.append(SitemapEntry(fields["loc"], parse_when(fields.get("lastmod"))))
    return pages, children
