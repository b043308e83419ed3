"""OpenAI batch files: write the requests for `vllm run-batch`, import its outputs into the answer cache."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from lookbench._util.atomic import atomic_path
from lookbench._util.images import BadImageError
from lookbench._util.jsontext import loads
from lookbench.release.label.base import Item
from lookbench.release.label.openai import OpenAIAnnotator
from lookbench.release.vlm.client import reply_text

BATCH_FIELDS = frozenset({"custom_id", "method", "url", "body"})


def is_batch_input(path: Path) -> bool:
    """Whether `path` reads as a batch input `write_batch` wrote: empty, or a first line of its four fields."""
    try:
        with path.open(encoding="utf-8") as handle:
            first = handle.readline()
        record = json.loads(first) if first.strip() else {}
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return False
    return isinstance(record, dict) and (not record or set(record) == BATCH_FIELDS)


def write_batch(annotator: OpenAIAnnotator, items: list[Item], path: Path) -> int:
    """One `{custom_id, method, url, body}` line per uncached item of a known category; returns the count."""
    seen: set[str] = set()
    with atomic_path(path) as tmp, tmp.open("w", encoding="utf-8") as out:
        for item in items:
            if item.category not in annotator.taxonomy.categories:
                continue
            key = annotator.key(item)
            if key in seen or annotator.cached(item) is not None:
                continue
            try:
                body = annotator.body(item)
            except BadImageError:
                continue
            seen.add(key)
            out.write(json.dumps({"custom_id": key, "method": "POST", "url": "/v1/chat/completions", "body": body}))
            out.write("\n")
    return len(seen)


def import_batch(annotator: OpenAIAnnotator, items: list[Item], path: Path) -> dict[str, int]:
    """Validate each output line and cache it under its custom_id; invalid or failed lines stay uncached."""
    by_key = {annotator.key(i): i for i in items if i.category in annotator.taxonomy.categories}
    counts = {"imported": 0, "invalid": 0, "failed": 0, "unknown": 0}
    for text in path.read_text(encoding="utf-8").splitlines():
        if not text.strip():
            continue
        try:
            line: Any = loads(text)
        except ValueError:
            counts["invalid"] += 1
            continue
        if not isinstance(line, dict):
            counts["invalid"] += 1
            continue
        item = by_key.get(str(line.get("custom_id")))
        raw_response = line.get("response")
        response: dict[str, Any] = raw_response if isinstance(raw_response, dict) else {}
        if item is None:
            counts["unknown"] += 1
            continue
        if line.get("error") or response.get("status_code", 200) != 200:
            counts["failed"] += 1
            continue
        try:
            content, usage = reply_text(response.get("body"))
            annotator.store(item, content)
        except ValueError:
            counts["invalid"] += 1
            continue
        annotator.asker.client.usage.add(usage)
        counts["imported"] += 1
    return counts
