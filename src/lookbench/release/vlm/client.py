"""Chat completions with structured output through the openai SDK (any OpenAI-compatible server: vLLM, SGLang...).

The SDK sends the request and retries what may pass later (timeouts, connection errors, 408/409/429/5xx, with
exponential backoff that honours Retry-After) up to `api.retries` times. Each attempt has a total deadline of
`api.timeout_s`, body included (the SDK's own `timeout` is per read, so a server trickling its reply would hold a
worker for ever): the SDK sends through an httpx client with `lookbench._util.http.DeadlineTransport`. The reply is
checked here, not trusted: a body that is not a chat completion, or has no text content, is an InvalidReply the
caller may re-ask.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from lookbench._util.jsontext import loads
from lookbench.errors import ReleaseError
from lookbench.release.config import ApiConfig
from lookbench.release.vlm.usage import Usage

T = TypeVar("T")
R = TypeVar("R")
RETRY_STATUS = frozenset({408, 409, 429})
"""Besides 5xx: the statuses the SDK retries, and after which the endpoint counts as unavailable."""


class ApiUnavailable(ReleaseError):
    """The endpoint kept failing (timeouts, 429, 5xx) after every retry; a re-run resumes from the cache."""


class ApiRejected(ReleaseError):
    """The endpoint refused this one request (4xx other than 408/409/429), e.g. an image it cannot read."""


class InvalidReply(ValueError):
    """A 200 reply that is not a chat completion with text content."""


class _Message(BaseModel):
    model_config = ConfigDict(extra="ignore")
    content: str


class _Choice(BaseModel):
    model_config = ConfigDict(extra="ignore")
    message: _Message


class _Completion(BaseModel):
    model_config = ConfigDict(extra="ignore")
    choices: list[_Choice]
    usage: Any = None


def response_format(name: str, schema: dict[str, Any]) -> dict[str, Any]:
    """The structured-output request: answers must follow `schema`."""
    return {"type": "json_schema", "json_schema": {"name": name, "schema": schema, "strict": True}}


def user_message(text: str, *image_urls: str) -> dict[str, Any]:
    """One user turn: the instructions and the images (none for a text-only question)."""
    return {
        "role": "user",
        "content": [
            {"type": "text", "text": text},
            *({"type": "image_url", "image_url": {"url": u}} for u in image_urls),
        ],
    }


def request_body(api: ApiConfig, messages: list[dict[str, Any]], name: str, schema: dict[str, Any]) -> dict[str, Any]:
    """The chat-completions body (as sent by the SDK, and as written to batch files): temperature 0, fixed seed."""
    return {
        "model": api.model,
        "messages": messages,
        "temperature": 0,
        "seed": api.seed,
        "max_tokens": api.max_tokens,
        "response_format": response_format(name, schema),
    }


def reply_text(body: object) -> tuple[str, Any]:
    """(message content, usage block) of a decoded chat-completions body; InvalidReply if it is not one."""
    try:
        completion = _Completion.model_validate(body)
    except ValidationError as exc:
        raise InvalidReply(f"the reply is not a chat completion ({type(body).__name__})") from exc
    if not completion.choices:
        raise InvalidReply("the reply has no choices")
    return completion.choices[0].message.content, completion.usage


class ChatClient:
    """One openai SDK client per endpoint; `complete` returns the answer text or raises one of the errors above."""

    def __init__(self, api: ApiConfig, usage: Usage | None = None) -> None:
        import httpx
        from openai import OpenAI

        from lookbench._util.http import DeadlineTransport

        self.api = api
        self.usage = usage or Usage(api.price_per_million_input, api.price_per_million_output)
        key = None
        if api.api_key_env:
            key = os.environ.get(api.api_key_env)
            if not key:
                raise ReleaseError(f"environment variable {api.api_key_env} (api_key_env) is not set")
        # servers without authentication (a local vLLM) ignore the key; the SDK needs one
        http = httpx.Client(transport=DeadlineTransport(api.timeout_s), timeout=api.timeout_s, trust_env=False)
        self._client = OpenAI(
            base_url=api.endpoint,
            api_key=key or "none",
            max_retries=api.retries,
            timeout=api.timeout_s,
            # openai 1.x and 2.x take an httpx.Client; 3.x types httpx2 but also takes httpx clients (and errors)
            http_client=http,  # type: ignore[arg-type,unused-ignore]
        )

    def close(self) -> None:
        """Close the connection pool."""
        self._client.close()

    def complete(self, messages: list[dict[str, Any]], name: str, schema: dict[str, Any]) -> str:
        """The answer text of one request."""
        import openai

        body = request_body(self.api, messages, name, schema)
        try:
            raw = self._client.chat.completions.with_raw_response.create(**body)
        except openai.APIStatusError as exc:
            if exc.status_code in RETRY_STATUS or exc.status_code >= 500:
                raise self._unavailable(f"HTTP {exc.status_code}") from exc
            raise ApiRejected(f"HTTP {exc.status_code}: {exc.message[:300]}") from exc
        except openai.APIConnectionError as exc:
            cause = f" ({type(exc.__cause__).__name__}: {exc.__cause__})" if exc.__cause__ is not None else ""
            raise self._unavailable(f"{type(exc).__name__}: {exc}{cause}") from exc
        self.usage.count("retries", raw.retries_taken)
        try:
            decoded = loads(raw.http_response.content)
        except ValueError as exc:
            self.usage.add(None)
            raise InvalidReply(f"the reply is not JSON ({exc})") from exc
        self.usage.add(decoded.get("usage") if isinstance(decoded, dict) else None)
        return reply_text(decoded)[0]

    def _unavailable(self, last: str) -> ApiUnavailable:
        self.usage.count("retries", self.api.retries)
        return ApiUnavailable(f"{self.api.base_url}: no answer after {self.api.retries + 1} tries ({last})")


def run_concurrently(func: Callable[[T], R], items: Iterable[T], workers: int) -> Iterator[R]:
    """`func` over `items` with at most `workers` in flight, results in input order; the first error propagates."""
    with ThreadPoolExecutor(max_workers=workers) as pool:
        yield from pool.map(func, items)
