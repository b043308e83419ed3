"""Asking a VLM for answers under a JSON Schema: valid answers are cached, invalid ones re-asked and never kept."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from lookbench._util.jsontext import loads
from lookbench.release.config import ApiConfig
from lookbench.release.vlm.cache import AnswerCache, cache_key
from lookbench.release.vlm.client import ChatClient, InvalidReply

T = TypeVar("T")


class InvalidAnswers(ValueError):
    """Every answer of a question was invalid; the message is the last reason."""


class StructuredAsker:
    """An endpoint, its answer cache and how often an invalid answer is asked again (annotator, judge, detector)."""

    def __init__(self, api: ApiConfig, cache: AnswerCache, attempts: int = 2) -> None:
        self.api = api
        self.cache = cache
        self.attempts = attempts
        self.client = ChatClient(api)

    def key(self, prompt_version: str, schema: dict[str, Any], *asked: str) -> str:
        """The cache key of a question: endpoint, model, prompt version, schema and what is asked about."""
        return cache_key(self.api.endpoint, self.api.model, prompt_version, schema, *asked)

    def cached(self, key: str, validate: Callable[[Any], T]) -> T | None:
        """A cached answer, validated again (a cache hit is counted), or None."""
        found = self.cache.get(key, validate)
        if found is not None:
            self.client.usage.count("cache_hits")
        return found

    def store(self, key: str, text: str, validate: Callable[[Any], T]) -> T:
        """Validate an answer's text and cache it; ValueError (nothing cached) if it is not valid."""
        answer = loads(text)
        result = validate(answer)
        self.cache.put(key, answer)
        return result

    def ask(
        self,
        key: str,
        messages: list[dict[str, Any]],
        name: str,
        schema: dict[str, Any],
        validate: Callable[[Any], T],
    ) -> tuple[T, int]:
        """(validated answer, attempts used); InvalidAnswers after `attempts` invalid ones (ApiRejected passes on)."""
        problem = ""
        for attempt in range(1, self.attempts + 1):
            try:
                return self.store(key, self.client.complete(messages, name, schema), validate), attempt
            except (InvalidReply, ValueError) as exc:
                problem = str(exc)
        raise InvalidAnswers(problem)
