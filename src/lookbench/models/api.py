"""`api:<url>?timeout=..&retries=..&backoff=..&rps=..&max_batch=..&id=..&revision=..`: an HTTP embedding service.

Protocol (JSON over HTTP POST to the URL):
  request  `{"images": ["<base64 of the encoded image bytes>", ...]}`
  response `{"embeddings": [[float, ...], ...]}` (one vector per image, same order; optional "model", "revision")
A bearer token is sent when `LOOKBENCH_API_KEY` is set. Requests go through `lookbench._util.http`: 408, 425, 429
and 5xx answers, timeouts and connection errors are retried with exponential backoff (honouring Retry-After); other 4xx
answers fail at once; `timeout` is the total time one attempt may take.
"""

from __future__ import annotations

import base64
import os
from typing import Any

import numpy as np

from lookbench._util.jsontext import loads
from lookbench.errors import EmbeddingError, LookBenchError
from lookbench.models.embed_options import EmbedOptions
from lookbench.models.encoder import EncoderBase, InputKind
from lookbench.models.options import split_options
from lookbench.models.preprocess import Preprocess
from lookbench.models.spec import ModelSpec

OPTIONS = {"timeout", "retries", "rps", "backoff", "max_batch", "id", "revision"}


class ApiEncoder(EncoderBase):
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
            from lookbench._util.http import HttpClient, RateLimiter, RetryPolicy
        except ImportError as exc:
            raise EmbeddingError("api models need httpx and tenacity: pip install 'lookbench[api]'") from exc
        self.url = url
        self.model_id = model_id or f"api:{url}"
        self.revision = revision
        self.max_batch = max_batch
        key = os.environ.get("LOOKBENCH_API_KEY")
        self.http = HttpClient(
            deadline_s=timeout,
            retry=RetryPolicy(retries=retries, backoff_s=backoff),
            limiter=RateLimiter.per_second(rps),
            headers={"Authorization": f"Bearer {key}"} if key else {},
        )
        self.server_model: str | None = None

    @property
    def requests(self) -> int:
        """Requests sent so far, retries included."""
        return len(self.http.requests)

    def _post(self, payload: dict[str, Any]) -> Any:
        from lookbench._util.http import HttpError

        try:
            response = self.http.request("POST", self.url, json=payload)
        except HttpError as exc:
            raise EmbeddingError(str(exc)) from exc
        if response.status >= 400:
            raise EmbeddingError(
                f"{self.url}: HTTP {response.status}: {response.content[:200].decode(errors='replace')}"
            )
        try:
            return loads(response.content)
        except (ValueError, RecursionError) as exc:
            raise EmbeddingError(f"{self.url}: response is not JSON ({exc})") from exc

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
        except (ValueError, TypeError) as exc:
            raise EmbeddingError(f"{self.url}: embeddings are not a rectangular list of numbers ({exc})") from exc

    def describe(self) -> dict[str, Any]:
        """URL, requests made and the model name the server reported."""
        return {"kind": "api", "url": self.url, "requests": self.requests, "server_model": self.server_model}


def load(spec: ModelSpec, options: EmbedOptions) -> ApiEncoder:
    """Build an ApiEncoder from `url?options`."""
    argument = spec.argument
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
