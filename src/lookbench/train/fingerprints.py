"""The builder's duplicate tiers (exact sha256, mirror-robust 256-bit pHash), reached from this one module.

Everything the contamination guard needs from the builder's dedup code goes through here, so a move or rename of
that code (`lookbench.build.dedup` -> `lookbench.release`) and any new tier is a change in this file only.
"""

from __future__ import annotations

from dataclasses import dataclass

from lookbench.build.dedup.hashes import phash_pair, sha256_hex
from lookbench.build.dedup.index import FingerprintIndex

TIERS = ("exact", "perceptual")


@dataclass(frozen=True)
class Fingerprint:
    """sha256 of the bytes and the pHashes of the image and of its mirror image (hex)."""

    sha256: str
    phash: str
    mirrored: str


@dataclass(frozen=True)
class Hit:
    """The indexed entry a fingerprint matched, by which tier, at what distance."""

    key: str
    tier: str
    distance: float


def fingerprint(data: bytes) -> Fingerprint:
    """Fingerprint encoded image bytes (raises on an image that does not decode)."""
    phash, mirrored = phash_pair(data)
    return Fingerprint(sha256_hex(data), phash, mirrored)


class Index:
    """Fingerprints of evaluation images, answering exact and near-duplicate look-ups."""

    def __init__(self) -> None:
        self._index = FingerprintIndex()

    def add(self, key: str, print_: Fingerprint) -> None:
        """Index one image under `key`."""
        self._index.add(key, print_.sha256, print_.phash)

    def lookup(self, print_: Fingerprint, threshold: int) -> Hit | None:
        """The exact match, else the nearest within `threshold` bits (mirror-robust), else None."""
        match = self._index.lookup(print_.sha256, print_.phash, print_.mirrored, threshold)
        return None if match is None else Hit(match.key, match.tier, float(match.distance))

    def __len__(self) -> int:
        return len(self._index)
