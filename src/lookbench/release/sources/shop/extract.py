"""Product facts from a page: schema.org Product JSON-LD first, OpenGraph `og:`/`product:` tags as fallback."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from html.parser import HTMLParser
from typing import Any

from lookbench._util.dates import optional_datetime
from lookbench._util.jsontext import loads


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
    robots: list[str] = field(default_factory=list)
    """Directives of `<meta name="robots">` and of meta tags named after the crawler, lowercased."""
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


def _walk(document: Any) -> list[dict[str, Any]]:
    """Every JSON object in a JSON-LD document, including those under @graph, hasVariant and in lists (in order)."""
    found: list[dict[str, Any]] = []
    stack = [document]
    while stack:
        node = stack.pop()
        if isinstance(node, list):
            stack.extend(reversed(node))
        elif isinstance(node, dict):
            found.append(node)
            stack.extend(node.get(key) for key in ("hasVariant", "@graph"))
    return found


def _is_product(obj: dict[str, Any]) -> bool:
    types = obj.get("@type")
    names = types if isinstance(types, list) else [types]
    return any(str(t).rsplit("/", 1)[-1] in ("Product", "ProductGroup", "IndividualProduct") for t in names)


MAX_DEPTH = 4
"""How deep a product's own values are followed (names in lists of objects, image lists)."""


def _text(value: Any, depth: int = 0) -> str | None:
    if isinstance(value, dict):
        value = value.get("name") or value.get("@id")
    if isinstance(value, list):
        parts = [_text(v, depth + 1) for v in value] if depth < MAX_DEPTH else []
        value = " > ".join(p for p in parts if p)
    if isinstance(value, (dict, list)) or value is None:
        return None
    return str(value).strip() or None


def _image_urls(value: Any, depth: int = 0) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        url = value.get("contentUrl") or value.get("url")
        return [url] if isinstance(url, str) else []
    if isinstance(value, list) and depth < MAX_DEPTH:
        return [u for v in value for u in _image_urls(v, depth + 1)]
    return []


def _published(page: ProductPage, candidates: list[tuple[str, Any]]) -> None:
    """The first usable date among (origin, value); values that are not dates in range are problems."""
    for origin, value in candidates:
        try:
            when = optional_datetime(value if isinstance(value, str) else None)
        except ValueError as exc:
            page.problems.append(f"{origin} ignored: {exc}")
            continue
        if when is not None:
            page.published_at, page.published_origin = when, origin
            return


def _from_json_ld(obj: dict[str, Any]) -> ProductPage:
    page = ProductPage(origin="json-ld")
    page.product_id = _text(obj.get("sku") or obj.get("productID") or obj.get("mpn") or obj.get("@id"))
    page.name = _text(obj.get("name"))
    page.brand = _text(obj.get("brand"))
    page.category = _text(obj.get("category"))
    page.colour = _text(obj.get("color"))
    page.images = _image_urls(obj.get("image"))
    _published(page, [(f"json-ld {key}", obj.get(key)) for key in ("datePublished", "releaseDate", "dateCreated")])
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
    _published(
        page, [(f"opengraph {key}", first.get(key)) for key in ("product:release_date", "article:published_time")]
    )
    return page


def _robots(meta: list[tuple[str, str]], token: str) -> list[str]:
    """Directives of `<meta name="robots">` and of meta tags named after the crawler's product token."""
    found: list[str] = []
    for key, value in meta:
        if key == "robots" or (token and key == token):
            found += [d.strip().lower() for d in value.split(",") if d.strip()]
    return found


def extract_product(html: str, crawler: str = "") -> ProductPage:
    """The page's product facts; broken JSON-LD is noted in `problems` and OpenGraph is used instead."""
    parser = _PageParser()
    parser.feed(html)
    parser.close()
    problems: list[str] = []
    page: ProductPage | None = None
    for index, body in enumerate(parser.scripts):
        try:
            document = loads(body)
        except ValueError as exc:
            problems.append(f"JSON-LD block {index} is not valid JSON ({exc})")
            continue
        products = [obj for obj in _walk(document) if _is_product(obj)]
        if products:
            page = _from_json_ld(products[0])
            page.images = list(dict.fromkeys(page.images + _from_open_graph(parser.meta).images))
            break
    if page is None:
        page = _from_open_graph(parser.meta)
    page.problems = problems + page.problems
    page.robots = _robots(parser.meta, crawler)
    return page
