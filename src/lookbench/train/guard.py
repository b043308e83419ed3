"""The contamination guard: training images that match an evaluation image are dropped, or the run refuses.

Every image of each evaluation snapshot (query, gallery and noise splits) is fingerprinted with the builder's tiers
(`train.fingerprints`: exact sha256, mirror-robust pHash confirmed by a colour check); each training image is looked
up. The report also measures what the kept training set shares with each snapshot's queries by labels
(`train.overlap`: identical label sets, same design in another colour, strict fine matches). Fingerprints are
cached: per snapshot content for the evaluation side, per image content for training images.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from lookbench._util.atomic import write_text_atomic
from lookbench._util.images import BadImageError
from lookbench.embeddings.progress import image_progress
from lookbench.errors import TrainError
from lookbench.results.query_sets import OVERLAP_QUERIES_FILE, OverlapQueries
from lookbench.snapshot.named import open_location
from lookbench.snapshot.reader import Snapshot
from lookbench.train.config import Data, Guard
from lookbench.train.data import TrainingSet, load_training_set
from lookbench.train.fingerprints import EvaluationIndex, Fingerprint, training_fingerprint
from lookbench.train.overlap import snapshot_overlap

GUARD_REPORT = "guard.json"


@dataclass
class Overlap:
    """One dropped training row and the evaluation image it matches."""

    train: str
    evaluation: str
    tier: str
    distance: float


@dataclass
class GuardReport:
    """What was checked against what, and what was dropped."""

    checked: int = 0
    against: list[dict[str, object]] = field(default_factory=list)
    threshold: int = 0
    colour_threshold: float = 0.0
    overlaps: list[Overlap] = field(default_factory=list)
    unreadable: list[str] = field(default_factory=list)
    evaluation_overlap: list[dict[str, object]] = field(default_factory=list)
    """Per evaluation snapshot, what the kept training set still shares with its queries (`train.overlap`)."""

    def save(self, path: Path) -> None:
        """Write the report as JSON."""
        write_text_atomic(path, json.dumps(asdict(self), indent=2) + "\n")

    def summary(self) -> str:
        """One line for the console."""
        tiers: dict[str, int] = {}
        for overlap in self.overlaps:
            tiers[overlap.tier] = tiers.get(overlap.tier, 0) + 1
        counts = ", ".join(f"{n} {t}" for t, n in sorted(tiers.items())) or "none"
        names = ", ".join(str(a["snapshot"]) for a in self.against)
        return f"contamination guard: {self.checked} training images against {names}: overlaps {counts}"

    def console_lines(self) -> list[str]:
        """The summary, then one line per evaluation snapshot's overlap."""
        return [self.summary(), *(f"overlap with {found['summary']}" for found in self.evaluation_overlap)]


class HashCache:
    """pHash pairs of training images by sha256, in one JSON-lines file (appended, so a crash loses little)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.known: dict[str, tuple[str, str]] = {}
        if path.is_file():
            for line in path.read_text(encoding="utf-8").splitlines():
                try:
                    sha, phash, mirrored = json.loads(line)
                except (ValueError, TypeError):
                    continue
                self.known[str(sha)] = (str(phash), str(mirrored))
        self._pending: list[tuple[str, str, str]] = []

    def fingerprint(self, sha: str, data: bytes) -> Fingerprint:
        """The fingerprint of this content, its hashes read from the cache when known (remembered otherwise)."""
        found, hashes = training_fingerprint(data, self.known.get(sha))
        if sha not in self.known:
            self.known[sha] = hashes
            self._pending.append((sha, *hashes))
            if len(self._pending) >= 512:
                self.flush()
        return found

    def flush(self) -> None:
        """Append the new entries."""
        if not self._pending:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a", encoding="utf-8") as out:
            out.writelines(json.dumps(list(entry)) + "\n" for entry in self._pending)
        self._pending = []


def check_overlaps(
    training: TrainingSet, snapshots: list[Snapshot], guard: Guard, cache_dir: Path, say: Callable[[str], None]
) -> tuple[np.ndarray, GuardReport]:
    """(rows of `training` that match no evaluation image, the report)."""
    index = EvaluationIndex(cache_dir / "fingerprints")
    report = GuardReport(threshold=guard.phash_threshold, colour_threshold=guard.colour_threshold)
    for snapshot in snapshots:
        say(f"guard: fingerprints of {snapshot.snapshot_id} ({snapshot.location}; cached after the first time)")
        added = index.add_snapshot(snapshot)
        report.against.append(
            {
                "snapshot": snapshot.snapshot_id,
                "location": snapshot.location,
                "images": added,
                "content_hash": snapshot.content_hash,
            }
        )
    hashes = HashCache(cache_dir / "fingerprints" / "training-phash256.jsonl")
    keep = np.ones(len(training), dtype=bool)
    with image_progress("guard: check training images", len(training), True) as advance:
        for row in range(len(training)):
            try:
                query = hashes.fingerprint(training.images.sha256_hex(row), training.images[row])
            except BadImageError as exc:
                raise TrainError(f"training image {training.origin[row]} does not decode ({exc})") from exc
            hit = index.lookup(query, guard.phash_threshold, guard.colour_threshold)
            if hit is not None:
                keep[row] = False
                report.overlaps.append(Overlap(training.origin[row], hit.key, hit.tier, hit.distance))
            advance(1)
    hashes.flush()
    report.checked = len(training)
    return np.flatnonzero(keep), report


def apply_guard(
    training: TrainingSet,
    snapshots: list[Snapshot],
    guard: Guard,
    cache_dir: Path,
    strict: bool,
    report_path: Path | None,
    say: Callable[[str], None] = print,
) -> tuple[TrainingSet, GuardReport]:
    """Drop overlapping rows (writing the report when given a path), or refuse under `strict`."""
    keep, report = check_overlaps(training, snapshots, guard, cache_dir, say)
    kept_labels = [training.labels[int(r)] for r in keep]
    matched = [overlap.evaluation for overlap in report.overlaps]
    measured = [snapshot_overlap(s, kept_labels, matched) for s in snapshots]
    report.evaluation_overlap = [counts.record() for counts, _ in measured]
    if report_path is not None:
        report.save(report_path)
        queries = OverlapQueries(training=[s.location for s in training.sources], snapshots=[q for _, q in measured])
        queries.save(report_path.with_name(OVERLAP_QUERIES_FILE))
    if report.overlaps and strict:
        first = report.overlaps[0]
        raise TrainError(
            f"--strict: {len(report.overlaps)} training image(s) overlap the evaluation snapshots, e.g. {first.train} "
            f"matches {first.evaluation} ({first.tier}, distance {first.distance:g}); see {report_path}"
        )
    if not len(keep):
        raise TrainError(f"every training image overlaps the evaluation snapshots; see {report_path}")
    return (training if len(keep) == len(training) else training.select(keep)), report


def guarded_snapshots(data: Data) -> list[Snapshot]:
    """The snapshots the guard checks a run's training data against: `guard.against` and the validation snapshot,
    each content once."""
    names = list(dict.fromkeys(data.guard.against + ([data.validation.snapshot] if data.validation else [])))
    return list({s.content_hash: s for s in (open_location(n) for n in names)}.values())


def guard_only(
    data: Data, seed: int, out: Path, cache_dir: Path, overwrite: bool, say: Callable[[str], None]
) -> GuardReport:
    """Run the guard on a config's training data without training: `OUT/guard.json` and `OUT/overlap_queries.json`
    (a folder that already holds them is refused without `overwrite`)."""
    report_path = out / GUARD_REPORT
    held = [p for p in (report_path, out / OVERLAP_QUERIES_FILE) if p.exists()]
    if held and not overwrite:
        raise TrainError(f"{held[0]} exists; use --overwrite to measure again")
    if out.exists() and not out.is_dir():
        raise TrainError(f"--out {out}: not a folder")
    training = load_training_set(data.train, seed, cache_dir)
    out.mkdir(parents=True, exist_ok=True)
    _, report = apply_guard(training, guarded_snapshots(data), data.guard, cache_dir, False, report_path, say)
    return report
