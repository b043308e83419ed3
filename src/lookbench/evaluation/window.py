"""Date windows over queries: keep those first seen within [since, until] (dates are parsed in lookbench.dates)."""

from __future__ import annotations

import numpy as np


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
