"""A small real image model for the sharding tests (`python:thumbs:make`), which can kill its own process once.

The kill is a real fault: when the file named by LOOKBENCH_TEST_DIE exists and holds N, the process that makes
its N-th `embed` call removes the file and sends itself SIGKILL, mid-shard, after its earlier batches were embedded.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

DIE_ENV = "LOOKBENCH_TEST_DIE"


class Thumbs:
    """4x4 RGB thumbnails as 48-d vectors."""

    model_id = "thumbs-4x4"
    revision = "1"

    def __init__(self) -> None:
        self.calls = 0

    def embed(self, images: list[Image.Image]) -> np.ndarray:
        self.calls += 1
        _maybe_die(self.calls)
        return np.stack([np.asarray(im.resize((4, 4)), np.float32).ravel() / 255.0 + 0.01 for im in images])

    def describe(self) -> dict[str, Any]:
        return {"kind": "test thumbnails"}


def _maybe_die(calls: int) -> None:
    path = os.environ.get(DIE_ENV)
    if not path:
        return
    try:
        at = int(Path(path).read_text())
    except (OSError, ValueError):
        return
    if calls >= at:
        try:
            Path(path).unlink()
        except FileNotFoundError:  # another worker took this death
            return
        os.kill(os.getpid(), signal.SIGKILL)


def make() -> Thumbs:
    return Thumbs()


class Flat(Thumbs):
    """A broken model: one number per batch instead of a vector per image."""

    model_id = "thumbs-flat"

    def embed(self, images: list[Image.Image]) -> np.ndarray:
        return np.zeros(len(images), np.float32)


def make_flat() -> Flat:
    return Flat()
