"""The folder every lookbench cache lives under."""

from __future__ import annotations

import os
from pathlib import Path

CACHE_ENV = "LOOKBENCH_CACHE"


def default_cache_dir() -> Path:
    """`$LOOKBENCH_CACHE` or `~/.cache/lookbench`."""
    env = os.environ.get(CACHE_ENV)
    return Path(env).expanduser() if env else Path.home() / ".cache" / "lookbench"
