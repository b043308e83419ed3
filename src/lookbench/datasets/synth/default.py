"""The embedded default snapshot: a small Synth release generated on first use into a cache."""

from __future__ import annotations

import os
from datetime import date
from pathlib import Path

from lookbench._util.jsontext import loads
from lookbench._util.outfolder import claim_output_folder
from lookbench.datasets.synth.generate import generate_snapshot
from lookbench.datasets.synth.release import (
    DEFAULT_RELEASE,
    DEFAULT_SEED,
    DEFAULT_SIZE,
    VALIDATION_RELEASE,
    VALIDATION_SEED,
    version_name,
)
from lookbench.datasets.synth.tasks import GENERATOR_VERSION
from lookbench.errors import SnapshotError
from lookbench.snapshot.synth_manifest import MANIFEST

CACHE_ENV = "LOOKBENCH_CACHE"


def cache_root(cache_dir: Path | None = None) -> Path:
    """Where Synth snapshots are cached: `cache_dir`, else `$LOOKBENCH_CACHE/synth`, else `~/.cache/lookbench/synth`."""
    if cache_dir is not None:
        return Path(cache_dir).expanduser()
    env = os.environ.get(CACHE_ENV)
    base = Path(env).expanduser() if env else Path.home() / ".cache" / "lookbench"
    return base / "synth"


def default_version() -> str:
    """The cache folder name of the default release: generator version, size, seed and date."""
    return f"{GENERATOR_VERSION}-{DEFAULT_SIZE}-seed{DEFAULT_SEED}-{DEFAULT_RELEASE:%Y%m%d}"


def default_snapshot(cache_dir: Path | None = None) -> Path:
    """The default snapshot's version folder, generated atomically on first use (about 2,840 images)."""
    return _cached(cache_root(cache_dir) / default_version(), DEFAULT_RELEASE, DEFAULT_SEED, "eval", "default")


def validation_snapshot(cache_dir: Path | None = None) -> Path:
    """The validation snapshot's version folder (`--purpose validation`, seed 1, 2026-05-01), generated on first use."""
    version = f"{GENERATOR_VERSION}-{DEFAULT_SIZE}-seed{VALIDATION_SEED}-{VALIDATION_RELEASE:%Y%m%d}-validation"
    return _cached(cache_root(cache_dir) / version, VALIDATION_RELEASE, VALIDATION_SEED, "validation", "validation")


def _cached(folder: Path, release: date, seed: int, purpose: str, what: str) -> Path:
    target = folder / version_name(release)
    if is_complete(target):
        return target
    try:
        with claim_output_folder(folder, "synth", overwrite=True).recording():
            return generate_snapshot(folder, release, DEFAULT_SIZE, seed, overwrite=target.exists(), purpose=purpose)
    except (OSError, SnapshotError) as exc:
        if is_complete(target):
            return target
        raise SnapshotError(f"cannot create the {what} Synth snapshot in {folder}: {exc}") from exc


def is_complete(snapshot: Path) -> bool:
    """True if the manifest and every file it lists are present (a damaged cache is regenerated)."""
    try:
        files = loads((snapshot / MANIFEST).read_text(encoding="utf-8"))["files"]
        return bool(files) and all((snapshot / name).is_file() for name in files)
    except (OSError, ValueError, KeyError, TypeError):
        return False
