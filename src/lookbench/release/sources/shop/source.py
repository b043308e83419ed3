"""The `shop` source: discover product pages from sitemaps, fetch changed ones, extract products, download images."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from email.utils import parsedate_to_datetime
from urllib.parse import urljoin

from lookbench.release.config import ShopSource
from lookbench.release.images import check_image
from lookbench.release.labels import category_label, colour_labels
from lookbench.release.sample import Sample
from lookbench.release.sources.base import CollectContext
from lookbench.release.sources.shop.extract import ProductPage, extract_product
from lookbench.release.sources.shop.fetch import Fetched, Fetcher, FetchError
from lookbench.release.sources.shop.robots import RobotsRules
from lookbench.release.sources.shop.sitemap import SitemapEntry, parse_sitemap
from lookbench.release.sources.shop.state import CrawlState
from lookbench.release.sources.shop.warc import WarcLog

MAX_SITEMAP_BYTES = 50_000_000
MAX_SITEMAPS = 100
PAGE_TYPES = ("text/html", "application/xhtml+xml")


def _http_date(value: str | None) -> datetime | None:
    if not value:
        return None
    try:
        return parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None


class ShopCollector:
    """Crawls the configured hosts politely and yields one sample per product image."""

    kind = "shop"

    def __init__(self, config: ShopSource) -> None:
        self.config = config
        self.name = config.name
        self.stats: dict[str, int] = {}

    def _count(self, key: str, n: int = 1) -> None:
        self.stats[key] = self.stats.get(key, 0) + n

    def collect(self, ctx: CollectContext) -> Iterator[Sample]:
        """Discover, fetch and extract; every failure is reported with its URL and the crawl goes on."""
        fetcher = Fetcher(
            self.config.hosts,
            self.config.user_agent,
            self.config.rate_limit_s,
            self.config.timeout_s,
            warc=WarcLog(ctx.work / "pages.warc.gz"),
        )
        robots = RobotsRules(fetcher, self.config.user_agent)
        state = CrawlState(ctx.state, ctx.release.version)
        try:
            for entry in self._pages(fetcher, robots, ctx)[: self.config.max_pages]:
                yield from self._page(entry, fetcher, robots, state, ctx)
            state.save()
        finally:
            for url, message in robots.problems:
                ctx.report(url, message)
            fetcher.close()
            self.stats["requests"] = len(fetcher.requests)

    def _pages(self, fetcher: Fetcher, robots: RobotsRules, ctx: CollectContext) -> list[SitemapEntry]:
        roots = [f"{self.config.scheme}://{h}/" for h in self.config.hosts]
        queue = list(self.config.sitemaps)
        if not queue:
            for root in roots:
                queue.extend(robots.sitemaps(root) or [urljoin(root, "/sitemap.xml")])
        pages: dict[str, SitemapEntry] = {url: SitemapEntry(url, None) for url in self.config.pages}
        seen: set[str] = set()
        while queue and len(seen) < MAX_SITEMAPS:
            url = queue.pop(0)
            if url in seen:
                continue
            seen.add(url)
            denial = None if fetcher.refusal(url) else robots.denial(url)
            if denial:
                ctx.report(url, denial)
                continue
            try:
                found, children = parse_sitemap(fetcher.get(url, MAX_SITEMAP_BYTES).content)
            except (FetchError, ValueError, OSError) as exc:
                ctx.report(url, f"sitemap: {exc}")
                continue
            queue.extend(child.loc for child in children)
            for entry in found:
                pages[entry.loc] = entry
        self._count("pages_listed", len(pages))
        return list(pages.values())

    def _page(
        self, entry: SitemapEntry, fetcher: Fetcher, robots: RobotsRules, state: CrawlState, ctx: CollectContext
    ) -> Iterator[Sample]:
        url = entry.loc
        refusal = fetcher.refusal(url)
        if refusal:
            ctx.report(url, refusal)
            return
        denial = robots.denial(url)
        if denial:
            self._count("pages_disallowed")
            ctx.report(url, denial)
            return
        if self.config.incremental and state.unchanged(url, entry.lastmod):
            self._count("pages_unchanged")
            return
        previous = state.previous(url) if self.config.incremental else None
        headers = {}
        if previous is not None and entry.lastmod is None:
            stamp = datetime.fromisoformat(previous.fetched_at)
            headers["If-Modified-Since"] = stamp.strftime("%a, %d %b %Y %H:%M:%S GMT")
        try:
            fetched = fetcher.get(url, self.config.max_page_bytes, accept=PAGE_TYPES, headers=headers)
        except FetchError as exc:
            self._count("pages_failed")
            ctx.report(exc.url, str(exc).removeprefix(f"{exc.url}: "))
            return
        if fetched.status == 304:
            self._count("pages_unchanged")
            state.record(url, fetched.fetched_at, entry.lastmod)
            return
        fetcher.archive(fetched)
        self._count("pages_fetched")
        product = extract_product(fetched.content.decode("utf-8", errors="replace"))
        for problem in product.problems:
            ctx.report(url, problem)
        if product.empty:
            ctx.report(url, "no schema.org Product JSON-LD or OpenGraph product data")
            state.record(url, fetched.fetched_at, entry.lastmod)
            return
        yield from self._images(url, product, entry, fetched, fetcher, robots, ctx)
        state.record(url, fetched.fetched_at, entry.lastmod)

    def _images(
        self,
        page_url: str,
        product: ProductPage,
        entry: SitemapEntry,
        page: Fetched,
        fetcher: Fetcher,
        robots: RobotsRules,
        ctx: CollectContext,
    ) -> Iterator[Sample]:
        category = category_label(product.category)
        if not category:
            ctx.report(page_url, "skipped: the product has no category text")
            return
        main, others = colour_labels(product.colour)
        published, origin = product.published_at, product.published_origin
        if published is None and entry.lastmod is not None:
            published, origin = entry.lastmod, "sitemap lastmod"
        if published is None:
            published = _http_date(page.headers.get("last-modified"))
            origin = "http last-modified" if published else None
        for raw_url in product.images[: self.config.max_images_per_product]:
            image_url = urljoin(page_url, raw_url)
            denial = None if fetcher.refusal(image_url) else robots.denial(image_url)
            if denial:
                self._count("images_failed")
                ctx.report(image_url, denial)
                continue
            try:
                image = fetcher.get(image_url, self.config.max_image_bytes, accept=("image/",))
                check_image(image.content)
            except FetchError as exc:
                self._count("images_failed")
                ctx.report(exc.url, str(exc).removeprefix(f"{exc.url}: "))
                continue
            except ValueError as exc:
                self._count("images_failed")
                ctx.report(image_url, str(exc))
                continue
            self._count("images")
            yield Sample(
                source=self.name,
                source_kind=self.kind,
                product_id=product.product_id or page_url,
                image=image.content,
                first_seen_at=image.fetched_at,
                category=category,
                main_attribute=main,
                other_attributes=others,
                subsets=list(self.config.subsets),
                license=self.config.license,
                source_url=page_url,
                image_url=image_url,
                source_published_at=published,
                published_at_origin=origin,
                title=product.name,
                brand=product.brand,
            )
