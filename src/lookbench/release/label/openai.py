"""`openai` annotator: a VLM behind an OpenAI-compatible API, schema-constrained, validated, cached when valid."""

from __future__ import annotations

from typing import Any

from lookbench._util.images import BadImageError
from lookbench.release.config import ApiConfig
from lookbench.release.label.base import Item, Outcome, labels_from_answer
from lookbench.release.label.prompt import PROMPT_VERSION, annotation_prompt
from lookbench.release.vlm.asker import InvalidAnswers, StructuredAsker
from lookbench.release.vlm.cache import AnswerCache
from lookbench.release.vlm.client import ApiRejected, request_body, run_concurrently, user_message
from lookbench.release.vlm.images import data_url, prepared
from lookbench.taxonomy import Taxonomy, category_json_schema

SCHEMA_NAME = "garment_attributes"


class OpenAIAnnotator:
    """Asks once per crop (re-asks an invalid answer up to `attempts` times); valid answers are cached at once."""

    name = "openai"

    def __init__(self, api: ApiConfig, taxonomy: Taxonomy, cache: AnswerCache, attempts: int = 2) -> None:
        self.api = api
        self.taxonomy = taxonomy
        self.asker = StructuredAsker(api, cache, attempts)

    def schema(self, item: Item) -> dict[str, Any]:
        """The category's answer schema."""
        return category_json_schema(item.category, self.taxonomy)

    def key(self, item: Item) -> str:
        """Cache key: endpoint + model + prompt version + schema hash + image hash."""
        return self.asker.key(PROMPT_VERSION, self.schema(item), item.image_sha256)

    def messages(self, item: Item) -> list[dict[str, Any]]:
        """The prompt and the downscaled crop (BadImageError if it does not decode)."""
        jpeg, _ = prepared(item.image, self.api.max_side)
        return [user_message(annotation_prompt(self.taxonomy, item.category), data_url(jpeg))]

    def body(self, item: Item) -> dict[str, Any]:
        """The chat-completions request for one crop (as written to batch files)."""
        return request_body(self.api, self.messages(item), SCHEMA_NAME, self.schema(item))

    def labels(self, item: Item, answer: Any) -> tuple[str, list[str]]:
        """Labels from a decoded answer, or InvalidAnswer."""
        return labels_from_answer(self.taxonomy, item.category, answer)

    def cached(self, item: Item) -> tuple[str, list[str]] | None:
        """The cached labels of an item, validated again, or None."""
        return self.asker.cached(self.key(item), lambda answer: self.labels(item, answer))

    def store(self, item: Item, text: str) -> tuple[str, list[str]]:
        """Validate an answer's text (a batch output's) and cache it; ValueError if it is not valid."""
        return self.asker.store(self.key(item), text, lambda answer: self.labels(item, answer))

    def _one(self, item: Item) -> Outcome:
        if item.category not in self.taxonomy.categories:
            return Outcome(None, flag=f"category {item.category!r} is not in the taxonomy")
        found = self.cached(item)
        if found is not None:
            return Outcome(found[0], found[1], attempts=0, cached=True)
        try:
            messages = self.messages(item)
        except BadImageError as exc:
            return Outcome(None, flag=f"unreadable image ({exc})")
        try:
            (main, others), attempts = self.asker.ask(
                self.key(item), messages, SCHEMA_NAME, self.schema(item), lambda answer: self.labels(item, answer)
            )
        except ApiRejected as exc:
            return Outcome(None, flag=f"rejected by the server: {exc}", attempts=1)
        except InvalidAnswers as exc:
            attempts = self.asker.attempts
            return Outcome(None, flag=f"invalid after {attempts} answers: {exc}", attempts=attempts)
        return Outcome(main, others, attempts=attempts)

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
            **self.asker.client.usage.summary(),
        }
