"""Decoding JSON text that came from outside (pages, records, model replies, cache files) without surprises."""

from __future__ import annotations

import json
from typing import Any


def loads(text: str | bytes) -> Any:
    """`json.loads`, except that nesting too deep for the decoder is a ValueError like any other bad JSON."""
    try:
        return json.loads(text)
    except RecursionError as exc:
        raise ValueError("JSON nested too deeply to decode") from exc
