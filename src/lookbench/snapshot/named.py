"""Named snapshots (`default`, `validation`): names a wing registers under the `lookbench.snapshots` entry points,
accepted wherever a snapshot location is (a folder with one of these names is reached as `./default`)."""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from importlib.metadata import EntryPoint, entry_points
from pathlib import Path

from lookbench._util.entrypoints import distribution_name, is_own, warn_once
from lookbench.snapshot.reader import Snapshot, open_snapshot

DEFAULT_SNAPSHOT = "default"
"""Names the embedded default snapshot (LookBench-Synth `small`) wherever a snapshot location is expected."""
VALIDATION_SNAPSHOT = "validation"
"""Names the embedded validation snapshot: a Synth release of the default's size with another seed and date,
generated on first use; what a run validates on unless told otherwise."""
GROUP = "lookbench.snapshots"


@cache
def registered() -> dict[str, EntryPoint]:
    """Each registered snapshot name and the entry point of the function that returns its version folder: lookbench's
    own names first; a plugin's name that is lookbench's, or that two plugins register, is left out with a warning."""
    points = list(entry_points(group=GROUP))
    found = {point.name: point for point in points if is_own(point)}
    plugins = [point for point in points if not is_own(point)]
    for point in plugins:
        same = [other for other in plugins if other.name == point.name]
        owners = " and ".join(sorted({distribution_name(other) for other in same}))
        if point.name in found:
            warn_once(f"plugin snapshot name {point.name!r} from {owners} ignored: lookbench has one of that name")
        elif len(same) > 1:
            warn_once(f"plugin snapshot name {point.name!r} ignored: registered by more than one plugin ({owners})")
        else:
            found[point.name] = point
    return found


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
