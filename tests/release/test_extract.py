"""Product extraction from JSON-LD and OpenGraph, sitemap parsing and label mapping."""

from __future__ import annotations

import gzip
import json

import pytest

from lookbench.release.sources.metadata import category_label, colour_labels
from lookbench.release.sources.shop.extract import extract_product
from lookbench.release.sources.shop.sitemap import parse_sitemap


def test_json_ld_product_fields():
    ld = {
        "@context": "https://schema.org",
        "@type": "Product",
        "productID": "sku-9",
        "name": "Linen shirt",
        "brand": "Acme",
        "category": ["Men", "Shirts"],
        "color": "Off White",
        "image": ["a.jpg", {"@type": "ImageObject", "url": "b.jpg"}],
        "releaseDate": "2026-02-03",
    }
    html = f'<script type="application/ld+json">{json.dumps(ld)}</script><meta property="og:image" content="c.jpg">'
    page = extract_product(html)
    assert (page.product_id, page.name, page.brand, page.colour) == ("sku-9", "Linen shirt", "Acme", "Off White")
    assert page.category == "Men > Shirts" and page.images == ["a.jpg", "b.jpg", "c.jpg"]
    assert page.published_at is not None and page.published_at.isoformat().startswith("2026-02-03")
    assert page.published_origin == "json-ld releaseDate" and page.problems == []


def test_broken_json_ld_falls_back_to_open_graph():
    html = (
        '<script type="application/ld+json">{"@type": "Product",</script>'
        '<meta property="og:title" content="Boots"><meta property="og:image" content="/x.png">'
        '<meta property="product:category" content="Shoes">'
        '<meta property="article:published_time" content="2026-01-01">'
    )
    page = extract_product(html)
    assert page.origin == "opengraph" and page.images == ["/x.png"] and page.category == "Shoes"
    assert page.published_origin == "opengraph article:published_time"
    assert len(page.problems) == 1 and "not valid JSON" in page.problems[0]


def test_page_without_product_is_empty():
    page = extract_product('<script type="application/ld+json">{"@type": "WebPage", "name": "Home"}</script>')
    assert page.empty


def test_label_mapping():
    assert category_label("Women > Tops / T-Shirts") == "t-shirts"
    assert category_label(None) == ""
    assert colour_labels("Navy Blue / White and Red") == ("navy blue", ["white", "red"])
    assert colour_labels("") == ("", [])


def test_sitemaps_plain_index_and_gzip():
    urlset = (
        b'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>http://a/p/1</loc>'
        b"<lastmod>2026-05-01</lastmod></url><url><loc>http://a/p/2</loc></url></urlset>"
    )
    found = parse_sitemap(gzip.compress(urlset), 10_000)
    assert [p.loc for p in found.pages] == ["http://a/p/1", "http://a/p/2"] and found.children == []
    assert found.pages[0].lastmod is not None and found.pages[1].lastmod is None
    index = b"<sitemapindex><sitemap><loc>http://a/s2.xml</loc></sitemap></sitemapindex>"
    assert parse_sitemap(index, 10_000).children[0].loc == "http://a/s2.xml"
    with pytest.raises(ValueError, match="malformed"):
        parse_sitemap(b"<urlset><url>", 10_000)
    with pytest.raises(ValueError, match="DOCTYPE"):
        parse_sitemap(b'<!DOCTYPE x [<!ENTITY a "b">]><urlset/>', 10_000)
    with pytest.raises(ValueError, match="exceeds the limit of 100 bytes"):
        parse_sitemap(gzip.compress(urlset), 100)
    dated = urlset.replace(b"2026-05-01", b"2026-02-30")
    assert parse_sitemap(dated, 10_000).problems == [
        "1 lastmod value(s) are not ISO dates in range; those pages have none"
    ]
