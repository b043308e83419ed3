"""The embedded default snapshot: a small Synth release generated on first use into a cache."""

from __future__ import annotations

import json
import os
from pathlib import Path

from lookbench.errors import SnapshotError
from lookbench.synth.generate import MANIFEST, generate_snapshot
from lookbench.synth.release import DEFAULT_RELEASE, DEFAULT_SEED, DEFAULT_SIZE, version_name
from lookbench.synth.tasks import GENERATOR_VERSION

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
    folder = cache_root(cache_dir) / default_version()
    target = folder / version_name(DEFAULT_RELEASE)
    if is_complete(target):
        return target
    try:
        return generate_snapshot(folder, DEFAULT_RELEASE, DEFAULT_SIZE, DEFAULT_SEED, overwrite=target.exists())
    except (OSError, SnapshotError) as exc:
        if is_complete(target):
            return target
        raise SnapshotError(f"cannot create the default Synth snapshot in {folder}: {exc}") from exc


def is_complete(snapshot: Path) -> bool:
    """True if the manifest and every file it lists are present (a damaged cache is regenerated)."""
    try:
        files = json.loads((snapshot / MANIFEST).read_text(encoding="utf-8"))["files"]
        return bool(files) and all((snapshot / name).is_file() for name in files)
    except (OSError, ValueError, KeyError, TypeError):
        return False
