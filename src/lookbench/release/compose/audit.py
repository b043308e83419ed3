"""The composed audit: a judge sees reference, target and text of a stratified sample and says whether the text
describes the change and whether the target is right; per stratum rates with Wilson intervals."""

from __future__ import annotations

import zlib
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from lookbench._util.images import BadImageError
from lookbench.release.config import ApiConfig
from lookbench.release.judge.stats import wilson
from lookbench.release.vlm.asker import InvalidAnswers, StructuredAsker
from lookbench.release.vlm.cache import AnswerCache
from lookbench.release.vlm.client import ApiRejected, run_concurrently, user_message
from lookbench.release.vlm.images import data_url, prepared
from lookbench.snapshot.composed import Change

PROMPT_VERSION = "composed-judge-v1"
ANSWERS = ("yes", "no", "unsure")
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"describes_change": {"enum": list(ANSWERS)}, "target_right": {"enum": list(ANSWERS)}},
    "required": ["describes_change", "target_right"],
    "additionalProperties": False,
}


@dataclass(frozen=True)
class AuditJob:
    """One sampled query: its stratum, text, changes and the two images (bytes and sha256)."""

    stratum: str
    text: str
    changes: tuple[Change, ...]
    reference: bytes
    reference_sha256: str
    target: bytes
    target_sha256: str


@dataclass(frozen=True)
class ComposedVerdict:
    """yes / no / unsure for each question, or `invalid` for both when the judge gave no usable answer."""

    describes_change: str
    target_right: str


def stratum_of(changes: tuple[Change, ...]) -> str:
    """`colour`, `length + colour` (two changes, in order): the audit's strata."""
    return " + ".join(c.group for c in changes)


def stratified(keys: list[tuple[str, str]], per_stratum: int, seed: int) -> list[int]:
    """Indices of up to `per_stratum` queries per stratum, chosen by a seeded hash of each query's id; `keys` are
    (stratum, query id)."""
    strata: dict[str, list[int]] = defaultdict(list)
    for index, (stratum, _) in enumerate(keys):
        strata[stratum].append(index)
    chosen: list[int] = []
    for stratum in sorted(strata):
        order = sorted(strata[stratum], key=lambda i: zlib.crc32(f"{seed}\0{keys[i][1]}".encode()))
        chosen += sorted(order[:per_stratum])
    return chosen


def audit_prompt(job: AuditJob) -> str:
    """The two images' roles, the text and the structured change."""
    changes = "; ".join(f"{c.group}: {c.source or '(none)'} -> {c.target or '(none)'}" for c in job.changes)
    return (
        "The first image is a reference fashion item, the second a proposed target. A shopper wrote: "
        f"'{job.text}'. The intended change is: {changes}.\n"
        "describes_change: does the text ask for exactly this change? target_right: is the second image the "
        "reference's kind of item, changed as the text asks and otherwise alike? Answer yes, no or unsure "
        "(cannot be decided from the images). JSON only."
    )


def verdict_of(answer: Any) -> ComposedVerdict:
    """A verdict from a decoded answer; ValueError if it does not follow the schema."""
    if not isinstance(answer, dict) or set(answer) != {"describes_change", "target_right"}:
        raise ValueError(f"not a composed verdict: {str(answer)[:80]!r}")
    if answer["describes_change"] not in ANSWERS or answer["target_right"] not in ANSWERS:
        raise ValueError(f"answers outside {ANSWERS}: {str(answer)[:80]!r}")
    return ComposedVerdict(answer["describes_change"], answer["target_right"])


class ComposedJudge:
    """The judge's endpoint on the shared client; valid verdicts cached per (reference, target, text)."""

    def __init__(self, api: ApiConfig, cache: AnswerCache, attempts: int = 2) -> None:
        self.api = api
        self.asker = StructuredAsker(api, cache, attempts)

    def _one(self, job: AuditJob) -> ComposedVerdict:
        key = self.asker.key(PROMPT_VERSION, SCHEMA, job.reference_sha256, job.target_sha256, job.text)
        cached = self.asker.cached(key, verdict_of)
        if cached is not None:
            return cached
        try:
            images = [data_url(prepared(image, self.api.max_side)[0]) for image in (job.reference, job.target)]
            messages = [user_message(audit_prompt(job), *images)]
            return self.asker.ask(key, messages, "composed_verdict", SCHEMA, verdict_of)[0]
        except (BadImageError, ApiRejected, InvalidAnswers):
            return ComposedVerdict("invalid", "invalid")

    def judge(self, jobs: list[AuditJob]) -> list[ComposedVerdict]:
        """Verdicts in order, `api.concurrency` at a time."""
        return list(run_concurrently(self._one, jobs, self.api.concurrency))

    def describe(self) -> dict[str, Any]:
        """Model, prompt version and usage."""
        return {"model": self.api.model, "prompt_version": PROMPT_VERSION, **self.asker.client.usage.summary()}


def _rate(answers: list[str]) -> dict[str, Any]:
    """Share of `yes` among the decided answers (yes or no), with its Wilson 95% interval."""
    decided = [a for a in answers if a in ("yes", "no")]
    yes = decided.count("yes")
    low, high = wilson(yes, len(decided))
    accuracy = yes / len(decided) if decided else None
    return {"n": len(decided), "correct": yes, "accuracy": accuracy, "wilson95": [low, high]}


def audit_table(jobs: list[AuditJob], verdicts: list[ComposedVerdict]) -> dict[str, Any]:
    """Overall and per-stratum rates of 'the text describes the change' and 'the target is right'."""
    rows: dict[str, list[ComposedVerdict]] = defaultdict(list)
    for job, verdict in zip(jobs, verdicts, strict=True):
        rows[job.stratum].append(verdict)

    def rates(found: list[ComposedVerdict]) -> dict[str, Any]:
        return {
            "judged": len(found),
            "text": _rate([v.describes_change for v in found]),
            "target": _rate([v.target_right for v in found]),
            "unsure": sum("unsure" in (v.describes_change, v.target_right) for v in found),
            "invalid": sum(v.describes_change == "invalid" for v in found),
        }

    return {"overall": rates(verdicts), "strata": {s: rates(rows[s]) for s in sorted(rows)}}
