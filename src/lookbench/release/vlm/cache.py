"""A file-per-answer cache keyed by endpoint, model, prompt version, schema hash and the image (plus what is asked).

Only answers that passed validation are stored, and every read is validated again by the caller (the taxonomy
may have moved, a file may have been edited); an empty, corrupt or invalid file counts as a miss and is listed.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from lookbench._util.atomic import write_text_atomic
from lookbench._util.hashing import json_sha256, parts_sha256
from lookbench._util.jsontext import loads

T = TypeVar("T")


def cache_key(endpoint: str, model: str, prompt_version: str, schema: dict[str, Any], *asked: str) -> str:
    """sha256 of the endpoint, model, prompt version, schema hash and what is asked about (image sha256, ...)."""
    return parts_sha256(endpoint, model, prompt_version, json_sha256(schema), *asked)


class AnswerCache:
    """`folder/<k[:2]>/<k>.json`; each answer is written atomically as soon as it arrives, so a crash keeps it."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.unusable: list[str] = []
        """Cache files that were empty, corrupt or failed validation (they are asked again)."""
        self._lock = threading.Lock()

    def _path(self, key: str) -> Path:
        return self.folder / key[:2] / f"{key}.json"

    def get(self, key: str, validate: Callable[[Any], T]) -> T | None:
        """The cached answer passed through `validate` (which raises ValueError for a bad one), or None."""
        path = self._path(key)
        if not path.is_file():
            return None
        try:
            return validate(loads(path.read_text(encoding="utf-8")))
        except (OSError, ValueError) as exc:
            with self._lock:
                self.unusable.append(f"{path}: {exc}")
            return None

    def has(self, key: str) -> bool:
        """True if a file exists for the key (batch export skips those; a bad one is re-validated when read)."""
        return self._path(key).is_file()

    def put(self, key: str, answer: Any) -> None:
        """Store a validated answer."""
        write_text_atomic(self._path(key), json.dumps(answer, sort_keys=True))
