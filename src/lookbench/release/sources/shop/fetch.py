"""HTTP fetching for the crawler: http(s) on the configured hosts only, every redirect hop checked
(lookbench._util.http)."""

from __future__ import annotations

import time
from collections.abc import Callable
from urllib.parse import urljoin, urlsplit

from lookbench._util.http import HttpClient, HttpError, RateLimiter, Response, RetryPolicy
from lookbench.release.sources.shop.warc import WarcLog

MAX_REDIRECTS = 5


class FetchError(Exception):
    """A URL could not be fetched or its response was refused; carries the URL and HTTP status if any."""

    def __init__(self, url: str, message: str, status: int | None = None) -> None:
        super().__init__(f"{url}: {message}")
        self.url = url
        self.reason = message
        self.status = status


class Fetcher:
    """One request per host every `rate_limit_s` seconds (a host's Crawl-delay wins when larger)."""

    def __init__(
        self,
        hosts: list[str],
        user_agent: str,
        rate_limit_s: float,
        timeout_s: float,
        retries: int = 2,
        backoff_s: float = 1.0,
        warc: WarcLog | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.hosts = {h.lower() for h in hosts}
        self.limiter = RateLimiter(rate_limit_s, sleep)
        self.http = HttpClient(
            deadline_s=timeout_s,
            retry=RetryPolicy(retries=retries, backoff_s=backoff_s),
            limiter=self.limiter,
            headers={"User-Agent": user_agent},
            sleep=sleep,
        )
        self.warc = warc

    @property
    def requests(self) -> list[tuple[str, float]]:
        """(URL, monotonic send time) of every request made."""
        return self.http.requests

    def close(self) -> None:
        """Close the HTTP client."""
        self.http.close()

    def refusal(self, url: str) -> str | None:
        """Why `url` may not be requested (scheme or host), or None if it may."""
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https"):
            return f"refused: only http(s) URLs are fetched, not {parts.scheme or 'a relative URL'}"
        if parts.netloc.lower() not in self.hosts:
            return f"refused: host {parts.netloc!r} is not one of the configured hosts"
        return None

    def get(
        self,
        url: str,
        max_bytes: int,
        accept: tuple[str, ...] = (),
        headers: dict[str, str] | None = None,
        hop_check: Callable[[str], str | None] | None = None,
    ) -> Response:
        """GET `url`; each redirect hop must pass the host check and `hop_check` (robots). FetchError otherwise."""
        current = url
        for _ in range(MAX_REDIRECTS + 1):
            reason = self.refusal(current)
            if reason is None and current != url and hop_check is not None:
                reason = hop_check(current)
            if reason:
                raise FetchError(current, reason + (f" (redirected from {url})" if current != url else ""))
            try:
                fetched = self.http.request("GET", current, headers=headers, max_bytes=max_bytes)
            except HttpError as exc:
                raise FetchError(current, exc.reason, exc.status) from exc
            location = fetched.headers.get("location")
            if 300 <= fetched.status < 400 and fetched.status != 304 and location:
                current = urljoin(current, location)
                continue
            if fetched.status >= 400:
                raise FetchError(current, f"HTTP {fetched.status}", status=fetched.status)
            if fetched.status == 200 and accept and not fetched.content_type.startswith(accept):
                raise FetchError(
                    current, f"refused: content type {fetched.content_type or 'missing'!r}, expected {accept}"
                )
            return fetched
        raise FetchError(url, f"more than {MAX_REDIRECTS} redirects")

    def archive(self, fetched: Response) -> None:
        """Keep a raw response in the WARC log, if one is configured."""
        if self.warc is not None:
            self.warc.write(fetched.url, fetched.status, fetched.headers, fetched.content)
