"""An in-memory index of fingerprints answering exact and near-duplicate look-ups."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from lookbench.release.dedup.hashes import flip_distances, phash_pair, sha256_hex, to_words


@dataclass(frozen=True)
class Match:
    """A hit: which indexed entry, by which tier, at what Hamming distance (0 for exact)."""

    key: str
    tier: str
    distance: float


@dataclass
class FingerprintIndex:
    """Entries keyed by a caller's label; brute-force Hamming search (fine to ~10^5 entries)."""

    keys: list[str] = field(default_factory=list)
    by_sha: dict[str, int] = field(default_factory=dict)
    _hashes: list[str] = field(default_factory=list)
    _matrix: np.ndarray | None = None

    def add(self, key: str, sha: str, phash: str) -> None:
        """Index one image by its sha256 and pHash (hex)."""
        self.by_sha.setdefault(sha, len(self.keys))
        self.keys.append(key)
        self._hashes.append(phash)
        self._matrix = None

    def add_image(self, key: str, data: bytes) -> None:
        """Index encoded image bytes."""
        self.add(key, sha256_hex(data), phash_pair(data)[0])

    def lookup(self, sha: str, phash: str, flipped: str, threshold: int) -> Match | None:
        """The exact match, else the nearest match within `threshold` bits (mirror-robust), else None."""
        if sha in self.by_sha:
            return Match(self.keys[self.by_sha[sha]], "exact", 0)
        if not self._hashes:
            return None
        if self._matrix is None:
            self._matrix = to_words(self._hashes)
        distances = flip_distances(to_words([phash])[0], to_words([flipped])[0], self._matrix)
        best = int(np.argmin(distances))
        if distances[best] <= threshold:
            return Match(self.keys[best], "perceptual", int(distances[best]))
        return None

    def __len__(self) -> int:
        return len(self.keys)
