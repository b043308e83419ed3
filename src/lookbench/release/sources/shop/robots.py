"""robots.txt per RFC 9309 through protego: longest match, `*` and `$`; a 4xx file allows all, 5xx or none disallows."""

from __future__ import annotations

from collections.abc import Callable

from protego import Protego

from lookbench._util.http import host_of
from lookbench.release.sources.shop.fetch import Fetcher, FetchError

MAX_ROBOTS_BYTES = 500_000
"""RFC 9309 asks crawlers to parse at least 500 KiB."""


class RobotsRules:
    """Cached robots.txt decisions for the configured user agent, one file per host."""

    def __init__(
        self, fetcher: Fetcher, user_agent: str, max_crawl_delay_s: float, report: Callable[[str, str], None]
    ) -> None:
        self.fetcher = fetcher
        self.user_agent = user_agent
        self.max_crawl_delay_s = max_crawl_delay_s
        self.report = report
        self._rules: dict[str, Protego | bool] = {}
        self._failures: dict[str, str] = {}

    def _host_rules(self, url: str) -> Protego | bool:
        host = host_of(url)
        if host not in self._rules:
            robots_url = f"{url.split(':', 1)[0]}://{host}/robots.txt"
            try:
                fetched = self.fetcher.get(robots_url, MAX_ROBOTS_BYTES)
            except FetchError as exc:
                # 4xx: no rules, crawl freely; unreachable, 429 or 5xx: stay away (RFC 9309 2.3.1.3-4)
                allow = exc.status is not None and 400 <= exc.status < 500 and exc.status != 429
                self._rules[host] = allow
                if not allow:
                    self._failures[host] = f"robots.txt unavailable, host treated as disallowed ({exc})"
                    self.report(robots_url, self._failures[host])
                return self._rules[host]
            rules = Protego.parse(fetched.content.decode("utf-8", errors="replace"))
            self._rules[host] = rules
            delay = rules.crawl_delay(self.user_agent)
            if delay:
                if delay > self.max_crawl_delay_s:
                    self.report(
                        robots_url,
                        f"warning: Crawl-delay {delay:g} s capped at max_crawl_delay_s {self.max_crawl_delay_s:g} s",
                    )
                    delay = self.max_crawl_delay_s
                self.fetcher.limiter.set_interval(host, float(delay))
        return self._rules[host]

    def denial(self, url: str) -> str | None:
        """Why robots rules forbid `url` (naming an unreachable robots.txt), or None if allowed."""
        rules = self._host_rules(url)
        allowed = rules if isinstance(rules, bool) else rules.can_fetch(url, self.user_agent)
        if allowed:
            return None
        return "skipped: " + self._failures.get(host_of(url), "disallowed by robots.txt")

    def sitemaps(self, url: str) -> list[str]:
        """Sitemap URLs the host's robots.txt names."""
        rules = self._host_rules(url)
        return [] if isinstance(rules, bool) else list(rules.sitemaps)


_VALUED = {"unavailable_after", "max-snippet", "max-image-preview", "max-video-preview"}


def product_token(user_agent: str) -> str:
    """The crawler's name in a User-Agent string (`lookbench-builder/0.1 (+url)` -> `lookbench-builder`)."""
    return user_agent.split("/", 1)[0].split(" ", 1)[0].strip().lower()


def tag_directives(header: str | None, user_agent: str) -> set[str]:
    """Directives of an `X-Robots-Tag` header that apply to this crawler (unscoped ones and those naming it)."""
    token = product_token(user_agent)
    found: set[str] = set()
    scope: str | None = None
    for part in (header or "").split(","):
        text = part.strip().lower()
        key, colon, rest = text.partition(":")
        if colon and key.strip() not in _VALUED:
            scope, text = key.strip(), rest.strip()
        if text and (scope is None or scope == token):
            found.add(text.split(":", 1)[0].strip())
    return found


def blocks(directives: set[str] | list[str]) -> tuple[bool, bool]:
    """(page may not be used, its images may not be used) under robots meta/header directives."""
    page = bool({"noindex", "none"} & set(directives))
    return page, page or "noimageindex" in directives
