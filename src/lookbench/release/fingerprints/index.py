"""An in-memory index of fingerprints answering exact and near-duplicate look-ups, colour-checked."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from lookbench.images import decode_image
from lookbench.release.fingerprints.colour import colour_difference, lab_thumbnail
from lookbench.release.fingerprints.hashes import Fingerprint, hamming, to_words

MAX_CANDIDATES = 8
"""Perceptual candidates colour-checked per look-up, nearest first."""


@dataclass(frozen=True)
class Match:
    """A hit: which indexed entry, by which tier, at what distance (Hamming bits; 0 for exact)."""

    key: str
    tier: str
    distance: float


@dataclass
class Lookup:
    """The outcome of one look-up: the match, and how many pHash candidates the colour check kept apart."""

    match: Match | None
    colour_rejected: int = 0


@dataclass
class FingerprintIndex:
    """Entries keyed by a caller's label; brute-force Hamming search (fine to ~10^5 entries).

    `image_of(key)` returns an entry's encoded bytes; it is called only for pHash candidates, to compare colours.
    """

    image_of: Callable[[str], bytes]
    keys: list[str] = field(default_factory=list)
    by_sha: dict[str, int] = field(default_factory=dict)
    _hashes: list[str] = field(default_factory=list)
    _matrix: np.ndarray | None = None
    _labs: dict[str, np.ndarray] = field(default_factory=dict)

    def add(self, key: str, sha: str, phash: str) -> None:
        """Index one image by its sha256 and pHash (hex)."""
        self.by_sha.setdefault(sha, len(self.keys))
        self.keys.append(key)
        self._hashes.append(phash)
        self._matrix = None

    def _lab(self, key: str) -> np.ndarray:
        if key not in self._labs:
            self._labs[key] = lab_thumbnail(decode_image(self.image_of(key)))
        return self._labs[key]

    def lookup(self, query: Fingerprint, threshold: int, colour_threshold: float) -> Lookup:
        """The exact match, else the nearest pHash match within `threshold` bits whose colours agree."""
        if query.sha256 in self.by_sha:
            return Lookup(Match(self.keys[self.by_sha[query.sha256]], "exact", 0))
        if not self._hashes:
            return Lookup(None)
        if self._matrix is None:
            self._matrix = to_words(self._hashes)
        straight = hamming(self._matrix, to_words([query.phash])[0])
        mirrored = hamming(self._matrix, to_words([query.phash_mirror])[0])
        distances = np.minimum(straight, mirrored)
        near = np.flatnonzero(distances <= threshold)
        rejected = 0
        for index in near[np.argsort(distances[near], kind="stable")][:MAX_CANDIDATES]:
            key = self.keys[int(index)]
            lab = query.lab[:, ::-1] if mirrored[index] < straight[index] else query.lab
            if colour_difference(lab, self._lab(key)) <= colour_threshold:
                return Lookup(Match(key, "perceptual", int(distances[index])), rejected)
            rejected += 1
        return Lookup(None, rejected)

    def __len__(self) -> int:
        return len(self.keys)
