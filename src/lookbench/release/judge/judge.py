"""The Judge Protocol and the `openai` judge: crop + attribute definition + proposed value -> verdict."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from lookbench._util.images import BadImageError
from lookbench.release.config import ApiConfig
from lookbench.release.judge.sampling import Check
from lookbench.release.vlm.asker import InvalidAnswers, StructuredAsker
from lookbench.release.vlm.cache import AnswerCache
from lookbench.release.vlm.client import ApiRejected, run_concurrently, user_message
from lookbench.release.vlm.images import data_url, prepared
from lookbench.taxonomy import Taxonomy

PROMPT_VERSION = "judge-v1"
VERDICTS = ("correct", "incorrect", "ambiguous")


@dataclass(frozen=True)
class Verdict:
    """correct / incorrect / ambiguous, or `invalid` when the judge gave no usable answer; optional better value."""

    verdict: str
    better_value: str | None = None


class Judge(Protocol):
    """Judges proposed attribute values of crops."""

    def judge(self, checks: list[tuple[Check, bytes, str]]) -> list[Verdict]:
        """One verdict per (check, crop bytes, crop sha256), in order."""
        ...

    def describe(self) -> dict[str, Any]:
        """Model, prompt version and usage."""
        ...


def judge_schema(taxonomy: Taxonomy, check: Check) -> dict[str, Any]:
    """verdict enum plus an optional better value from the same group of the category."""
    values = taxonomy.category(check.category).attributes[check.group]
    return {
        "type": "object",
        "properties": {"verdict": {"enum": list(VERDICTS)}, "better_value": {"enum": [*values, None]}},
        "required": ["verdict", "better_value"],
        "additionalProperties": False,
    }


def judge_prompt(taxonomy: Taxonomy, check: Check) -> str:
    """The attribute's definition, its alternatives and the proposed value."""
    group = taxonomy.groups[check.group]
    values = taxonomy.category(check.category).attributes[check.group]
    lines = [
        f"The image shows one garment of category '{check.category}'.",
        f"Attribute group '{check.group}': {group.description}",
        f"Proposed value: '{check.attribute}' = {group.attributes[check.attribute]}",
        "Possible values of this group for this category:",
        *[f"  - {v}: {group.attributes[v]}" for v in values],
        "Is the proposed value correct for this garment? Answer 'correct', 'incorrect' or 'ambiguous'"
        " (cannot be decided from the image); if incorrect, give the better value or null. JSON only.",
    ]
    return "\n".join(lines)


def verdict_of(answer: Any, schema: dict[str, Any]) -> Verdict:
    """A verdict from a decoded answer under its schema; ValueError if it does not follow the schema."""
    if not isinstance(answer, dict) or answer.get("verdict") not in VERDICTS:
        raise ValueError(f"not a verdict: {str(answer)[:80]!r}")
    better = answer.get("better_value")
    if better not in schema["properties"]["better_value"]["enum"]:
        raise ValueError(f"better_value {str(better)[:40]!r} is not a value of the group")
    return Verdict(answer["verdict"], better)


class OpenAIJudge:
    """A different model (and prompt) than the annotator, on the same client; valid answers cached per check."""

    def __init__(self, api: ApiConfig, taxonomy: Taxonomy, cache: AnswerCache, attempts: int = 2) -> None:
        self.api = api
        self.taxonomy = taxonomy
        self.asker = StructuredAsker(api, cache, attempts)

    def _one(self, job: tuple[Check, bytes, str]) -> Verdict:
        check, image, sha = job
        schema = judge_schema(self.taxonomy, check)
        key = self.asker.key(PROMPT_VERSION, schema, sha, check.attribute)
        cached = self.asker.cached(key, lambda answer: verdict_of(answer, schema))
        if cached is not None:
            return cached
        try:
            jpeg, _ = prepared(image, self.api.max_side)
            messages = [user_message(judge_prompt(self.taxonomy, check), data_url(jpeg))]
            return self.asker.ask(key, messages, "verdict", schema, lambda answer: verdict_of(answer, schema))[0]
        except (BadImageError, ApiRejected, InvalidAnswers):
            return Verdict("invalid")

    def judge(self, checks: list[tuple[Check, bytes, str]]) -> list[Verdict]:
        """Verdicts in order, `api.concurrency` at a time."""
        return list(run_concurrently(self._one, checks, self.api.concurrency))

    def describe(self) -> dict[str, Any]:
        """Model, prompt version and usage."""
        return {"model": self.api.model, "prompt_version": PROMPT_VERSION, **self.asker.client.usage.summary()}
