"""The api: adapter against a real HTTP server on 127.0.0.1 that speaks the documented protocol."""

from __future__ import annotations

import base64
import io
import json
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image

from conftest import serving
from embedding_helpers import studio_snapshot
from lookbench._util.http import RateLimiter
from lookbench.errors import EmbeddingError
from lookbench.models.embed_options import EmbedOptions
from lookbench.models.registry import resolve_model
from lookbench.snapshot.reader import open_snapshot

pytest.importorskip("httpx")
SUBSET = "real_studio_flat"


class EmbeddingServer(ThreadingHTTPServer):
    """Embeds each image as its mean RGB plus a constant; can fail the first requests or stall."""

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), Handler)
        self.fail_first = 0
        self.status = 503
        self.delay = 0.0
        self.requests: list[dict[str, Any]] = []
        self.auth: list[str | None] = []

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Clients that time out hang up mid-answer; that is expected here."""


class Handler(BaseHTTPRequestHandler):
    server: EmbeddingServer

    def log_message(self, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.requests.append(body)
        self.server.auth.append(self.headers.get("Authorization"))
        time.sleep(self.server.delay)
        if len(self.server.requests) <= self.server.fail_first:
            self.send_response(self.server.status)
            self.send_header("Retry-After", "0")
            self.end_headers()
            self.wfile.write(b"busy")
            return
        vectors = []
        for item in body["images"]:
            image = Image.open(io.BytesIO(base64.b64decode(item))).convert("RGB")
            vectors.append([*np.asarray(image, dtype=np.float64).mean(axis=(0, 1)).tolist(), 1.0])
        payload = json.dumps({"embeddings": vectors, "model": "mean-rgb"}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


@pytest.fixture
def server() -> Iterator[EmbeddingServer]:
    srv = EmbeddingServer()
    with serving(srv):
        yield srv


def _url(srv: EmbeddingServer) -> str:
    return f"http://127.0.0.1:{srv.server_address[1]}/embed"


def _options(tmp_path: Path) -> EmbedOptions:
    return EmbedOptions(cache_dir=tmp_path / "cache", batch_size=4, progress=False)


def test_api_embeds_retries_and_caches(
    server: EmbeddingServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LOOKBENCH_API_KEY", "secret")
    server.fail_first = 2
    snap = open_snapshot(studio_snapshot(tmp_path, gallery=6))
    spec = f"api:{_url(server)}?backoff=0.01&revision=v1"
    provider = resolve_model(spec, _options(tmp_path))
    out = provider.embed_split(snap, SUBSET, "gallery")
    assert out.shape == (6, 4) and np.allclose(out[:, 3], 1.0)
    assert len(server.requests) == 2 + 2  # two refused, then batches of 4 and 2
    assert [len(r["images"]) for r in server.requests[2:]] == [4, 2]
    assert server.auth[-1] == "Bearer secret"
    assert provider.describe().details["server_model"] == "mean-rgb"
    again = resolve_model(spec, _options(tmp_path)).embed_split(snap, SUBSET, "gallery")
    assert np.array_equal(again, out) and len(server.requests) == 4


def test_api_max_batch_splits_requests(server: EmbeddingServer, tmp_path: Path) -> None:
    snap = open_snapshot(studio_snapshot(tmp_path, gallery=5))
    out = resolve_model(f"api:{_url(server)}?max_batch=2", _options(tmp_path)).embed_split(snap, SUBSET, "gallery")
    assert out.shape == (5, 4) and [len(r["images"]) for r in server.requests] == [2, 2, 1]


def test_api_gives_up_after_retries(server: EmbeddingServer, tmp_path: Path) -> None:
    server.fail_first = 100
    snap = open_snapshot(studio_snapshot(tmp_path, gallery=2))
    provider = resolve_model(f"api:{_url(server)}?backoff=0.01&retries=2", _options(tmp_path))
    with pytest.raises(EmbeddingError, match="no answer after 3 attempts .*HTTP 503"):
        provider.embed_split(snap, SUBSET, "gallery")
    assert len(server.requests) == 3


def test_api_client_error_fails_at_once(server: EmbeddingServer, tmp_path: Path) -> None:
    server.fail_first, server.status = 100, 401
    snap = open_snapshot(studio_snapshot(tmp_path, gallery=2))
    with pytest.raises(EmbeddingError, match="HTTP 401"):
        resolve_model(f"api:{_url(server)}", _options(tmp_path)).embed_split(snap, SUBSET, "gallery")
    assert len(server.requests) == 1


def test_api_timeout(server: EmbeddingServer, tmp_path: Path) -> None:
    server.delay = 1.0
    snap = open_snapshot(studio_snapshot(tmp_path, gallery=1))
    provider = resolve_model(f"api:{_url(server)}?timeout=0.2&retries=1&backoff=0.01", _options(tmp_path))
    started = time.monotonic()
    with pytest.raises(EmbeddingError, match="ReadTimeout"):
        provider.embed_split(snap, SUBSET, "gallery")
    assert time.monotonic() - started < 1.5


def test_rate_limiter_spaces_requests() -> None:
    limiter = RateLimiter.per_second(50)
    started = time.monotonic()
    for _ in range(6):
        limiter.wait()
    assert time.monotonic() - started >= 5 / 50 - 0.01
