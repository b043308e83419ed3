"""Date windows over queries: keep those first seen within [since, until]."""

from __future__ import annotations

import datetime as dt
from collections.abc import Hashable, Sequence

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


def outfit_dates(dates: np.ndarray, outfits: Sequence[Hashable | None]) -> np.ndarray:
    """Each row's date replaced by the earliest known date of its outfit; rows without an outfit keep their own.

    The crops of one street photo are one unit (scored and resampled together), so a window keeps or drops
    them together: the outfit counts as first seen when its earliest crop was.
    """
    out = dates.copy()
    members: dict[Hashable, list[int]] = {}
    for row, key in enumerate(outfits):
        if key is not None:
            members.setdefault(key, []).append(row)
    for rows in members.values():
        if len(rows) > 1:
            known = dates[rows][~np.isnat(dates[rows])]
            if len(known):
                out[rows] = known.min()
    return out


def window_mask(
    dates: np.ndarray | None,
    count: int,
    since: np.datetime64 | None,
    until: np.datetime64 | None,
    fallback: np.datetime64 | None,
    outfits: Sequence[Hashable | None] | None = None,
) -> np.ndarray:
    """Rows whose date lies in [since, until + 1 day); all rows if no bounds.

    A row's date is its own, else `fallback`; with `outfits` (a key per row, None for none) it is its outfit's
    earliest date, so whole outfits are kept or dropped.
    """
    keep = np.ones(count, dtype=bool)
    if since is None and until is None:
        return keep
    if dates is None:
        dates = np.full(count, np.datetime64("NaT"), dtype="datetime64[us]")
    if fallback is not None:
        dates = np.where(np.isnat(dates), fallback, dates)
    if outfits is not None:
        dates = outfit_dates(dates, outfits)
    known = ~np.isnat(dates)
    if since is not None:
        keep &= known & (dates >= since)
    if until is not None:
        keep &= known & (dates < until + np.timedelta64(1, "D"))
    return keep
