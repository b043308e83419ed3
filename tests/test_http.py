"""lookbench._util.http against a real local server: total deadline, retries with Retry-After, per-host rate limit."""

from __future__ import annotations

import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import pytest

from conftest import serving
from lookbench._util.http import (
    DeadlineExceeded,
    DeadlineTransport,
    HttpClient,
    HttpError,
    RateLimiter,
    RetryPolicy,
    retry_after_seconds,
)


class Server(ThreadingHTTPServer):
    """Answers per path: /ok, /trickle (a byte every 0.1 s), /stall (15 bytes over 1.5 s, then silence for 10 s),
    /busy (503 with Retry-After until told otherwise)."""

    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), Handler)
        self.busy_for = 0
        self.hits: list[tuple[str, float]] = []

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Clients that give up hang up mid-answer; expected here."""


class Handler(BaseHTTPRequestHandler):
    server: Server

    def log_message(self, *args: Any) -> None:
        pass

    def do_GET(self) -> None:  # noqa: N802
        self.server.hits.append((self.path, time.monotonic()))
        if self.path == "/busy" and self.server.busy_for > 0:
            self.server.busy_for -= 1
            self.send_response(503)
            self.send_header("Retry-After", "0.2")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        body = b"x" * 40
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.path in ("/trickle", "/stall"):
            for byte in body[: 15 if self.path == "/stall" else None]:
                self.wfile.write(bytes([byte]))
                self.wfile.flush()
                time.sleep(0.1)
            if self.path == "/stall":
                time.sleep(10)
        else:
            self.wfile.write(body)


@pytest.fixture
def server() -> Iterator[Server]:
    srv = Server()
    with serving(srv):
        yield srv


def _url(srv: Server, path: str) -> str:
    return f"http://127.0.0.1:{srv.server_address[1]}{path}"


def test_the_deadline_covers_the_whole_answer(server):
    client = HttpClient(deadline_s=0.5, retry=RetryPolicy(retries=2, backoff_s=0.01))
    started = time.monotonic()
    with pytest.raises(HttpError, match="deadline"):
        client.request("GET", _url(server, "/trickle"))
    assert time.monotonic() - started < 1.5
    assert len(server.hits) == 1  # a server that answers too slowly is not asked again
    assert client.request("GET", _url(server, "/ok")).content == b"x" * 40


def test_a_server_gone_silent_mid_answer_is_cut_at_the_deadline_not_a_read_timeout_later(server):
    # per-read timeouts alone would wait 2 s more after the last byte, at 1.5 s; the deadline ends it at 2 s
    with httpx.Client(transport=DeadlineTransport(2.0), timeout=30) as client:
        started = time.monotonic()
        with pytest.raises(DeadlineExceeded, match="deadline of 2 s"):
            client.get(_url(server, "/stall"))
        assert 1.9 < time.monotonic() - started < 3.0
        assert client.get(_url(server, "/ok")).content == b"x" * 40


def test_retry_after_is_honoured_and_retries_end(server):
    sleeps: list[float] = []
    client = HttpClient(deadline_s=2, retry=RetryPolicy(retries=3, backoff_s=5.0), sleep=sleeps.append)
    server.busy_for = 2
    assert client.request("GET", _url(server, "/busy")).status == 200
    assert sleeps == [0.2, 0.2]
    server.busy_for = 10
    with pytest.raises(HttpError, match=r"no answer after 4 attempts \(last: HTTP 503\)") as failed:
        client.request("GET", _url(server, "/busy"))
    assert failed.value.status == 503
    patient = HttpClient(deadline_s=2, retry=RetryPolicy(retries=3, max_wait_s=0.1), sleep=sleeps.append)
    with pytest.raises(HttpError, match="after 1 attempt "):
        patient.request("GET", _url(server, "/busy"))


def test_rate_limit_per_host_and_byte_limit(server):
    client = HttpClient(deadline_s=2, limiter=RateLimiter(0.1))
    for _ in range(3):
        client.request("GET", _url(server, "/ok"))
    sent = [t for _, t in client.requests]
    assert min(b - a for a, b in zip(sent, sent[1:], strict=False)) >= 0.099
    client.limiter.set_interval(f"127.0.0.1:{server.server_address[1]}", 0.3)
    client.request("GET", _url(server, "/ok"))
    client.request("GET", _url(server, "/ok"))
    assert client.requests[-1][1] - client.requests[-2][1] >= 0.299
    with pytest.raises(HttpError, match="exceeds the limit of 10"):
        client.request("GET", _url(server, "/ok"), max_bytes=10)


def test_retry_after_forms():
    assert retry_after_seconds("3") == 3.0 and retry_after_seconds("0.5") == 0.5
    assert retry_after_seconds("Wed, 21 Oct 2015 07:28:00 GMT", now=1445412480.0 - 10) == 10.0
    assert retry_after_seconds("soon") is None and retry_after_seconds(None) is None
