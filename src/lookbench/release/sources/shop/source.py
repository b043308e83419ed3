"""The `shop` source: discover product pages from sitemaps, fetch changed ones, extract products, download images."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from datetime import datetime
from email.utils import parsedate_to_datetime
from urllib.parse import urljoin

from lookbench._util.dates import optional_datetime, parse_datetime
from lookbench._util.http import Response
from lookbench._util.images import BadImageError, image_size
from lookbench.release.config import ShopSource
from lookbench.release.records import Sample
from lookbench.release.sources.base import CollectContext
from lookbench.release.sources.metadata import category_label, colour_labels
from lookbench.release.sources.shop.extract import ProductPage, extract_product
from lookbench.release.sources.shop.fetch import Fetcher, FetchError
from lookbench.release.sources.shop.robots import RobotsRules, blocks, product_token, tag_directives
from lookbench.release.sources.shop.sitemap import SitemapEntry, parse_sitemap
from lookbench.release.sources.shop.state import CrawlState
from lookbench.release.sources.shop.warc import WarcLog

PAGE_TYPES = ("text/html", "application/xhtml+xml")


def _http_date(value: str | None) -> datetime | None:
    if not value:
        return None
    try:
        return optional_datetime(parsedate_to_datetime(value))
    except (TypeError, ValueError, IndexError):
        return None


class ShopCollector:
    """Crawls the configured hosts politely and yields one sample per product image."""

    kind = "shop"

    def __init__(self, config: ShopSource) -> None:
        self.config = config
        self.name = config.name
        self.stats: Counter[str] = Counter()

    def counts(self) -> dict[str, int]:
        """Requests made and pages and images by outcome."""
        return dict(self.stats)

    def collect(self, ctx: CollectContext) -> Iterator[Sample]:
        """Discover, fetch and extract; every failure is reported with its URL and the crawl goes on."""
        config = self.config
        fetcher = Fetcher(
            config.hosts,
            config.user_agent,
            config.rate_limit_s,
            config.timeout_s,
            retries=config.retries,
            backoff_s=config.backoff_s,
            warc=WarcLog(ctx.work / "pages.warc.gz"),
        )
        robots = RobotsRules(fetcher, config.user_agent, config.max_crawl_delay_s, ctx.report)
        state = CrawlState(ctx.state, ctx.version)
        try:
            pages = self._pages(fetcher, robots, ctx)
            if len(pages) > config.max_pages:
                ctx.report(self.name, f"max_pages {config.max_pages} reached; the sitemaps list more, not read")
            for entry in pages[: config.max_pages]:
                yield from self._page(entry, fetcher, robots, state, ctx)
            state.save()
        finally:
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
        while queue:
            url = queue.pop(0)
            if url in seen:
                continue
            if len(seen) == self.config.max_sitemaps:
                left = len({u for u in [url, *queue] if u not in seen})
                ctx.report(url, f"limit of {self.config.max_sitemaps} sitemaps reached; {left} more not read")
                break
            seen.add(url)
            denial = fetcher.refusal(url) or robots.denial(url)
            if denial:
                ctx.report(url, denial)
                continue
            try:
                fetched = fetcher.get(url, self.config.max_sitemap_bytes, hop_check=robots.denial)
                # a file is read only as far as max_pages needs (sitemaps may list 50,000 URLs each)
                sitemap = parse_sitemap(fetched.content, self.config.max_sitemap_bytes, self.config.max_pages + 1)
            except (FetchError, ValueError) as exc:
                ctx.report(url, f"sitemap: {exc}")
                continue
            for problem in sitemap.problems:
                ctx.report(url, f"sitemap: {problem}")
            queue.extend(child.loc for child in sitemap.children)
            for entry in sitemap.pages:
                pages[entry.loc] = entry
            if len(pages) > self.config.max_pages:
                break  # enough pages to fill max_pages: the other sitemaps are not fetched
        self.stats["pages_listed"] = len(pages)
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
            self.stats["pages_disallowed"] += 1
            ctx.report(url, denial)
            return
        if self.config.incremental and state.unchanged(url, entry.lastmod):
            self.stats["pages_unchanged"] += 1
            return
        previous = state.previous(url) if self.config.incremental else None
        headers = {}
        if previous is not None and entry.lastmod is None:
            stamp = parse_datetime(previous.fetched_at)
            headers["If-Modified-Since"] = stamp.strftime("%a, %d %b %Y %H:%M:%S GMT")
        try:
            fetched = fetcher.get(
                url, self.config.max_page_bytes, accept=PAGE_TYPES, headers=headers, hop_check=robots.denial
            )
        except FetchError as exc:
            self.stats["pages_failed"] += 1
            ctx.report(exc.url, exc.reason)
            return
        if fetched.status == 304:
            self.stats["pages_unchanged"] += 1
            state.record(url, fetched.fetched_at, entry.lastmod)
            return
        fetcher.archive(fetched)
        self.stats["pages_fetched"] += 1
        token = product_token(self.config.user_agent)
        product = extract_product(fetched.content.decode("utf-8", errors="replace"), token)
        for problem in product.problems:
            ctx.report(url, problem)
        state.record(url, fetched.fetched_at, entry.lastmod)
        directives = tag_directives(fetched.headers.get("x-robots-tag"), self.config.user_agent) | set(product.robots)
        no_page, no_images = blocks(directives)
        if no_page or no_images:
            self.stats["pages_noindex"] += 1
            which = "noindex" if no_page else "noimageindex"
            ctx.report(url, f"skipped: the page says {which} ({', '.join(sorted(directives))})")
            return
        if product.empty:
            ctx.report(url, "no schema.org Product JSON-LD or OpenGraph product data")
            return
        yield from self._images(url, product, entry, fetched, fetcher, robots, ctx)

    def _images(
        self,
        page_url: str,
        product: ProductPage,
        entry: SitemapEntry,
        page: Response,
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
            denial = fetcher.refusal(image_url) or robots.denial(image_url)
            if denial:
                self.stats["images_failed"] += 1
                ctx.report(image_url, denial)
                continue
            try:
                image = fetcher.get(image_url, self.config.max_image_bytes, accept=("image/",), hop_check=robots.denial)
                image_size(image.content)
            except FetchError as exc:
                self.stats["images_failed"] += 1
                ctx.report(exc.url, exc.reason)
                continue
            except BadImageError as exc:
                self.stats["images_failed"] += 1
                ctx.report(image_url, f"not a decodable image ({exc})")
                continue
            directives = tag_directives(image.headers.get("x-robots-tag"), self.config.user_agent)
            if any(blocks(directives)):
                self.stats["images_noindex"] += 1
                ctx.report(image_url, f"skipped: the image says noimageindex ({', '.join(sorted(directives))})")
                continue
            self.stats["images"] += 1
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
