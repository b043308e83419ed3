"""robots.txt rules per host (RFC 9309): 4xx means allow all, unreachable or 5xx means disallow all."""

from __future__ import annotations

from urllib.robotparser import RobotFileParser

from lookbench.release.sources.shop.fetch import Fetcher, FetchError, host_of

MAX_ROBOTS_BYTES = 500_000


class RobotsRules:
    """Cached robots.txt decisions for the configured user agent."""

    def __init__(self, fetcher: Fetcher, user_agent: str) -> None:
        self.fetcher = fetcher
        self.user_agent = user_agent
        self._parsers: dict[str, RobotFileParser | bool] = {}
        self._failures: dict[str, str] = {}
        self.problems: list[tuple[str, str]] = []

    def _rules(self, url: str) -> RobotFileParser | bool:
        host = host_of(url)
        if host not in self._parsers:
            scheme = url.split(":", 1)[0]
            robots_url = f"{scheme}://{host}/robots.txt"
            try:
                fetched = self.fetcher.get(robots_url, MAX_ROBOTS_BYTES)
                parser = RobotFileParser(robots_url)
                parser.parse(fetched.content.decode("utf-8", errors="replace").splitlines())
                self._parsers[host] = parser
                delay = parser.crawl_delay(self.user_agent)
                if delay:
                    self.fetcher.delays[host] = float(delay)
            except FetchError as exc:
                allow = exc.status is not None and 400 <= exc.status < 500
                self._parsers[host] = allow
                if not allow:
                    self._failures[host] = f"robots.txt unavailable, host treated as disallowed ({exc})"
                    self.problems.append((robots_url, self._failures[host]))
        return self._parsers[host]

    def allowed(self, url: str) -> bool:
        """True if the user agent may fetch `url`."""
        rules = self._rules(url)
        return rules if isinstance(rules, bool) else rules.can_fetch(self.user_agent, url)

    def denial(self, url: str) -> str | None:
        """Why robots rules forbid `url` (naming an unreachable robots.txt), or None if allowed."""
        if self.allowed(url):
            return None
        return "skipped: " + self._failures.get(host_of(url), "disallowed by robots.txt")

    def sitemaps(self, url: str) -> list[str]:
        """Sitemap URLs the host's robots.txt names."""
        rules = self._rules(url)
        return [] if isinstance(rules, bool) else list(rules.site_maps() or [])
