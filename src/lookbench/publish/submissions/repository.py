"""Read a results repository: every bundle checked, each marked verified or unverified, or refused."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from lookbench.errors import LookBenchError, SubmissionError
from lookbench.evaluation.contamination.sources import local_snapshot
from lookbench.publish.submissions.bundle import Bundle, bundle_folder, find_bundles, open_bundle
from lookbench.publish.submissions.verify import Status, verify_bundle
from lookbench.snapshot.reader import Snapshot


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
            check_place(repository, bundle)
            declared = bundle.result.snapshot
            snapshot = by_hash.get(declared.content_hash) or local_snapshot(declared.location)
            if snapshot is None or snapshot.content_hash != declared.content_hash:
                note = f"snapshot {declared.id} ({declared.content_hash[:12]}) not at hand"
                rows.append(RepositoryRow(bundle.result_path, Status.UNVERIFIED, note))
                continue
            outcome = verify_bundle(root, snapshot)
            # the snapshot by id and content hash: a local path would publish the maintainer's disk layout
            where = f"{snapshot.snapshot_id} ({snapshot.content_hash[:12]})"
            rows.append(RepositoryRow(bundle.result_path, outcome.status, f"{outcome.note} on {where}"))
        except (LookBenchError, OSError) as exc:  # one bad bundle is left out; the others are still shown
            refused.append(str(exc) if isinstance(exc, LookBenchError) else f"{root}: {type(exc).__name__}: {exc}")
    if not rows and not refused:
        raise SubmissionError(f"{repository}: no submission bundle (no manifest.json) found")
    return RepositoryScan(rows, refused)


def check_place(repository: Path, bundle: Bundle) -> None:
    """A bundle lies in the folder its manifest names (a copy elsewhere would list one run twice), and its declared
    snapshot lies outside the repository (a snapshot, or an audit, shipped by the submitter is not the official one)."""
    expected = repository / bundle_folder(bundle.result)
    if bundle.root.resolve() != expected.resolve():
        raise SubmissionError(f"{bundle.root}: its manifest's run belongs in {expected}; a moved or copied bundle")
    location = bundle.result.snapshot.location
    if "://" not in location and Path(location).resolve().is_relative_to(repository.resolve()):
        raise SubmissionError(
            f"{bundle.result_path}: field snapshot.location is {location}, inside the results repository; "
            "verify it on the official snapshot (--snapshot)"
        )
