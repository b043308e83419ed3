"""Decoding JSON text that came from outside (result files, manifests, cards, pages, replies) without surprises."""

from __future__ import annotations

import json
from typing import Any


def loads(text: str | bytes) -> Any:
    """`json.loads`, except that nesting too deep for the decoder is a JSONDecodeError like any other bad JSON."""
    try:
        return json.loads(text)
    except RecursionError:
        raise json.JSONDecodeError("JSON nested too deeply to decode", "", 0) from None
