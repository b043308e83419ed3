"""Product facts from a page: schema.org Product JSON-LD first, OpenGraph `og:`/`product:` tags as fallback."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from html.parser import HTMLParser
from typing import Any

from lookbench.release.dates import parse_when


@dataclass
class ProductPage:
    """What a product page says about its product."""

    product_id: str | None = None
    name: str | None = None
    brand: str | None = None
    category: str | None = None
    colour: str | None = None
    images: list[str] = field(default_factory=list)
    published_at: datetime | None = None
    published_origin: str | None = None
    origin: str = "json-ld"
    problems: list[str] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        """True if the page names no product and no image."""
        return not self.images and not self.name


class _PageParser(HTMLParser):
    """Collects JSON-LD script bodies and meta property/content pairs."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.scripts: list[str] = []
        self.meta: list[tuple[str, str]] = []
        self._in_ld = False
        self._buffer: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {k.lower(): v or "" for k, v in attrs}
        if tag == "script" and values.get("type", "").lower().strip() == "application/ld+json":
            self._in_ld, self._buffer = True, []
        elif tag == "meta":
            key = values.get("property") or values.get("name")
            if key and "content" in values:
                self.meta.append((key.lower(), values["content"]))

    def handle_data(self, data: str) -> None:
        if self._in_ld:
            self._buffer.append(data)

    def handle_endtag(self, tag: str) -> None:
        if tag == "script" and self._in_ld:
            self.scripts.append("".join(self._buffer))
            self._in_ld = False


def _walk(node: Any) -> list[dict[str, Any]]:
    """Every JSON object in a JSON-LD document, including those under @graph and in lists."""
    found: list[dict[str, Any]] = []
    if isinstance(node, list):
        for item in node:
            found.extend(_walk(item))
    elif isinstance(node, dict):
        found.append(node)
        for key in ("@graph", "hasVariant"):
            found.extend(_walk(node.get(key)))
    return found


def _is_product(obj: dict[str, Any]) -> bool:
    types = obj.get("@type")
    names = types if isinstance(types, list) else [types]
    return any(str(t).rsplit("/", 1)[-1] in ("Product", "ProductGroup", "IndividualProduct") for t in names)


def _text(value: Any) -> str | None:
    if isinstance(value, dict):
        value = value.get("name") or value.get("@id")
    if isinstance(value, list):
        value = " > ".join(str(_text(v)) for v in value if _text(v))
    return str(value).strip() or None if value is not None else None


def _image_urls(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        url = value.get("contentUrl") or value.get("url")
        return [url] if isinstance(url, str) else []
    if isinstance(value, list):
        return [u for v in value for u in _image_urls(v)]
    return []


def _from_json_ld(obj: dict[str, Any]) -> ProductPage:
    page = ProductPage(origin="json-ld")
    page.product_id = _text(obj.get("sku") or obj.get("productID") or obj.get("mpn") or obj.get("@id"))
    page.name = _text(obj.get("name"))
    page.brand = _text(obj.get("brand"))
    page.category = _text(obj.get("category"))
    page.colour = _text(obj.get("color"))
    page.images = _image_urls(obj.get("image"))
    for key in ("datePublished", "releaseDate", "dateCreated"):
        when = parse_when(obj.get(key))
        if when is not None:
            page.published_at, page.published_origin = when, f"json-ld {key}"
            break
    return page


def _from_open_graph(meta: list[tuple[str, str]]) -> ProductPage:
    first: dict[str, str] = {}
    for key, value in meta:
        first.setdefault(key, value)
    page = ProductPage(origin="opengraph")
    page.product_id = first.get("product:retailer_item_id") or first.get("product:sku")
    page.name = first.get("og:title")
    page.brand = first.get("product:brand")
    page.category = first.get("product:category")
    page.colour = first.get("product:color")
    page.images = [v for k, v in meta if k in ("og:image", "og:image:url", "og:image:secure_url")]
    for key in ("product:release_date", "article:published_time"):
        when = parse_when(first.get(key))
        if when is not None:
            page.published_at, page.published_origin = when, f"opengraph {key}"
            break
    return page


def extract_product(html: str) -> ProductPage:
    """The page's product facts; broken JSON-LD is noted in `problems` and OpenGraph is used instead."""
    parser = _PageParser()
    parser.feed(html)
    parser.close()
    problems: list[str] = []
    for index, body in enumerate(parser.scripts):
        try:
            document = json.loads(body)
        except ValueError as exc:
            problems.append(f"JSON-LD block {index} is not valid JSON ({exc})")
            continue
        products = [obj for obj in _walk(document) if _is_product(obj)]
        if products:
            page = _from_json_ld(products[0])
            fallback = _from_open_graph(parser.meta)
            page.images = list(dict.fromkeys(page.images + fallback.images))
            page.problems = problems
            return page
    page = _from_open_graph(parser.meta)
    page.problems = problems
    return page
