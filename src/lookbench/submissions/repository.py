"""Read a results repository: every bundle checked, each marked verified, re-scored or unverified."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from lookbench.contamination.sources import local_snapshot
from lookbench.errors import LookBenchError, SubmissionError
from lookbench.snapshot.reader import Snapshot
from lookbench.submissions.bundle import find_bundles, open_bundle
from lookbench.submissions.verify import Status, verify_bundle


@dataclass(frozen=True)
class RepositoryRow:
    """One bundle's result file and how far it was checked."""

    result_path: Path
    status: Status
    note: str


@dataclass(frozen=True)
class RepositoryScan:
    """The rows a repository contributes, and the bundles refused (one line each, naming the file and field)."""

    rows: list[RepositoryRow]
    refused: list[str]


def scan_repository(repository: Path, snapshots: list[Snapshot]) -> RepositoryScan:
    """Check every bundle: against a given snapshot with its content hash, else its declared local snapshot;
    a bundle whose snapshot is not at hand is unverified, one that fails a check is refused."""
    by_hash = {s.content_hash: s for s in snapshots}
    rows, refused = [], []
    for root in find_bundles(repository):
        try:
            bundle = open_bundle(root)
            declared = bundle.result.snapshot
            snapshot = by_hash.get(declared.content_hash) or local_snapshot(declared.location)
            if snapshot is None or snapshot.content_hash != declared.content_hash:
                note = f"snapshot {declared.id} ({declared.content_hash[:12]}) not at hand"
                rows.append(RepositoryRow(bundle.result_path, Status.UNVERIFIED, note))
                continue
            outcome = verify_bundle(root, snapshot)
            note = f"{outcome.numbers} numbers match on {snapshot.root}"
            rows.append(RepositoryRow(bundle.result_path, outcome.status, note))
        except LookBenchError as exc:
            refused.append(str(exc))
    if not rows and not refused:
        raise SubmissionError(f"{repository}: no submission bundle (no manifest.json) found")
    return RepositoryScan(rows, refused)
