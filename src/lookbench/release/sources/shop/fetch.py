"""HTTP fetching for the crawler: allowed hosts only, manual redirects, per-host rate limit, size and type checks."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from urllib.parse import urljoin, urlsplit

import httpx

from lookbench.release.sources.shop.warc import WarcLog

MAX_REDIRECTS = 5


class FetchError(Exception):
    """A URL could not be fetched or its response was refused; carries the URL and HTTP status if any."""

    def __init__(self, url: str, message: str, status: int | None = None) -> None:
        super().__init__(f"{url}: {message}")
        self.url = url
        self.status = status


@dataclass
class Fetched:
    """A completed response."""

    url: str
    status: int
    headers: dict[str, str]
    content: bytes
    fetched_at: datetime

    @property
    def content_type(self) -> str:
        """The media type without parameters, lowercased."""
        return self.headers.get("content-type", "").split(";")[0].strip().lower()


def host_of(url: str) -> str:
    """The `host[:port]` part of a URL, lowercased."""
    return urlsplit(url).netloc.lower()


class Fetcher:
    """Fetches only http(s) URLs on the configured hosts, one request per host every `rate_limit_s` seconds."""

    def __init__(
        self,
        hosts: list[str],
        user_agent: str,
        rate_limit_s: float,
        timeout_s: float,
        warc: WarcLog | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.hosts = {h.lower() for h in hosts}
        self.user_agent = user_agent
        self.rate_limit_s = rate_limit_s
        self.delays: dict[str, float] = {}
        self.warc = warc
        self._sleep = sleep
        self._next_at: dict[str, float] = {}
        self.requests: list[tuple[str, float]] = []
        """(URL, monotonic send time) of every request made."""
        self.client = httpx.Client(
            timeout=timeout_s, follow_redirects=False, headers={"User-Agent": user_agent}, trust_env=False
        )

    def close(self) -> None:
        """Close the HTTP client."""
        self.client.close()

    def refusal(self, url: str) -> str | None:
        """Why `url` may not be requested (scheme or host), or None if it may."""
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https"):
            return f"refused: only http(s) URLs are fetched, not {parts.scheme or 'a relative URL'}"
        if parts.netloc.lower() not in self.hosts:
            return f"refused: host {parts.netloc!r} is not one of the configured hosts"
        return None

    def _wait_turn(self, host: str) -> float:
        """Sleep until `host` may be asked again; return the send time, from which the next turn is counted."""
        delay = max(self.rate_limit_s, self.delays.get(host, 0.0))
        wait = self._next_at.get(host, 0.0) - time.monotonic()
        if wait > 0:
            self._sleep(wait)
        now = time.monotonic()
        self._next_at[host] = now + delay
        return now

    def get(
        self, url: str, max_bytes: int, accept: tuple[str, ...] = (), headers: dict[str, str] | None = None
    ) -> Fetched:
        """GET `url`, following redirects only within the configured hosts; raise FetchError on any refusal."""
        current = url
        for _ in range(MAX_REDIRECTS + 1):
            reason = self.refusal(current)
            if reason:
                raise FetchError(current, reason + (f" (redirected from {url})" if current != url else ""))
            self.requests.append((current, self._wait_turn(host_of(current))))
            fetched = self._get_once(current, max_bytes, headers or {})
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

    def _get_once(self, url: str, max_bytes: int, headers: dict[str, str]) -> Fetched:
        try:
            with self.client.stream("GET", url, headers=headers) as response:
                declared = response.headers.get("content-length")
                if declared and declared.isdigit() and int(declared) > max_bytes:
                    raise FetchError(url, f"refused: {declared} bytes exceeds the limit of {max_bytes}")
                chunks: list[bytes] = []
                size = 0
                for chunk in response.iter_bytes():
                    size += len(chunk)
                    if size > max_bytes:
                        raise FetchError(url, f"refused: body exceeds the limit of {max_bytes} bytes")
                    chunks.append(chunk)
                fetched = Fetched(
                    url=url,
                    status=response.status_code,
                    headers={k.lower(): v for k, v in response.headers.items()},
                    content=b"".join(chunks),
                    fetched_at=datetime.now(timezone.utc),
                )
        except httpx.HTTPError as exc:
            raise FetchError(url, f"{type(exc).__name__}: {exc}") from exc
        return fetched

    def archive(self, fetched: Fetched) -> None:
        """Keep a raw response in the WARC log, if one is configured."""
        if self.warc is not None:
            self.warc.write(fetched.url, fetched.status, fetched.headers, fetched.content)
