"""The one canonical form labels and ids are compared in: by the metrics, taxonomy checks, audits, composed
relevance and release sources alike."""

from __future__ import annotations

import math
import unicodedata
from decimal import Decimal


def canonical_text(value: object) -> str | None:
    """One scalar as text: integral numbers without a fraction (`1`, `1.0` and `"1"` agree), NFC, trimmed.

    None, NaN and blank text give None.
    """
    if type(value) is str:  # the common case first: most cells are plain text
        text = value
    elif value is None:
        return None
    elif isinstance(value, bool):
        text = "true" if value else "false"
    elif isinstance(value, int):
        text = str(value)
    elif isinstance(value, float):
        if math.isnan(value):
            return None
        text = str(int(value)) if value.is_integer() else repr(value)
    elif isinstance(value, Decimal):
        if value.is_nan():
            return None
        text = str(int(value)) if value == value.to_integral_value() else str(value.normalize())
    elif isinstance(value, bytes):
        text = value.decode("utf-8", errors="replace")
    else:
        text = str(value)
    text = unicodedata.normalize("NFC", text).strip()
    return text or None


def normalise_label(value: object) -> str:
    """A label as the metrics compare it: canonical text, lowercased, Unicode NFC; None becomes ''."""
    text = canonical_text(value)
    return "" if text is None else unicodedata.normalize("NFC", text.lower())
