"""The builder's duplicate tiers (exact sha256; mirror-robust 256-bit pHash, checked by colour), from one module.

Everything the contamination guard needs from the builder's fingerprint code goes through here, so a move or a
new tier there is a change in this file only.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from lookbench._util.hashing import sha256_hex
from lookbench.search.duplicates.hashes import Fingerprint, fingerprint
from lookbench.search.duplicates.history import PublishedImages, cached_snapshot_fingerprints
from lookbench.search.duplicates.index import FingerprintIndex
from lookbench.snapshot.reader import Snapshot

__all__ = ["EvaluationIndex", "Fingerprint", "Hit", "training_fingerprint"]


@dataclass(frozen=True)
class Hit:
    """The evaluation image a training image matched (`version/subset/split#row`), by which tier, how far."""

    key: str
    tier: str
    distance: float


def training_fingerprint(data: bytes, hashes: tuple[str, str] | None = None) -> tuple[Fingerprint, tuple[str, str]]:
    """The fingerprint of encoded bytes and its (pHash, mirrored pHash); cached `hashes` skip recomputing them."""
    if hashes is None:
        found = fingerprint(data)
        return found, (found.phash, found.phash_mirror)
    return Fingerprint(sha256_hex(data), hashes[0], hashes[1], data), hashes


class EvaluationIndex:
    """Every image of some evaluation snapshots (all splits, noise included), fingerprints cached by content."""

    def __init__(self, cache: Path) -> None:
        self.cache = cache
        self._images: list[PublishedImages] = []
        self._index = FingerprintIndex(self._image)

    def _image(self, key: str) -> bytes:
        number, _, row_key = key.partition("|")
        return self._images[int(number)](row_key)

    def add_snapshot(self, snapshot: Snapshot) -> int:
        """Index every image of `snapshot`; returns how many."""
        number = len(self._images)
        self._images.append(PublishedImages(snapshot.root.parent))
        table = cached_snapshot_fingerprints(snapshot, self.cache).read(["key", "sha256", "phash"])
        columns = (table[c].to_pylist() for c in ("key", "sha256", "phash"))
        for key, sha, phash in zip(*columns, strict=True):
            self._index.add(f"{number}|{key}", sha, phash)
        return table.num_rows

    def lookup(self, query: Fingerprint, threshold: int, colour_threshold: float) -> Hit | None:
        """The exact match, else the nearest pHash match within `threshold` whose colours agree, else None."""
        match = self._index.lookup(query, threshold, colour_threshold).match
        return None if match is None else Hit(match.key.partition("|")[2], match.tier, float(match.distance))
