"""Date windows over queries: keep those first seen within [since, until] (dates are parsed in lookbench.dates)."""

from __future__ import annotations

from collections.abc import Hashable, Sequence

import numpy as np


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
