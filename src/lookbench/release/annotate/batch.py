"""OpenAI batch files: write the requests for `vllm run-batch`, import its outputs into the answer cache."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from lookbench.atomic import atomic_path
from lookbench.release.annotate.base import InvalidAnswer, Item, Outcome
from lookbench.release.annotate.openai import OpenAIAnnotator


def write_batch(annotator: OpenAIAnnotator, items: list[Item], path: Path) -> int:
    """One `{custom_id, method, url, body}` line per uncached item of a known category; returns the count."""
    seen: set[str] = set()
    with atomic_path(path) as tmp, tmp.open("w", encoding="utf-8") as out:
        for item in items:
            if item.category not in annotator.taxonomy.categories:
                continue
            key = annotator.key(item)
            if key in seen or annotator.cache.get(key) is not None:
                continue
            seen.add(key)
            line = {"custom_id": key, "method": "POST", "url": "/v1/chat/completions", "body": annotator.body(item)}
            out.write(json.dumps(line) + "\n")
    return len(seen)


def import_batch(annotator: OpenAIAnnotator, items: list[Item], path: Path) -> dict[str, int]:
    """Validate each output line and cache it under its custom_id; invalid or failed lines stay uncached."""
    by_key = {annotator.key(i): i for i in items if i.category in annotator.taxonomy.categories}
    counts = {"imported": 0, "invalid": 0, "failed": 0, "unknown": 0}
    for text in path.read_text(encoding="utf-8").splitlines():
        if not text.strip():
            continue
        line: dict[str, Any] = json.loads(text)
        item = by_key.get(str(line.get("custom_id")))
        response = line.get("response") or {}
        if item is None:
            counts["unknown"] += 1
            continue
        if line.get("error") or response.get("status_code", 200) != 200:
            counts["failed"] += 1
            continue
        try:
            main, others = annotator.parse(item, response.get("body") or {})
        except InvalidAnswer:
            counts["invalid"] += 1
            continue
        annotator.client.usage.add((response.get("body") or {}).get("usage"))
        annotator.cache.put(str(line["custom_id"]), Outcome(main, others, attempts=1).to_json())
        counts["imported"] += 1
    return counts
