"""Dates: parsing what sources give (lenient about absence, strict about nonsense), what users type (strict) and
what model cards declare (lenient: partial dates, words for "unknown").

Errors share one form: a ValueError saying `'VALUE' is not ...`, which commands prefix with the option or field.
"""

from __future__ import annotations

import calendar
import datetime as dt
import re
from typing import Any

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


def _compact_day(digits: str, given: str) -> dt.date:
    """`YYYYMMDD` as a date; ValueError names `given` when no such day exists."""
    try:
        return dt.date(int(digits[:4]), int(digits[4:6]), int(digits[6:]))
    except ValueError as exc:
        raise ValueError(f"{given[:80]!r} is not a real date (vYYYYMMDD: {exc})") from exc


def version_date(snapshot_id: str) -> dt.date | None:
    """The date of a `vYYYYMMDD` snapshot id (None if not of that form; ValueError if not a real date)."""
    digits = snapshot_id.removeprefix("v")
    if len(digits) != 8 or not digits.isdigit():
        return None
    return _compact_day(digits, snapshot_id)


def parse_day(text: str) -> dt.date:
    """A release day written `YYYY-MM-DD`, `YYYYMMDD` or `vYYYYMMDD`; ValueError names the text."""
    digits = text.strip().removeprefix("v").replace("-", "")
    if len(digits) != 8 or not digits.isdigit():
        raise ValueError(f"{text[:80]!r} is not an ISO date (YYYY-MM-DD)")
    return _compact_day(digits, text)


def snapshot_date(snapshot_id: str) -> np.datetime64 | None:
    """`version_date` as a datetime64 (the evaluation's date fallback); an impossible date is a LookBenchError."""
    try:
        day = version_date(snapshot_id)
    except ValueError as exc:
        raise LookBenchError(
            f"snapshot {snapshot_id!r}: its name is not a real date ({exc}); rows without first_seen_at cannot be dated"
        ) from exc
    return None if day is None else np.datetime64(day, "us")


def day_of(value: np.datetime64) -> dt.date:
    """The calendar day (UTC) of a datetime64."""
    return dt.date.fromisoformat(str(value.astype("datetime64[D]")))


def day_after(day: dt.date) -> dt.date:
    """The next day; ValueError names the day when it is the last one a date can hold (9999-12-31)."""
    if day == dt.date.max:
        raise ValueError(f"{day.isoformat()!r} has no day after it (the last representable date)")
    return day + dt.timedelta(days=1)


UNKNOWN_WORDS = frozenset({"", "unknown", "none", "null", "n/a", "na", "?"})
"""What cards write for a fact they do not know."""

_DATE_PREFIX = re.compile(r"^\s*(\d{4})(?:-(\d{1,2}))?(?:-(\d{1,2}))?")


def lenient_date(value: Any) -> dt.date | None:
    """A date from ISO text, a datetime, or a leading YYYY-MM / YYYY (then the period's last day); None if unknown.

    A partial date stands for its whole period, so it resolves to the period's end: the conservative reading
    for both a training cutoff and a release date when flagging possible contamination.
    """
    if value is None:
        return None
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, dt.date):
        return value
    text = str(value).strip()
    if text.lower() in UNKNOWN_WORDS:
        return None
    try:
        return dt.datetime.fromisoformat(text).date()
    except ValueError:
        pass
    match = _DATE_PREFIX.match(text)
    if match is None:
        return None
    year, month, day = (int(g) if g else None for g in match.groups())
    assert year is not None
    try:
        if month is None:
            return dt.date(year, 12, 31)
        if day is None:
            return dt.date(year, month, calendar.monthrange(year, month)[1])
        return dt.date(year, month, day)
    except ValueError:
        return None


def date_as_given(value: Any) -> str | None:
    """The date part of a card value as written: `2020-03` stays `2020-03`, `2012 (ImageNet)` gives `2012`.

    Pages show this text, so a partial date is never displayed as the last day it resolves to.
    """
    if lenient_date(value) is None:
        return None
    if isinstance(value, dt.date):
        return (value.date() if isinstance(value, dt.datetime) else value).isoformat()
    text = str(value).strip()
    try:
        return dt.datetime.fromisoformat(text).date().isoformat()
    except ValueError:
        match = _DATE_PREFIX.match(text)
        return match.group(0).strip() if match else None
