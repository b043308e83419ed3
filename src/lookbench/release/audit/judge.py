"""The Judge Protocol and the `openai` judge: crop + attribute definition + proposed value -> verdict."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Protocol

from lookbench.release.audit.sampling import Check
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


class OpenAIJudge:
    """A different model (and prompt) than the annotator, on the same client; answers cached per check."""

    def __init__(self, api: ApiConfig, taxonomy: Taxonomy, cache: AnswerCache) -> None:
        self.api = api
        self.taxonomy = taxonomy
        self.cache = cache
        self.client = ChatClient(api)

    def _one(self, job: tuple[Check, bytes, str]) -> Verdict:
        check, image, sha = job
        schema = judge_schema(self.taxonomy, check)
        key = cache_key(sha, self.api.model, PROMPT_VERSION, schema_hash(schema), check.attribute)
        cached = self.cache.get(key)
        if cached is not None:
            self.client.usage.count("cache_hits")
            return Verdict(cached["verdict"], cached["better_value"])
        jpeg, _ = prepared(image, self.api.max_side)
        body = request_body(
            self.api, [user_message(judge_prompt(self.taxonomy, check), data_url(jpeg))], "verdict", schema
        )
        verdict = Verdict("invalid")
        for _ in range(2):
            try:
                answer = json.loads(answer_text(self.client.post(body)))
            except ApiRejected:
                return verdict
            except ValueError:
                continue
            better = answer.get("better_value") if isinstance(answer, dict) else None
            if isinstance(answer, dict) and answer.get("verdict") in VERDICTS:
                values = schema["properties"]["better_value"]["enum"]
                verdict = Verdict(answer["verdict"], better if better in values else None)
                break
        self.cache.put(key, {"verdict": verdict.verdict, "better_value": verdict.better_value})
        return verdict

    def judge(self, checks: list[tuple[Check, bytes, str]]) -> list[Verdict]:
        """Verdicts in order, `api.concurrency` at a time."""
        return list(run_concurrently(self._one, checks, self.api.concurrency))

    def describe(self) -> dict[str, Any]:
        """Model, prompt version and usage."""
        return {"model": self.api.model, "prompt_version": PROMPT_VERSION, **self.client.usage.summary()}
