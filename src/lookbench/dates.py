"""Dates: parsing what sources give (lenient about absence, strict about nonsense) and what users type (strict)."""

from __future__ import annotations

import datetime as dt

import numpy as np

from lookbench.errors import LookBenchError


def parse_datetime(value: object) -> dt.datetime:
    """A timezone-aware UTC datetime from an ISO date/datetime string or a datetime; ValueError names the value.

    Naive values are taken as UTC. Values that do not exist (`2026-02-30`) or fall outside years 1-9999 once moved
    to UTC (`0001-01-01T00:00:00+14:00`) are errors, so no later step meets a date it cannot represent.
    """
    if isinstance(value, dt.datetime):
        when = value
    elif isinstance(value, dt.date):
        when = dt.datetime(value.year, value.month, value.day)
    else:
        text = str(value).strip()
        try:
            when = dt.datetime.fromisoformat(text[:-1] + "+00:00" if text.endswith(("Z", "z")) else text)
        except ValueError as exc:
            raise ValueError(f"{text[:80]!r} is not an ISO date or datetime") from exc
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.timezone.utc)
    try:
        return when.astimezone(dt.timezone.utc)
    except OverflowError as exc:
        raise ValueError(f"{when.isoformat()!r} is out of range (years 1-9999 in UTC)") from exc


def optional_datetime(value: object) -> dt.datetime | None:
    """`parse_datetime`, with None and empty text meaning "no date"."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    return parse_datetime(value)


def parse_date(text: str | None, option: str) -> np.datetime64 | None:
    """A CLI option's ISO date (YYYY-MM-DD) or datetime as a naive UTC datetime64; LookBenchError names the option."""
    if text is None:
        return None
    try:
        value = parse_datetime(text)
    except ValueError as exc:
        raise LookBenchError(f"{option}: {exc}; expected an ISO date (YYYY-MM-DD)") from exc
    return np.datetime64(value.replace(tzinfo=None), "us")


def version_date(snapshot_id: str) -> dt.date | None:
    """The date of a `vYYYYMMDD` snapshot id (None if not of that form; ValueError if not a real date)."""
    digits = snapshot_id.removeprefix("v")
    if len(digits) != 8 or not digits.isdigit():
        return None
    try:
        return dt.date(int(digits[:4]), int(digits[4:6]), int(digits[6:]))
    except ValueError as exc:
        raise ValueError(f"{snapshot_id!r} is not a real date (vYYYYMMDD: {exc})") from exc


def snapshot_date(snapshot_id: str) -> np.datetime64 | None:
    """`version_date` as a datetime64 (the evaluation's date fallback); an impossible date is a LookBenchError."""
    try:
        day = version_date(snapshot_id)
    except ValueError as exc:
        raise LookBenchError(
            f"snapshot {snapshot_id!r}: its name is not a real date ({exc}); rows without first_seen_at cannot be dated"
        ) from exc
    return None if day is None else np.datetime64(day, "us")
