"""One HTTP layer for every caller that talks to servers it does not control (the shop crawler, `api:` models,
and, through `DeadlineTransport`, the openai SDK of the VLM annotator and judge).

Each request gets a total deadline per attempt (not per read: a server trickling a byte a second is cut off at the
deadline), a streamed body with a byte limit, retries with exponential backoff that honour `Retry-After`
(tenacity), and a per-host rate limit shared by all requests of one client.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timezone
from email.utils import parsedate_to_datetime
from typing import Any
from urllib.parse import urlsplit

import httpx
import tenacity

RETRY_STATUS = frozenset({408, 425, 429, 500, 502, 503, 504})
"""Statuses worth asking again: timeouts, rate limits and server errors."""


class HttpError(Exception):
    """A request that failed for good: refused, too large, too slow, or still failing after every retry."""

    def __init__(self, url: str, message: str, status: int | None = None) -> None:
        super().__init__(f"{url}: {message}")
        self.url = url
        self.reason = message
        self.status = status


class _Retryable(Exception):
    """One failed attempt that a later attempt may get past."""

    def __init__(self, message: str, status: int | None = None, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.retry_after = retry_after


class DeadlineExceeded(httpx.ReadTimeout):
    """A response that was not complete, body included, within its request's total deadline."""


class _DeadlineStream(httpx.SyncByteStream):
    """A response body that ends with DeadlineExceeded once the deadline has passed.

    A watchdog shuts the connection's socket down at the deadline, so a read waiting on a server that has gone
    silent returns then instead of after its own (per-read) timeout.
    """

    def __init__(self, inner: httpx.Response, request: httpx.Request, deadline: float, limit_s: float) -> None:
        self._inner = inner
        self._request = request
        self._deadline = deadline
        self._limit_s = limit_s
        sock = _socket_of(inner)
        self._watchdog = threading.Timer(max(0.0, deadline - time.monotonic()), _shut_down, (sock,))
        self._watchdog.daemon = True
        if sock is not None:
            self._watchdog.start()

    def _exceeded(self) -> DeadlineExceeded:
        message = f"no complete answer within the deadline of {self._limit_s:g} s"
        return DeadlineExceeded(message, request=self._request)

    def __iter__(self) -> Iterator[bytes]:
        try:
            for chunk in self._inner.stream:  # type: ignore[union-attr]
                if time.monotonic() > self._deadline:
                    raise self._exceeded()
                yield chunk
        except httpx.TransportError as exc:
            if time.monotonic() > self._deadline and not isinstance(exc, DeadlineExceeded):
                raise self._exceeded() from exc
            raise

    def close(self) -> None:
        self._watchdog.cancel()
        self._inner.close()


def _socket_of(response: httpx.Response) -> socket.socket | None:
    stream = response.extensions.get("network_stream")
    found = stream.get_extra_info("socket") if stream is not None else None
    return found if isinstance(found, socket.socket) else None


def _shut_down(sock: socket.socket | None) -> None:
    if sock is not None:
        with contextlib.suppress(OSError):  # already closed: the answer was complete after all
            sock.shutdown(socket.SHUT_RDWR)


class DeadlineTransport(httpx.BaseTransport):
    """An httpx transport whose every response must be complete, body included, within `deadline_s` of sending.

    Per-read timeouts (httpx's, and the openai SDK's `timeout`) let a server trickling a byte at a time go on for
    ever; here the whole exchange has one deadline, after which the response ends with DeadlineExceeded (an
    httpx.ReadTimeout, so callers that retry timeouts retry it). Pass it to `httpx.Client(transport=...)`.
    """

    def __init__(self, deadline_s: float, inner: httpx.BaseTransport | None = None) -> None:
        self.deadline_s = deadline_s
        self._inner = inner if inner is not None else httpx.HTTPTransport(trust_env=False)

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        """Send the request with every wait capped at the deadline; the body is cut off when it passes."""
        deadline = time.monotonic() + self.deadline_s
        request.extensions["timeout"] = _capped(request.extensions.get("timeout", {}), self.deadline_s)
        response = self._inner.handle_request(request)
        left = deadline - time.monotonic()
        if left <= 0:
            response.close()
            raise DeadlineExceeded(f"no answer within the deadline of {self.deadline_s:g} s", request=request)
        # the body's reads wait at most what is left (httpcore reads this when the body starts)
        request.extensions["timeout"] = {**request.extensions["timeout"], "read": left}
        return httpx.Response(
            status_code=response.status_code,
            headers=response.headers,
            stream=_DeadlineStream(response, request, deadline, self.deadline_s),
            extensions=response.extensions,
        )

    def close(self) -> None:
        """Close the wrapped transport."""
        self._inner.close()


def _capped(timeouts: dict[str, float | None], limit: float) -> dict[str, float]:
    """Every phase's timeout, at most `limit` (None, i.e. wait for ever, becomes `limit`)."""
    phases = ("connect", "read", "write", "pool")
    return {phase: min(limit, value) if (value := timeouts.get(phase)) is not None else limit for phase in phases}


@dataclass
class Response:
    """A complete response: final URL, status, lowercased headers, body and when it arrived."""

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


def retry_after_seconds(value: str | None, now: float | None = None) -> float | None:
    """Seconds a `Retry-After` header asks for (delta-seconds or an HTTP date), or None."""
    if not value:
        return None
    text = value.strip()
    if text.replace(".", "", 1).isdigit():
        return float(text)
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


class RateLimiter:
    """Request starts at least `interval_s` apart per key (a host); a key's own interval wins when larger."""

    def __init__(self, interval_s: float = 0.0, sleep: Callable[[float], None] = time.sleep) -> None:
        self.interval_s = interval_s
        self.intervals: dict[str, float] = {}
        self._next_at: dict[str, float] = {}
        self._sleep = sleep
        self._lock = threading.Lock()

    @classmethod
    def per_second(cls, rps: float) -> RateLimiter:
        """At most `rps` requests per second (0: unlimited)."""
        return cls(1.0 / rps if rps > 0 else 0.0)

    def set_interval(self, key: str, seconds: float) -> None:
        """Space this key's requests at least `seconds` apart (e.g. a robots.txt Crawl-delay)."""
        self.intervals[key] = seconds

    def wait(self, key: str = "") -> float:
        """Sleep until `key` may be asked again; return the send time, from which the next turn is counted."""
        with self._lock:
            now = time.monotonic()
            start = max(now, self._next_at.get(key, 0.0))
            self._next_at[key] = start + max(self.interval_s, self.intervals.get(key, 0.0))
        if start > now:
            self._sleep(start - now)
        return start


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how long to keep asking."""

    retries: int = 2
    backoff_s: float = 1.0
    """Wait before the first retry; doubles per retry. A server's Retry-After replaces it."""
    max_wait_s: float = 60.0
    """A Retry-After longer than this ends the retries instead of stalling the caller."""
    statuses: frozenset[int] = RETRY_STATUS


@dataclass
class HttpClient:
    """httpx underneath; redirects are not followed (callers that allow them check every hop themselves)."""

    deadline_s: float
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    limiter: RateLimiter = field(default_factory=RateLimiter)
    headers: dict[str, str] = field(default_factory=dict)
    sleep: Callable[[float], None] = time.sleep
    requests: list[tuple[str, float]] = field(default_factory=list)
    """(URL, monotonic send time) of every attempt made."""

    def __post_init__(self) -> None:
        self._client = httpx.Client(
            follow_redirects=False,
            headers=self.headers,
            trust_env=False,
            transport=DeadlineTransport(self.deadline_s),
        )
        self._lock = threading.Lock()

    def close(self) -> None:
        """Close the connection pool."""
        self._client.close()

    def request(
        self,
        method: str,
        url: str,
        *,
        json: Any = None,
        headers: dict[str, str] | None = None,
        max_bytes: int | None = None,
    ) -> Response:
        """Send one request, retrying what may pass later; a response with any other status is returned as is."""

        def wait(state: tenacity.RetryCallState) -> float:
            failure = state.outcome.exception() if state.outcome is not None else None
            after = failure.retry_after if isinstance(failure, _Retryable) else None
            return after if after is not None else self.retry.backoff_s * 2 ** (state.attempt_number - 1)

        def stop(state: tenacity.RetryCallState) -> bool:
            failure = state.outcome.exception() if state.outcome is not None else None
            too_long = isinstance(failure, _Retryable) and (failure.retry_after or 0) > self.retry.max_wait_s
            return too_long or state.attempt_number > self.retry.retries

        retrying = tenacity.Retrying(
            retry=tenacity.retry_if_exception_type(_Retryable), wait=wait, stop=stop, sleep=self.sleep, reraise=True
        )
        try:
            return retrying(self._attempt, method, url, json, headers or {}, max_bytes)
        except _Retryable as exc:
            attempts = int(retrying.statistics.get("attempt_number", 1))
            plural = "s" if attempts > 1 else ""
            raise HttpError(url, f"no answer after {attempts} attempt{plural} (last: {exc})", exc.status) from exc

    def _attempt(self, method: str, url: str, json: Any, headers: dict[str, str], max_bytes: int | None) -> Response:
        sent = self.limiter.wait(host_of(url))
        with self._lock:
            self.requests.append((url, sent))
        try:
            with self._client.stream(
                method, url, json=json, headers=headers, timeout=httpx.Timeout(self.deadline_s)
            ) as response:
                declared = response.headers.get("content-length", "")
                if max_bytes is not None and declared.isdigit() and int(declared) > max_bytes:
                    raise HttpError(url, f"refused: {declared} bytes exceeds the limit of {max_bytes}")
                chunks: list[bytes] = []
                size = 0
                for chunk in response.iter_bytes():
                    size += len(chunk)
                    if max_bytes is not None and size > max_bytes:
                        raise HttpError(url, f"refused: body exceeds the limit of {max_bytes} bytes")
                    chunks.append(chunk)
                result = Response(
                    url=url,
                    status=response.status_code,
                    headers={k.lower(): v for k, v in response.headers.items()},
                    content=b"".join(chunks),
                    fetched_at=datetime.now(timezone.utc),
                )
        except DeadlineExceeded as exc:
            raise HttpError(url, f"refused: {exc}") from exc
        except httpx.TransportError as exc:
            raise _Retryable(f"{type(exc).__name__}: {exc}") from exc
        if result.status in self.retry.statuses:
            raise _Retryable(
                f"HTTP {result.status}", result.status, retry_after_seconds(result.headers.get("retry-after"))
            )
        return result
