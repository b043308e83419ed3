"""Which samples of a snapshot also occur in an image folder (e.g. a training set): exact and perceptual matches."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from lookbench.release.dedup.hashes import phash_pair, sha256_hex
from lookbench.release.dedup.index import FingerprintIndex
from lookbench.snapshot import NOISE
from lookbench.snapshot.reader import Snapshot
from lookbench.snapshot.schema import SPLITS

IMAGE_SUFFIXES = {".jpg", ".jpeg", ".png", ".webp", ".gif", ".bmp", ".tif", ".tiff"}


@dataclass
class ContaminationReport:
    """Matches per snapshot row, the folder's size and the files that could not be read."""

    folder_images: int = 0
    snapshot_rows: int = 0
    matches: list[dict[str, object]] = field(default_factory=list)
    unreadable: list[str] = field(default_factory=list)


def index_folder(folder: Path, report: ContaminationReport) -> FingerprintIndex:
    """Fingerprint every image file under `folder`; unreadable ones are listed in the report."""
    index = FingerprintIndex()
    for path in sorted(p for p in folder.rglob("*") if p.is_file() and p.suffix.lower() in IMAGE_SUFFIXES):
        try:
            index.add_image(path.relative_to(folder).as_posix(), path.read_bytes())
        except (OSError, ValueError, SyntaxError) as exc:
            report.unreadable.append(f"{path}: {exc}")
    report.folder_images = len(index)
    return index


def find_contamination(snapshot: Snapshot, folder: Path, threshold: int) -> ContaminationReport:
    """Look every snapshot image up in the folder's index (sha256 first, then mirror-robust pHash)."""
    report = ContaminationReport()
    index = index_folder(folder, report)
    parts = [(s, sp) for s in snapshot.subsets for sp in SPLITS]
    if snapshot.has_noise:
        parts.append((NOISE, "gallery"))
    for subset, split in parts:
        ids = snapshot.labels(subset, split).item_id
        for start, images in snapshot.iter_images(subset, split):
            for offset, data in enumerate(images):
                row = start + offset
                report.snapshot_rows += 1
                if not data:
                    continue
                phash, mirrored = phash_pair(data)
                match = index.lookup(sha256_hex(data), phash, mirrored, threshold)
                if match is not None:
                    report.matches.append(
                        {
                            "subset": subset,
                            "split": split,
                            "row": row,
                            "item_ID": ids[row],
                            "tier": match.tier,
                            "distance": match.distance,
                            "file": match.key,
                        }
                    )
    return report
