"""Which samples of a snapshot also occur in an image folder (e.g. a training set): exact, perceptual, cropped."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from lookbench._util.images import BadImageError
from lookbench.search.duplicates.hashes import fingerprint
from lookbench.search.duplicates.history import snapshot_parts
from lookbench.search.duplicates.index import FingerprintIndex
from lookbench.snapshot.reader import Snapshot

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
    index = FingerprintIndex(lambda key: (folder / key).read_bytes())
    for path in sorted(p for p in folder.rglob("*") if p.is_file() and p.suffix.lower() in IMAGE_SUFFIXES):
        try:
            found = fingerprint(path.read_bytes())
        except (OSError, BadImageError) as exc:
            report.unreadable.append(f"{path}: {exc}")
            continue
        index.add(path.relative_to(folder).as_posix(), found.sha256, found.phash, found.windows)
    report.folder_images = len(index)
    return index


def find_contamination(
    snapshot: Snapshot, folder: Path, threshold: int, colour_threshold: float
) -> ContaminationReport:
    """Look every snapshot image up in the folder's index (sha256, then mirror-robust pHash, then cropped copies;
    both colour-checked)."""
    report = ContaminationReport()
    index = index_folder(folder, report)
    for subset, split in snapshot_parts(snapshot):
        ids = snapshot.labels(subset, split).item_id
        for start, images in snapshot.iter_images(subset, split):
            for offset, data in enumerate(images):
                row = start + offset
                report.snapshot_rows += 1
                if not data:
                    continue
                try:
                    query = fingerprint(data)
                except BadImageError as exc:
                    report.unreadable.append(f"{snapshot.root}/{subset}/{split} row {row}: {exc}")
                    continue
                match = index.lookup(query, threshold, colour_threshold).match
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
