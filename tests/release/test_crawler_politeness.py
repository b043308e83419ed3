"""The shop crawler against hostile or demanding servers: RFC 9309 robots, redirects, noindex, deadlines, sitemaps."""

from __future__ import annotations

import gc
import time
import tracemalloc
import zlib
from pathlib import Path
from typing import Any

import pytest
from releasekit import (
    HTML,
    PNG,
    Shop,
    add_product,
    collect_problems,
    encode,
    photo,
    product_page,
    published_rows,
    run_build,
    serve,
    serve_good_products,
    shop_source,
    sitemap,
    write_yaml,
)

VERSION = "v20260601"


@pytest.fixture
def shop():
    with serve(Shop()) as running:
        yield running


def _build(tmp_path: Path, shop: Shop, pages: dict[str, str | None], robots: str = "", **source: Any):
    shop.routes["/robots.txt"] = (200, {"Content-Type": "text/plain"}, robots.encode())
    shop.routes["/sitemap.xml"] = (200, {"Content-Type": "application/xml"}, sitemap(shop, pages))
    config = write_yaml(
        tmp_path / "release.yaml",
        {"release_date": "2026-06-01", "output": "out", "sources": [shop_source(shop, **source)]},
    )
    return run_build(config)


def _products(tmp_path: Path) -> set[str]:
    return {r["product_id"] for r in published_rows(tmp_path / "out" / VERSION)}


def test_robots_longest_match_and_wildcards(tmp_path, shop):
    pages: dict[str, str | None] = {}
    serve_good_products(shop, pages)
    for path, sku in (("/hidden/p", "H1"), ("/p/secret-sale", "S1")):
        add_product(shop, path, sku, "Shirts", "Blue", {f"/img/{sku}a.png": encode(photo(1)), f"/img/{sku}b.png": b""})
        pages[path] = "2026-05-01"
    robots = "User-agent: *\nAllow: /\nDisallow: /hidden/\nDisallow: /*secret\n"
    result = _build(tmp_path, shop, pages, robots)
    assert result.exit_code == 0, result.output
    assert "/hidden/p" not in shop.paths() and "/p/secret-sale" not in shop.paths()
    problems = collect_problems(tmp_path / "out", VERSION, "testshop")
    assert "robots.txt" in problems[shop.url("/hidden/p")] and "robots.txt" in problems[shop.url("/p/secret-sale")]
    assert _products(tmp_path) == {"G0", "G1"}


def test_a_redirect_into_a_disallowed_path_is_not_followed(tmp_path, shop):
    pages: dict[str, str | None] = {}
    serve_good_products(shop, pages)
    add_product(shop, "/p/r", "R1", "Shirts", "Blue", {"/img/r1.png": encode(photo(3)), "/img/r2.png": b""})
    shop.routes["/img/r2.png"] = (302, {"Location": "/private/r2.png"}, b"")
    shop.routes["/private/r2.png"] = (200, PNG, encode(photo(4)))
    pages["/p/r"] = "2026-05-01"
    result = _build(tmp_path, shop, pages, "User-agent: *\nDisallow: /private/\n")
    assert result.exit_code == 0, result.output
    assert "/private/r2.png" not in shop.paths()
    problems = collect_problems(tmp_path / "out", VERSION, "testshop")
    assert "robots.txt" in problems[shop.url("/private/r2.png")]


def test_noindex_and_noimageindex_are_honoured(tmp_path, shop):
    pages: dict[str, str | None] = {}
    serve_good_products(shop, pages)
    images = {"/img/n1.png": encode(photo(5)), "/img/n2.png": encode(photo(6))}
    add_product(shop, "/p/header", "N1", "Shirts", "Blue", images)
    status, headers, body = shop.routes["/p/header"]  # type: ignore[misc]
    shop.routes["/p/header"] = (status, {**headers, "X-Robots-Tag": "noindex, nofollow"}, body)
    page = product_page("N2", "Meta", "Shirts", "Blue", ["/img/n3.png", "/img/n4.png"], "2026-05-01")
    shop.routes["/p/meta"] = (200, HTML, page.replace(b"<head>", b'<head><meta name="robots" content="noimageindex">'))
    shop.routes["/img/n3.png"] = (200, PNG, encode(photo(7)))
    shop.routes["/img/n4.png"] = (200, PNG, encode(photo(8)))
    add_product(shop, "/p/image-header", "N3", "Shirts", "Blue", {"/img/n5.png": b"", "/img/n6.png": b""})
    shop.routes["/img/n5.png"] = (200, {**PNG, "X-Robots-Tag": "lookbench-test: noimageindex"}, encode(photo(9)))
    shop.routes["/img/n6.png"] = (200, {**PNG, "X-Robots-Tag": "otherbot: noindex"}, encode(photo(10)))
    pages.update({"/p/header": "2026-05-01", "/p/meta": "2026-05-01", "/p/image-header": "2026-05-01"})
    result = _build(tmp_path, shop, pages)
    assert result.exit_code == 0, result.output
    problems = collect_problems(tmp_path / "out", VERSION, "testshop")
    assert "noindex" in problems[shop.url("/p/header")]
    assert "noimageindex" in problems[shop.url("/p/meta")]
    assert "noimageindex" in problems[shop.url("/img/n5.png")]
    assert not {"/img/n1.png", "/img/n3.png"} & set(shop.paths())
    rows = published_rows(tmp_path / "out" / VERSION)
    assert {r["image_url"] for r in rows if r["product_id"] == "N3"} <= {shop.url("/img/n6.png")}
    assert not [r for r in rows if r["product_id"] in ("N1", "N2")]


def test_crawl_delay_is_capped_with_a_warning(tmp_path, shop):
    pages: dict[str, str | None] = {}
    serve_good_products(shop, pages)
    started = time.monotonic()
    result = _build(tmp_path, shop, pages, "User-agent: *\nCrawl-delay: 3600\n", max_crawl_delay_s=0.05)
    assert result.exit_code == 0, result.output
    assert time.monotonic() - started < 30
    problems = collect_problems(tmp_path / "out", VERSION, "testshop")
    assert any("Crawl-delay 3600" in error and "capped" in error for error in problems.values())


def test_a_page_trickling_one_byte_at_a_time_hits_the_total_deadline(tmp_path, shop):
    pages: dict[str, str | None] = {}
    serve_good_products(shop, pages)
    body = product_page("T1", "Slow", "Shirts", "Blue", ["/img/t1.png", "/img/t2.png"], "2026-05-01")

    def trickle(handler: Any) -> None:
        handler.send_response(200)
        handler.send_header("Content-Type", "text/html")
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        try:
            for byte in body[:60]:
                handler.wfile.write(bytes([byte]))
                handler.wfile.flush()
                time.sleep(0.1)
        except OSError:  # the client hung up, as it should
            return

    shop.routes["/p/slow"] = trickle
    pages["/p/slow"] = "2026-05-01"
    started = time.monotonic()
    result = _build(tmp_path, shop, pages, timeout_s=1)
    assert result.exit_code == 0, result.output
    assert time.monotonic() - started < 5.5
    problems = collect_problems(tmp_path / "out", VERSION, "testshop")
    assert "deadline" in problems[shop.url("/p/slow")]


def _gzip_of_spaces(megabytes: int) -> bytes:
    packer = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    chunk = b"<!-- " + b" " * (1 << 20) + b" -->"
    parts = [packer.compress(b'<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">')]
    parts += [packer.compress(chunk) for _ in range(megabytes)]
    return b"".join([*parts, packer.compress(b"</urlset>"), packer.flush()])


def test_a_gzip_sitemap_bomb_is_cut_without_inflating_it(tmp_path, shop):
    pages: dict[str, str | None] = {}
    serve_good_products(shop, pages)
    bomb = _gzip_of_spaces(200)
    assert len(bomb) < 600_000
    shop.routes["/bomb.xml.gz"] = (200, {"Content-Type": "application/gzip"}, bomb)
    shop.routes["/sitemap.xml"] = (200, {"Content-Type": "application/xml"}, sitemap(shop, pages))
    tracemalloc.start()
    try:
        result = _build(tmp_path, shop, pages, sitemaps=[shop.url("/bomb.xml.gz"), shop.url("/sitemap.xml")])
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert result.exit_code == 0, result.output
    assert peak < 120_000_000, peak
    problems = collect_problems(tmp_path / "out", VERSION, "testshop")
    assert "decompressed" in problems[shop.url("/bomb.xml.gz")]
    assert _products(tmp_path) == {"G0", "G1"}


def test_the_sitemap_count_cap_is_a_problem_when_it_cuts(tmp_path, shop):
    pages: dict[str, str | None] = {}
    serve_good_products(shop, pages)
    children = "".join(f"<sitemap><loc>{shop.url(f'/s{n}.xml')}</loc></sitemap>" for n in range(105))
    index = f'<?xml version="1.0"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{children}'
    shop.routes["/index.xml"] = (200, {"Content-Type": "application/xml"}, (index + "</sitemapindex>").encode())
    for n in range(105):
        shop.routes[f"/s{n}.xml"] = (200, {"Content-Type": "application/xml"}, sitemap(shop, pages))
    result = _build(tmp_path, shop, pages, sitemaps=[shop.url("/index.xml")])
    assert result.exit_code == 0, result.output
    problems = collect_problems(tmp_path / "out", VERSION, "testshop")
    assert any("limit of 100 sitemaps" in e for e in problems.values()), problems
    assert "/s99.xml" not in shop.paths() and "/s98.xml" in shop.paths()


def _urlset(urls: list[str]) -> bytes:
    entries = "".join(f"<url><loc>{u}</loc><lastmod>2026-05-01</lastmod></url>" for u in urls)
    return (
        f'<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{entries}</urlset>'.encode()
    )


def test_sitemap_parsing_is_linear_in_the_file() -> None:
    from lookbench.release.sources.shop.sitemap import parse_sitemap

    inputs = {n: _urlset([f"https://shop.example/p/{i}" for i in range(n)]) for n in (4_000, 16_000)}
    best = dict.fromkeys(inputs, float("inf"))
    gc.collect()
    gc.disable()  # a full collection mid-parse walks every object the suite left alive, not the parser's work
    try:
        for _ in range(7):  # alternated and timed in CPU seconds, so a busy shared machine does not skew the ratio
            for n, data in inputs.items():
                started = time.process_time()
                assert len(parse_sitemap(data, 1 << 30).pages) == n
                best[n] = min(best[n], time.process_time() - started)
    finally:
        gc.enable()
    small, large = best[4_000], best[16_000]
    assert large / small < 10, (small, large)  # 4x the entries: about 4x the time (quadratic parsing took 16-24x)


def test_a_page_limit_stops_reading_a_sitemap_early() -> None:
    from lookbench.release.sources.shop.sitemap import parse_sitemap

    data = _urlset([f"https://shop.example/p/{i}" for i in range(300_000)])
    started = time.perf_counter()
    found = parse_sitemap(data, 1 << 30, max_pages=4)
    assert time.perf_counter() - started < 2.0
    assert [p.loc for p in found.pages] == [f"https://shop.example/p/{i}" for i in range(4)] and found.more_pages
    whole = parse_sitemap(_urlset(["https://shop.example/a", "https://shop.example/b"]), 1 << 30, max_pages=4)
    assert len(whole.pages) == 2 and not whole.more_pages


def test_300000_listed_urls_with_max_pages_3_fetch_one_sitemap(tmp_path, shop):
    pages: dict[str, str | None] = {}
    serve_good_products(shop, pages)
    first = [shop.url(p) for p in pages] + [shop.url(f"/p/{i}") for i in range(50_000 - len(pages))]
    shop.routes["/s0.xml"] = (200, {"Content-Type": "application/xml"}, _urlset(first))
    for n in range(1, 6):
        urls = [shop.url(f"/p/{n}-{i}") for i in range(50_000)]
        shop.routes[f"/s{n}.xml"] = (200, {"Content-Type": "application/xml"}, _urlset(urls))
    started = time.perf_counter()
    result = _build(tmp_path, shop, pages, sitemaps=[shop.url(f"/s{n}.xml") for n in range(6)], max_pages=3)
    assert result.exit_code == 0, result.output
    assert time.perf_counter() - started < 120
    assert "/s0.xml" in shop.paths() and "/s1.xml" not in shop.paths()
    problems = collect_problems(tmp_path / "out", VERSION, "testshop")
    assert any("max_pages 3 reached" in e for e in problems.values()), problems
    assert _products(tmp_path) == {"G0", "G1"}
