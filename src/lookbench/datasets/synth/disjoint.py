"""The evaluation releases a Synth training release keeps its designs apart from, named on the command line.

A name is `default` (the embedded default snapshot's plan), `synth:SEED:YYYY-MM-DD:SIZE` (any Synth evaluation
release's plan: labels only, nothing rendered) or a snapshot folder (its query rows' labels); `none` excludes
nothing."""

from __future__ import annotations

from datetime import date

from lookbench._util.dates import parse_day
from lookbench._util.hashing import parts_sha256
from lookbench.datasets.synth.plan import plan_release
from lookbench.datasets.synth.products import strict_labels
from lookbench.datasets.synth.release import DEFAULT_RELEASE, DEFAULT_SEED, DEFAULT_SIZE
from lookbench.errors import SnapshotError
from lookbench.snapshot.reader import open_snapshot
from lookbench.taxonomy.designs import Labels, QueryDesigns, query_labels

DEFAULT_EXCLUSION = ("default",)
NO_EXCLUSION = "none"


def synth_query_labels(seed: int, release: date, size: str) -> list[Labels]:
    """The labels of every query of a Synth evaluation release, from its plan."""
    plan = plan_release(seed, release, size)
    return [strict_labels(p) for sub in plan.subsets for p in sub.query_products()]


def release_query_labels(name: str) -> list[Labels]:
    """The query labels of one named evaluation release."""
    if name == "default":
        return synth_query_labels(DEFAULT_SEED, DEFAULT_RELEASE, DEFAULT_SIZE)
    if name.startswith("synth:"):
        parts = name.split(":")
        if len(parts) != 4 or not parts[1].isdigit():
            raise SnapshotError(f"--exclude-designs {name!r}: expected synth:SEED:YYYY-MM-DD:SIZE")
        try:
            day = parse_day(parts[2])
        except ValueError as exc:
            raise SnapshotError(f"--exclude-designs {name!r}: {exc}") from exc
        return synth_query_labels(int(parts[1]), day, parts[3])
    labels = query_labels(open_snapshot(name))
    if not labels:
        raise SnapshotError(f"--exclude-designs {name!r}: the snapshot has no query rows")
    return labels


def excluded_designs(names: list[str]) -> QueryDesigns | None:
    """The query designs of the named releases (None for `none` or no names)."""
    if not names or names == [NO_EXCLUSION]:
        return None
    if NO_EXCLUSION in names:
        raise SnapshotError("--exclude-designs none cannot be combined with other names")
    return QueryDesigns(label for name in names for label in release_query_labels(name))


def exclusion_key(names: list[str]) -> str:
    """A short key of the exclusion, so a resumed run never mixes files planned under another one."""
    return parts_sha256(*names)[:8]
