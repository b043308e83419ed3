"""An LLM rewords a template modification text; a rewording that loses a change, is empty or huge is not kept."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from lookbench.evaluation.composed.texts import phrase
from lookbench.release.config import ApiConfig
from lookbench.release.vlm.asker import InvalidAnswers, StructuredAsker
from lookbench.release.vlm.cache import AnswerCache
from lookbench.release.vlm.client import ApiRejected, run_concurrently, user_message
from lookbench.snapshot.composed import Change

PROMPT_VERSION = "paraphrase-v1"
MAX_CHARS = 300
"""A kept paraphrase is at most this long (the composed schema allows 4,096; a shopper's request is short)."""
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"text": {"type": "string", "minLength": 1, "maxLength": MAX_CHARS}},
    "required": ["text"],
    "additionalProperties": False,
}


@dataclass(frozen=True)
class Rewording:
    """The text kept for a query: the LLM's (`paraphrased`) or the template's, with why the LLM's was not kept."""

    text: str
    paraphrased: bool
    problem: str | None = None


def paraphrase_prompt(text: str, changes: tuple[Change, ...]) -> str:
    """Ask for one natural rewording that keeps every change."""
    wanted = "; ".join(
        f"{c.group}: " + (f"add {phrase(c.target)}" if not c.source else
                          f"remove {phrase(c.source)}" if not c.target else
                          f"{phrase(c.source)} -> {phrase(c.target)}")
        for c in changes
    )  # fmt: skip
    return (
        "A shopper looks at a fashion item and asks for a similar one with a change. Reword the request below as a "
        f"shopper would write it, in one short sentence (at most {MAX_CHARS} characters), keeping every change and "
        f'naming each new value as written.\nRequest: {text}\nChanges: {wanted}\nAnswer as JSON: {{"text": ...}}'
    )


def lost_change(text: str, changes: tuple[Change, ...]) -> str | None:
    """Why a rewording does not express the changes (a new value, or a removed one, not named), else None."""
    lowered = text.casefold()
    for change in changes:
        named = change.target or change.source
        if phrase(named).casefold() not in lowered and named.casefold() not in lowered:
            return f"drops the change {change.group}: {change.source or '-'} -> {change.target or '-'}"
    return None


def rewording_of(answer: Any, changes: tuple[Change, ...]) -> str:
    """The text of a decoded answer; ValueError if it is not `{"text": ...}` of 1 to MAX_CHARS characters or
    loses a change."""
    if not isinstance(answer, dict) or set(answer) != {"text"} or not isinstance(answer["text"], str):
        raise ValueError(f"not a paraphrase: {str(answer)[:80]!r}")
    text = " ".join(answer["text"].split())
    if not text:
        raise ValueError("empty paraphrase")
    if len(text) > MAX_CHARS:
        raise ValueError(f"paraphrase of {len(text)} characters (at most {MAX_CHARS})")
    lost = lost_change(text, changes)
    if lost:
        raise ValueError(f"paraphrase {lost}")
    return text


class Paraphraser:
    """Rewords template texts through the OpenAI-compatible client; valid rewordings cached per (text, changes)."""

    def __init__(self, api: ApiConfig, cache: AnswerCache, attempts: int = 2) -> None:
        self.api = api
        self.asker = StructuredAsker(api, cache, attempts)
        self.problems: Counter[str] = Counter()

    def _one(self, job: tuple[str, tuple[Change, ...]]) -> Rewording:
        text, changes = job
        described = repr([c.as_row() for c in changes])
        key = self.asker.key(PROMPT_VERSION, SCHEMA, text, described)
        cached = self.asker.cached(key, lambda answer: rewording_of(answer, changes))
        if cached is not None:
            return Rewording(cached, True)
        messages = [user_message(paraphrase_prompt(text, changes))]
        try:
            kept, _ = self.asker.ask(key, messages, "paraphrase", SCHEMA, lambda a: rewording_of(a, changes))
        except (ApiRejected, InvalidAnswers) as exc:
            return Rewording(text, False, str(exc) or type(exc).__name__)
        return Rewording(kept, True)

    def reword(self, jobs: list[tuple[str, tuple[Change, ...]]]) -> list[Rewording]:
        """One rewording per (template text, changes), in order; the template is kept where the LLM fails."""
        return list(run_concurrently(self._one, jobs, self.api.concurrency))

    def describe(self) -> dict[str, Any]:
        """Model, prompt version and usage."""
        return {"model": self.api.model, "prompt_version": PROMPT_VERSION, **self.asker.client.usage.summary()}
