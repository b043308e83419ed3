"""The embedded snapshots by name, accepted wherever a snapshot location is: `default` and `validation` (a folder
with one of these names is reached as `./default` or `./validation`)."""

from __future__ import annotations

from pathlib import Path

from lookbench.snapshot.reader import Snapshot, open_snapshot

DEFAULT_SNAPSHOT = "default"
"""Names the embedded default snapshot (LookBench-Synth `small`) wherever a snapshot location is expected."""
VALIDATION_SNAPSHOT = "validation"
"""Names the embedded validation snapshot: a Synth release of the default's size with another seed and date
(`lookbench synth --purpose validation`), generated on first use; what a run validates on unless told otherwise."""


def embedded_folder(name: str) -> Path | None:
    """The version folder of the embedded snapshot `name` (generated on first use), None for any other location."""
    if name == DEFAULT_SNAPSHOT:
        from lookbench.synth.default import default_snapshot

        return default_snapshot()
    if name == VALIDATION_SNAPSHOT:
        from lookbench.synth.default import validation_snapshot

        return validation_snapshot()
    return None


def open_location(location: str) -> Snapshot:
    """A snapshot from a folder, a folder of versions, a hub location, `default` or `validation`."""
    folder = embedded_folder(location)
    return open_snapshot(folder if folder is not None else location)
