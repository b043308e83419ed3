"""The contamination guard: training images that match an evaluation image are dropped, or the run refuses.

Every image of each evaluation snapshot (query, gallery and noise splits) is fingerprinted with the builder's tiers
(`train.fingerprints`); each training image is looked up. Fingerprints are cached per image content.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from lookbench.atomic import write_text_atomic
from lookbench.embeddings.progress import image_progress
from lookbench.errors import TrainError
from lookbench.snapshot.reader import Snapshot
from lookbench.snapshot.schema import NOISE, SPLITS
from lookbench.train.data import TrainingSet
from lookbench.train.fingerprints import Fingerprint, Index, fingerprint


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
    overlaps: list[Overlap] = field(default_factory=list)
    unreadable: list[str] = field(default_factory=list)

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


class FingerprintCache:
    """Fingerprints by image sha256, in one JSON-lines file per cache folder (appended, so a crash loses little)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.known: dict[str, Fingerprint] = {}
        if path.is_file():
            for line in path.read_text(encoding="utf-8").splitlines():
                try:
                    sha, phash, mirrored = json.loads(line)
                except (ValueError, TypeError):
                    continue
                self.known[sha] = Fingerprint(sha, phash, mirrored)
        self._pending: list[Fingerprint] = []

    def get(self, sha: str, data: bytes) -> Fingerprint:
        """The cached fingerprint of this content, else a fresh one (remembered)."""
        if sha not in self.known:
            found = fingerprint(data)
            self.known[sha] = found
            self._pending.append(found)
            if len(self._pending) >= 512:
                self.flush()
        return self.known[sha]

    def flush(self) -> None:
        """Append the new fingerprints."""
        if not self._pending:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a", encoding="utf-8") as out:
            out.writelines(json.dumps([f.sha256, f.phash, f.mirrored]) + "\n" for f in self._pending)
        self._pending = []


def index_snapshot(snapshot: Snapshot, cache: FingerprintCache, index: Index, report: GuardReport) -> int:
    """Add every image of every split of `snapshot` to `index`; returns how many."""
    import hashlib

    parts = [(s, sp) for s in snapshot.subsets for sp in SPLITS]
    if snapshot.has_noise:
        parts.append((NOISE, "gallery"))
    total = sum(snapshot.num_rows(s, sp) for s, sp in parts)
    added = 0
    with image_progress(f"guard: fingerprint {snapshot.snapshot_id}", total, True) as advance:
        for subset, split in parts:
            for start, images in snapshot.iter_images(subset, split, batch_size=256):
                for offset, data in enumerate(images):
                    key = f"{snapshot.snapshot_id}/{subset}/{split}#{start + offset}"
                    if not data:
                        continue
                    try:
                        index.add(key, cache.get(hashlib.sha256(data).hexdigest(), data))
                        added += 1
                    except (OSError, ValueError, SyntaxError) as exc:
                        report.unreadable.append(f"{key}: {exc}")
                advance(len(images))
    cache.flush()
    return added


def check_overlaps(
    training: TrainingSet, snapshots: list[Snapshot], threshold: int, cache_dir: Path
) -> tuple[np.ndarray, GuardReport]:
    """(rows of `training` that match no evaluation image, the report)."""
    cache = FingerprintCache(cache_dir / "fingerprints" / "phash256.jsonl")
    index = Index()
    report = GuardReport(threshold=threshold)
    for snapshot in snapshots:
        added = index_snapshot(snapshot, cache, index, report)
        report.against.append(
            {
                "snapshot": snapshot.snapshot_id,
                "location": snapshot.location,
                "images": added,
                "content_hash": snapshot.content_hash,
            }
        )
    keep = np.ones(len(training), dtype=bool)
    with image_progress("guard: check training images", len(training), True) as advance:
        for row in range(len(training)):
            try:
                print_ = cache.get(training.images.sha256_hex(row), training.images[row])
            except (OSError, ValueError, SyntaxError) as exc:
                raise TrainError(f"training image {training.origin[row]} does not decode ({exc})") from exc
            hit = index.lookup(print_, threshold)
            if hit is not None:
                keep[row] = False
                report.overlaps.append(Overlap(training.origin[row], hit.key, hit.tier, hit.distance))
            if row % 256 == 255:
                advance(256)
        advance(len(training) % 256)
    cache.flush()
    report.checked = len(training)
    return np.flatnonzero(keep), report


def apply_guard(
    training: TrainingSet,
    snapshots: list[Snapshot],
    threshold: int,
    cache_dir: Path,
    strict: bool,
    report_path: Path | None,
) -> tuple[TrainingSet, GuardReport]:
    """Drop overlapping rows (writing the report when given a path), or refuse under `strict`."""
    keep, report = check_overlaps(training, snapshots, threshold, cache_dir)
    if report_path is not None:
        report.save(report_path)
    if report.overlaps and strict:
        first = report.overlaps[0]
        raise TrainError(
            f"--strict: {len(report.overlaps)} training image(s) overlap the evaluation snapshots, e.g. {first.train} "
            f"matches {first.evaluation} ({first.tier}, distance {first.distance:g}); see {report_path}"
        )
    if not len(keep):
        raise TrainError(f"every training image overlaps the evaluation snapshots; see {report_path}")
    return (training if len(keep) == len(training) else training.select(keep)), report
