"""A file-per-answer cache, keyed by image hash, model, prompt version and schema hash."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from lookbench.atomic import write_text_atomic


def cache_key(*parts: str) -> str:
    """sha256 of the parts, NUL-separated."""
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()


def schema_hash(schema: dict[str, Any]) -> str:
    """sha256 of a JSON Schema's canonical form."""
    return hashlib.sha256(json.dumps(schema, sort_keys=True).encode()).hexdigest()


class AnswerCache:
    """`folder/<k[:2]>/<k>.json`; each answer is written atomically as soon as it arrives, so a crash keeps it."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def _path(self, key: str) -> Path:
        return self.folder / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict[str, Any] | None:
        """The cached answer, or None."""
        path = self._path(key)
        return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None

    def put(self, key: str, value: dict[str, Any]) -> None:
        """Store an answer."""
        write_text_atomic(self._path(key), json.dumps(value, sort_keys=True))
