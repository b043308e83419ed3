"""Entry points of other distributions (plugins): who declared them, and warnings about the ones left out."""

from __future__ import annotations

import re
import sys
from functools import cache
from importlib.metadata import EntryPoint

OWN_DISTRIBUTION = "lookbench"


def distribution_name(point: EntryPoint) -> str:
    """The normalised name of the distribution that declares an entry point ('unknown' when it has none)."""
    dist = point.dist
    return re.sub(r"[-_.]+", "-", dist.name).lower() if dist is not None and dist.name else "unknown"


def is_own(point: EntryPoint) -> bool:
    """True for an entry point lookbench itself declares."""
    return distribution_name(point) == OWN_DISTRIBUTION


@cache
def warn_once(message: str) -> None:
    """Print `warning: message` on stderr once per process."""
    print(f"warning: {message}", file=sys.stderr)
