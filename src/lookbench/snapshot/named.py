"""Named snapshots (`default`, `validation`): names a wing registers under the `lookbench.snapshots` entry points,
accepted wherever a snapshot location is (a folder with one of these names is reached as `./default`)."""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from importlib.metadata import EntryPoint, entry_points
from pathlib import Path

from lookbench.snapshot.reader import Snapshot, open_snapshot

DEFAULT_SNAPSHOT = "default"
"""Names the embedded default snapshot (LookBench-Synth `small`) wherever a snapshot location is expected."""
VALIDATION_SNAPSHOT = "validation"
"""Names the embedded validation snapshot: a Synth release of the default's size with another seed and date,
generated on first use; what a run validates on unless told otherwise."""
GROUP = "lookbench.snapshots"


@cache
def registered() -> dict[str, EntryPoint]:
    """Each registered snapshot name and the entry point of the function that returns its version folder."""
    return {point.name: point for point in entry_points(group=GROUP)}


def named_folder(name: str) -> Path | None:
    """The version folder of the named snapshot `name` (made on first use by its wing), None for any other location."""
    point = registered().get(name)
    if point is None:
        return None
    folder: Callable[[], Path] = point.load()
    return folder()


def open_location(location: str) -> Snapshot:
    """A snapshot from a folder, a folder of versions, a hub location or a registered name."""
    folder = named_folder(location)
    return open_snapshot(folder if folder is not None else location)
