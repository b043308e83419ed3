"""Cyclic garbage collection paused around work that builds many objects but no reference cycles."""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


@contextlib.contextmanager
def paused_gc() -> Iterator[None]:
    """No cyclic collection inside the block (a command's imports): each one would walk every object built so far,
    to find hardly any cycle; those wait for the first collection after the block. The collector is restored as it
    was."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
