"""The fetcher: per-host rate limit, refused hosts, schemes and redirects, size and type limits, WARC records."""

from __future__ import annotations

import pytest
from releasekit import PNG_ROUTE, Shop, serve
from warcio.archiveiterator import ArchiveIterator

from lookbench.release.sources.shop.fetch import Fetcher, FetchError
from lookbench.release.sources.shop.warc import WarcLog


def test_rate_limit_spaces_requests_per_host():
    shop = Shop(routes={"/a": PNG_ROUTE})
    with serve(shop):
        fetcher = Fetcher([shop.host], "ua", rate_limit_s=0.15, timeout_s=3)
        for _ in range(3):
            fetcher.get(shop.url("/a"), 10_000)
        fetcher.close()
    sent = [t for _, t in fetcher.requests]
    assert len(sent) == 3 and min(b - a for a, b in zip(sent, sent[1:], strict=False)) >= 0.149
    arrived = [t for _, t, _ in shop.requests]
    assert len(arrived) == 3 and arrived[2] - arrived[0] >= 0.28


def test_refusals_and_limits(tmp_path):
    shop = Shop(
        routes={
            "/a": PNG_ROUTE,
            "/away": (301, {"Location": "http://example.invalid/x"}, b""),
            "/inside": (302, {"Location": "/a"}, b""),
            "/page": (200, {"Content-Type": "text/html"}, b"<html></html>"),
        }
    )
    with serve(shop):
        fetcher = Fetcher([shop.host], "ua", rate_limit_s=0, timeout_s=3, warc=WarcLog(tmp_path / "p.warc.gz"))
        with pytest.raises(FetchError, match="not one of the configured hosts"):
            fetcher.get("http://example.invalid/", 100)
        with pytest.raises(FetchError, match="only http"):
            fetcher.get("file:///etc/passwd", 100)
        with pytest.raises(FetchError, match="redirected from"):
            fetcher.get(shop.url("/away"), 100)
        assert fetcher.get(shop.url("/inside"), 10_000).url == shop.url("/a")
        with pytest.raises(FetchError, match="exceeds the limit"):
            fetcher.get(shop.url("/a"), 10)
        with pytest.raises(FetchError, match="content type"):
            fetcher.get(shop.url("/page"), 10_000, accept=("image/",))
        with pytest.raises(FetchError, match="HTTP 404"):
            fetcher.get(shop.url("/missing"), 100)
        fetcher.archive(fetcher.get(shop.url("/page"), 10_000))
        fetcher.close()
    assert "example.invalid" not in "".join(shop.paths())
    with (tmp_path / "p.warc.gz").open("rb") as fh:
        records = [
            (r.rec_type, r.rec_headers.get_header("WARC-Target-URI"), r.content_stream().read())
            for r in ArchiveIterator(fh)
        ]
    assert records == [("response", shop.url("/page"), b"<html></html>")]
