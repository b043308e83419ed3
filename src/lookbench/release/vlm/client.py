"""Chat-completions requests with structured output, retries with backoff and usage accounting."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

import httpx

from lookbench.errors import BuildError
from lookbench.release.part2_config import ApiConfig
from lookbench.release.vlm.usage import Usage

RETRY_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504})
T = TypeVar("T")
R = TypeVar("R")


class ApiUnavailable(BuildError):
    """The endpoint kept failing (timeouts, 429, 5xx) after every retry; a re-run resumes from the cache."""


class ApiRejected(BuildError):
    """The endpoint refused this one request (4xx other than 408/409/429), e.g. an image it cannot read."""


def request_body(api: ApiConfig, messages: list[dict[str, Any]], name: str, schema: dict[str, Any]) -> dict[str, Any]:
    """A chat-completions body: temperature 0, fixed seed, the schema as `response_format`."""
    return {
        "model": api.model,
        "messages": messages,
        "temperature": 0,
        "seed": api.seed,
        "max_tokens": api.max_tokens,
        "response_format": {"type": "json_schema", "json_schema": {"name": name, "schema": schema, "strict": True}},
    }


def user_message(text: str, image_url: str) -> dict[str, Any]:
    """One user turn: the instructions and the image."""
    return {
        "role": "user",
        "content": [{"type": "text", "text": text}, {"type": "image_url", "image_url": {"url": image_url}}],
    }


def answer_text(reply: dict[str, Any]) -> str:
    """The message content of a chat-completions reply."""
    try:
        content = reply["choices"][0]["message"]["content"]
    except (KeyError, IndexError, TypeError) as exc:
        raise ValueError(f"reply has no choices[0].message.content ({exc})") from exc
    if not isinstance(content, str):
        raise ValueError("message content is not text")
    return content


class ChatClient:
    """POSTs to `{base_url}/chat/completions`; retries what may pass on a later try, raises what will not."""

    def __init__(self, api: ApiConfig, usage: Usage | None = None, sleep: Callable[[float], None] = time.sleep) -> None:
        self.api = api
        self.usage = usage or Usage(api.price_per_million_input, api.price_per_million_output)
        self._sleep = sleep
        headers = {"Content-Type": "application/json"}
        if api.api_key_env:
            key = os.environ.get(api.api_key_env)
            if not key:
                raise BuildError(f"environment variable {api.api_key_env} (api_key_env) is not set")
            headers["Authorization"] = f"Bearer {key}"
        self._http = httpx.Client(base_url=api.base_url.rstrip("/"), headers=headers, timeout=api.timeout_s)

    def close(self) -> None:
        """Close the connection pool."""
        self._http.close()

    def _wait(self, attempt: int, response: httpx.Response | None) -> float:
        after = response.headers.get("retry-after") if response is not None else None
        if after and after.replace(".", "", 1).isdigit():
            return min(float(after), 60.0)
        return self.api.backoff_s * 2**attempt

    def post(self, body: dict[str, Any]) -> dict[str, Any]:
        """The decoded reply to one body; ApiUnavailable after the retries, ApiRejected for a refused request."""
        last = ""
        for attempt in range(self.api.retries + 1):
            response: httpx.Response | None = None
            try:
                response = self._http.post("/chat/completions", json=body)
            except httpx.TransportError as exc:
                last = f"{type(exc).__name__}: {exc}"
            else:
                if response.status_code == 200:
                    try:
                        reply: dict[str, Any] = response.json()
                    except ValueError:
                        last = "200 with a body that is not JSON"
                    else:
                        self.usage.add(reply.get("usage"))
                        return reply
                elif response.status_code in RETRY_STATUS:
                    last = f"HTTP {response.status_code}"
                else:
                    raise ApiRejected(f"HTTP {response.status_code}: {response.text[:300]}")
            if attempt < self.api.retries:
                self.usage.count("retries")
                self._sleep(self._wait(attempt, response))
        raise ApiUnavailable(f"{self.api.base_url}: no answer after {self.api.retries + 1} tries ({last})")


def run_concurrently(func: Callable[[T], R], items: Iterable[T], workers: int) -> Iterator[R]:
    """`func` over `items` with at most `workers` in flight, results in input order; the first error propagates."""
    with ThreadPoolExecutor(max_workers=workers) as pool:
        yield from pool.map(func, items)
