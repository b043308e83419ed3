"""`api:<url>?timeout=..&retries=..&backoff=..&rps=..&max_batch=..&id=..&revision=..`: an HTTP embedding service.

Protocol (JSON over HTTP POST to the URL):
  request  `{"images": ["<base64 of the encoded image bytes>", ...]}`
  response `{"embeddings": [[float, ...], ...]}` (one vector per image, same order; optional "model", "revision")
A bearer token is sent when `LOOKBENCH_API_KEY` is set. 429 and 5xx answers and connection errors are retried
with exponential backoff (honouring Retry-After); other 4xx answers fail at once.
"""

from __future__ import annotations

import base64
import os
import threading
import time
from typing import Any

import numpy as np

from lookbench.embeddings.encoder import InputKind
from lookbench.embeddings.mapper import Preprocess
from lookbench.errors import EmbeddingError, LookBenchError
from lookbench.models.options import split_options

OPTIONS = {"timeout", "retries", "rps", "backoff", "max_batch", "id", "revision"}
RETRY_STATUS = {408, 425, 429, 500, 502, 503, 504}


class RateLimiter:
    """At most `rps` requests per second (0 = unlimited)."""

    def __init__(self, rps: float) -> None:
        self.interval = 1.0 / rps if rps > 0 else 0.0
        self._next = 0.0
        self._lock = threading.Lock()

    def wait(self) -> None:
        """Sleep until the next request may go."""
        with self._lock:
            now = time.monotonic()
            delay = self._next - now
            self._next = max(now, self._next) + self.interval
        if delay > 0:
            time.sleep(delay)


class ApiEncoder:
    """Sends encoded image bytes to an embedding service; the service does its own preprocessing."""

    input_kind: InputKind = "bytes"
    preprocess: Preprocess | None = None

    def __init__(
        self,
        url: str,
        timeout: float = 60.0,
        retries: int = 4,
        rps: float = 0.0,
        backoff: float = 1.0,
        model_id: str | None = None,
        revision: str = "unversioned",
        max_batch: int = 0,
    ) -> None:
        try:
            import httpx
        except ImportError as exc:
            raise EmbeddingError("api models need httpx: pip install 'lookbench[api]'") from exc
        self.url = url
        self.model_id = model_id or f"api:{url}"
        self.revision = revision
        self.retries = retries
        self.max_batch = max_batch
        self.backoff = backoff
        self.limiter = RateLimiter(rps)
        headers = (
            {"Authorization": f"Bearer {os.environ['LOOKBENCH_API_KEY']}"}
            if os.environ.get("LOOKBENCH_API_KEY")
            else {}
        )
        self.client = httpx.Client(timeout=timeout, headers=headers)
        self._httpx = httpx
        self.requests = 0
        self.server_model: str | None = None

    def _post(self, payload: dict[str, Any]) -> Any:
        httpx = self._httpx
        last = ""
        for attempt in range(self.retries + 1):
            if attempt:
                time.sleep(self.backoff * 2 ** (attempt - 1))
            self.limiter.wait()
            self.requests += 1
            try:
                response = self.client.post(self.url, json=payload)
            except httpx.TransportError as exc:
                last = f"{type(exc).__name__}: {exc}"
                continue
            if response.status_code in RETRY_STATUS:
                last = f"HTTP {response.status_code}"
                retry_after = response.headers.get("Retry-After", "")
                if retry_after.replace(".", "", 1).isdigit():
                    time.sleep(min(float(retry_after), 60.0))
                continue
            if response.status_code >= 400:
                raise EmbeddingError(f"{self.url}: HTTP {response.status_code}: {response.text[:200]}")
            try:
                return response.json()
            except ValueError as exc:
                raise EmbeddingError(f"{self.url}: response is not JSON ({exc})") from exc
        raise EmbeddingError(f"{self.url}: no answer after {self.retries + 1} attempts (last: {last})")

    def encode(self, batch: list[bytes]) -> np.ndarray:
        """POST the batch (in requests of at most `max_batch` images) and return its vectors."""
        size = self.max_batch if self.max_batch > 0 else max(1, len(batch))
        parts = [self._request(batch[i : i + size]) for i in range(0, len(batch), size)]
        return np.concatenate(parts) if parts else np.zeros((0, 0), np.float32)

    def _request(self, batch: list[bytes]) -> np.ndarray:
        body = self._post({"images": [base64.b64encode(data).decode("ascii") for data in batch]})
        vectors = body.get("embeddings") if isinstance(body, dict) else None
        if not isinstance(vectors, list) or len(vectors) != len(batch):
            got = len(vectors) if isinstance(vectors, list) else type(vectors).__name__
            raise EmbeddingError(f"{self.url}: expected 'embeddings' with {len(batch)} vectors, got {got}")
        self.server_model = body.get("model", self.server_model)
        try:
            return np.asarray(vectors, dtype=np.float32)
        except ValueError as exc:
            raise EmbeddingError(f"{self.url}: embeddings are not a rectangular list of numbers ({exc})") from exc

    def describe(self) -> dict[str, Any]:
        """URL, requests made and the model name the server reported."""
        return {"kind": "api", "url": self.url, "requests": self.requests, "server_model": self.server_model}


def load_api(argument: str) -> ApiEncoder:
    """Build an ApiEncoder from `url?options`."""
    url, opts = split_options(argument, OPTIONS)
    if not url.startswith(("http://", "https://")):
        raise LookBenchError(f"api model needs an http(s) URL, got {url!r}")
    try:
        return ApiEncoder(
            url,
            timeout=float(opts.get("timeout", 60)),
            retries=int(opts.get("retries", 4)),
            rps=float(opts.get("rps", 0)),
            backoff=float(opts.get("backoff", 1.0)),
            model_id=opts.get("id"),
            revision=opts.get("revision", "unversioned"),
            max_batch=int(opts.get("max_batch", 0)),
        )
    except ValueError as exc:
        raise LookBenchError(f"bad api options in {argument!r}: {exc}") from exc
