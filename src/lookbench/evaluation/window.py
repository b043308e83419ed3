"""Date windows over queries: keep those first seen within [since, until]."""

from __future__ import annotations

import datetime as dt

import numpy as np

from lookbench.errors import LookBenchError


def parse_date(text: str | None, option: str) -> np.datetime64 | None:
    """Parse an ISO date (YYYY-MM-DD) or datetime for a CLI option."""
    if text is None:
        return None
    try:
        value = dt.datetime.fromisoformat(text)
    except ValueError as exc:
        raise LookBenchError(f"{option}: {text!r} is not an ISO date (YYYY-MM-DD)") from exc
    if value.tzinfo is not None:
        value = value.astimezone(dt.timezone.utc).replace(tzinfo=None)
    return np.datetime64(value, "us")


def snapshot_date(snapshot_id: str) -> np.datetime64 | None:
    """The date of a `vYYYYMMDD` snapshot id, or None if the id is not of that form; an impossible date is an error."""
    digits = snapshot_id.removeprefix("v")
    if len(digits) != 8 or not digits.isdigit():
        return None
    try:
        day = dt.date(int(digits[:4]), int(digits[4:6]), int(digits[6:]))
    except ValueError as exc:
        raise LookBenchError(
            f"snapshot {snapshot_id!r}: its name is not a real date (vYYYYMMDD: {exc}); "
            "rows without first_seen_at cannot be dated"
        ) from exc
    return np.datetime64(day, "us")


def window_mask(
    dates: np.ndarray | None,
    count: int,
    since: np.datetime64 | None,
    until: np.datetime64 | None,
    fallback: np.datetime64 | None,
) -> np.ndarray:
    """Rows whose date (per-row, else `fallback`) lies in [since, until + 1 day); all rows if no bounds."""
    keep = np.ones(count, dtype=bool)
    if since is None and until is None:
        return keep
    if dates is None:
        dates = np.full(count, np.datetime64("NaT"), dtype="datetime64[us]")
    if fallback is not None:
        dates = np.where(np.isnat(dates), fallback, dates)
    known = ~np.isnat(dates)
    if since is not None:
        keep &= known & (dates >= since)
    if until is not None:
        keep &= known & (dates < until + np.timedelta64(1, "D"))
    return keep
