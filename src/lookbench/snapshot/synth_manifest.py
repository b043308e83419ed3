"""A LookBench-Synth release's `synth_manifest.json`: its name, reading it, and the categories a training release
left out (read by the trainer and the leaderboard as well as by the generator)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lookbench._util.jsontext import loads
from lookbench.errors import SnapshotError

MANIFEST = "synth_manifest.json"
GALLERY_CATEGORIES: tuple[str, ...] = (
    "blouse",
    "shirt",
    "t-shirt",
    "polo shirt",
    "tank top",
    "sweatshirt",
    "hoodie",
    "sweater",
    "cardigan",
    "jacket",
    "blazer",
    "coat",
    "vest",
    "dress",
    "jumpsuit",
    "skirt",
    "pants",
    "jeans",
    "shorts",
    "bag",
    "sneakers",
    "boots",
    "heels",
)
"""The Synth catalogue's gallery categories, in catalogue order (`datasets.synth.catalogue` derives the same tuple
from its specs; tests/datasets/synth checks they agree)."""


def read_manifest(root: Path) -> dict[str, Any] | None:
    """The `synth_manifest.json` of the snapshot in `root`; None where it has none."""
    path = root / MANIFEST
    try:
        recorded = loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise SnapshotError(f"{path}: not a readable Synth manifest ({exc})") from exc
    if not isinstance(recorded, dict):
        raise SnapshotError(f"{path}: not a readable Synth manifest (a JSON object expected)")
    return recorded


def recorded_dropped_categories(root: Path) -> tuple[str, ...]:
    """The categories the Synth training release in `root` left out (`--exhausted-categories drop`); none for any
    other snapshot."""
    path = root / MANIFEST
    dropped = (read_manifest(root) or {}).get("dropped_categories", [])
    known = isinstance(dropped, list) and all(isinstance(c, str) and c in GALLERY_CATEGORIES for c in dropped)
    if not known or len(set(dropped)) != len(dropped):
        raise SnapshotError(f"{path}: dropped_categories must be a list of distinct Synth categories, got {dropped!r}")
    return tuple(dropped)
