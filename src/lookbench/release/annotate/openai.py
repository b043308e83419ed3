"""`openai` annotator: a VLM behind an OpenAI-compatible API, schema-constrained, validated, cached."""

from __future__ import annotations

import json
from typing import Any

from lookbench.release.annotate.base import InvalidAnswer, Item, Outcome, labels_from_answer
from lookbench.release.annotate.prompt import PROMPT_VERSION, annotation_prompt
from lookbench.release.part2_config import ApiConfig
from lookbench.release.vlm.cache import AnswerCache, cache_key, schema_hash
from lookbench.release.vlm.client import (
    ApiRejected,
    ChatClient,
    answer_text,
    request_body,
    run_concurrently,
    user_message,
)
from lookbench.release.vlm.images import data_url, prepared
from lookbench.taxonomy import Taxonomy, category_json_schema


class OpenAIAnnotator:
    """Asks once per crop (re-asks an invalid answer up to `attempts` times); every outcome is cached at once."""

    name = "openai"

    def __init__(self, api: ApiConfig, taxonomy: Taxonomy, cache: AnswerCache, attempts: int = 2) -> None:
        self.api = api
        self.taxonomy = taxonomy
        self.cache = cache
        self.attempts = attempts
        self.client = ChatClient(api)

    def key(self, item: Item) -> str:
        """Cache key: image hash + model + prompt version + schema hash."""
        schema = category_json_schema(item.category, self.taxonomy)
        return cache_key(item.image_sha256, self.api.model, PROMPT_VERSION, schema_hash(schema))

    def body(self, item: Item) -> dict[str, Any]:
        """The chat-completions request for one crop."""
        jpeg, _ = prepared(item.image, self.api.max_side)
        message = user_message(annotation_prompt(self.taxonomy, item.category), data_url(jpeg))
        schema = category_json_schema(item.category, self.taxonomy)
        return request_body(self.api, [message], "garment_attributes", schema)

    def parse(self, item: Item, reply: dict[str, Any]) -> tuple[str, list[str]]:
        """Labels from a reply, or InvalidAnswer (malformed JSON included)."""
        try:
            answer = json.loads(answer_text(reply))
        except ValueError as exc:
            raise InvalidAnswer(f"not JSON: {exc}") from exc
        return labels_from_answer(self.taxonomy, item.category, answer)

    def _one(self, item: Item) -> Outcome:
        if item.category not in self.taxonomy.categories:
            return Outcome(None, flag=f"category {item.category!r} is not in the taxonomy")
        key = self.key(item)
        cached = self.cache.get(key)
        if cached is not None:
            self.client.usage.count("cache_hits")
            return Outcome(cached["main_attribute"], cached["other_attributes"], cached["flag"], 0, True)
        try:
            body = self.body(item)
        except (OSError, ValueError) as exc:
            return Outcome(None, flag=f"unreadable image ({exc})")
        problem = ""
        for attempt in range(1, self.attempts + 1):
            try:
                main, others = self.parse(item, self.client.post(body))
            except ApiRejected as exc:
                return Outcome(None, flag=f"rejected by the server: {exc}", attempts=attempt)
            except InvalidAnswer as exc:
                problem = str(exc)
                continue
            outcome = Outcome(main, others, attempts=attempt)
            break
        else:
            outcome = Outcome(None, flag=f"invalid after {self.attempts} answers: {problem}", attempts=self.attempts)
        self.cache.put(key, outcome.to_json())
        return outcome

    def annotate(self, items: list[Item]) -> list[Outcome]:
        """Outcomes in item order, `api.concurrency` requests at a time; identical crops are asked once."""
        first: dict[tuple[str, str], Item] = {}
        for item in items:
            first.setdefault((item.image_sha256, item.category), item)
        unique = list(first.values())
        answers = dict(zip(first, run_concurrently(self._one, unique, self.api.concurrency), strict=True))
        return [answers[(item.image_sha256, item.category)] for item in items]

    def describe(self) -> dict[str, Any]:
        """Backend, model, prompt version and usage."""
        return {
            "backend": self.name,
            "model": self.api.model,
            "prompt_version": PROMPT_VERSION,
            **self.client.usage.summary(),
        }
