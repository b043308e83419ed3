"""Release dates: version folder names, the window new products are dated in, and time sampling."""

from __future__ import annotations

from datetime import date, datetime, time, timedelta, timezone

import numpy as np

WINDOW_DAYS = 30
"""Products new in a release are first seen within this many days before the release date."""

HISTORY_DAYS = 365
"""Distractors (noise) were first seen up to this long before the window."""

DEFAULT_RELEASE = date(2026, 6, 1)
DEFAULT_SEED = 0
DEFAULT_SIZE = "small"
"""The embedded default snapshot's release date, seed and size (`lookbench.datasets.synth.default`)."""

VALIDATION_RELEASE = date(2026, 5, 1)
VALIDATION_SEED = 1
"""The default validation release: another seed and date than the default snapshot's."""


def version_name(release: date) -> str:
    """The snapshot folder name of a release, e.g. `v20260601`."""
    return f"v{release:%Y%m%d}"


def release_window(release: date, days: int = WINDOW_DAYS) -> tuple[datetime, datetime]:
    """[start, end) in UTC: the `days` before the release date's midnight."""
    end = datetime.combine(release, time(0), tzinfo=timezone.utc)
    return end - timedelta(days=days), end


def history_window(release: date) -> tuple[datetime, datetime]:
    """[start, end) in UTC for older distractor products: the year before the release window."""
    start, _ = release_window(release)
    return start - timedelta(days=HISTORY_DAYS), start


def sample_time(rng: np.random.Generator, window: tuple[datetime, datetime]) -> datetime:
    """A whole-second UTC time uniformly inside the window."""
    start, end = window
    seconds = int((end - start).total_seconds())
    return start + timedelta(seconds=int(rng.integers(0, seconds)))
