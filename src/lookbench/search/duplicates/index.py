"""An in-memory index of fingerprints answering exact, near-duplicate and cropped-copy look-ups, colour-checked."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field

import numpy as np
from PIL import Image, ImageOps

from lookbench._util.images import decode_image
from lookbench.search.duplicates.colour import SIDE, colour_difference, lab_thumbnail
from lookbench.search.duplicates.crops import WINDOWS, Box, CropPairs, CropView, Placement, align, region
from lookbench.search.duplicates.hashes import Fingerprint, fingerprint, hamming, phash_hex, to_words
from lookbench.search.duplicates.keys import Keys, MappedKeys, MemoryKeys
from lookbench.search.duplicates.store import StoredCodes
from lookbench.search.duplicates.tables import (
    Backend,
    Codes,
    PhashTable,
    WindowTable,
    default_backend,
    phash_table,
    window_table,
)

MAX_CANDIDATES = 8
"""Perceptual candidates colour-checked per look-up, nearest first."""
CROP_THRESHOLD = 16
"""Of 256: the default pHash gate of a crop-tier overlap (`dedup.crop_phash_threshold`, docs/release.md)."""
CROP_CANDIDATE_BITS = 16
"""Of 64: an indexed image with any window pair this close to the query's is a crop-tier candidate."""
MAX_CROP_CANDIDATES = 16
"""Crop-tier candidates aligned per look-up (and per mirror side), nearest first."""
START_PAIRS = 4
START_SLACK_BITS = 4
"""A candidate's alignment starts from the best-correlating of its `START_PAIRS` nearest window pairs that are
within `START_SLACK_BITS` of its nearest."""
VIEW_CACHE = 1024
"""Crop views of indexed images kept (~100 KB each with their alignment levels): candidates recur across look-ups."""


@dataclass(frozen=True)
class Match:
    """A hit: which indexed entry, by which tier, at what distance (Hamming bits; 0 for exact)."""

    key: str
    tier: str
    distance: float


@dataclass
class Lookup:
    """The outcome of one look-up: the match, and how many candidates the colour check kept apart."""

    match: Match | None
    colour_rejected: int = 0


@dataclass(frozen=True)
class Candidate:
    """An indexed image a look-up considers: by which tier, at what pHash distance, how different in colour."""

    key: str
    tier: str
    distance: int
    colour: float


def decide(
    candidates: Iterable[Candidate], threshold: int, colour_threshold: float, crop_threshold: int = CROP_THRESHOLD
) -> Lookup:
    """The first candidate within `threshold` bits (`crop_threshold` for the crop tier) whose colour difference is
    within `colour_threshold`."""
    rejected = 0
    for candidate in candidates:
        if candidate.distance > (crop_threshold if candidate.tier == "crop" else threshold):
            continue
        if candidate.colour <= colour_threshold:
            return Lookup(Match(candidate.key, candidate.tier, candidate.distance), rejected)
        rejected += 1
    return Lookup(None, rejected)


def start_pairs(distances: np.ndarray) -> list[tuple[Box, Box]]:
    """(query window, indexed window) pairs to start aligning from: an entry's nearest pairs (a lone pair may be a
    coincidence), given its (W * W) window-pair distances."""
    nearest = distances.min()
    pairs = np.argsort(distances, kind="stable")[:START_PAIRS]
    pairs = pairs[distances[pairs] <= nearest + START_SLACK_BITS]
    return [(WINDOWS[p % len(WINDOWS)], WINDOWS[p // len(WINDOWS)]) for p in pairs]


def overlap_difference(
    query: Image.Image, indexed: Image.Image, boxes: tuple[Box, Box], threshold: int
) -> tuple[int, float]:
    """(pHash bits, colour difference) of the overlapping parts of two images, the perceptual tier's two gates; the
    colour is measured only when the bits are within `threshold` (else infinite)."""
    parts = [region(im, box, 4 * SIDE, Image.Resampling.BOX) for im, box in zip((query, indexed), boxes, strict=True)]
    bits = int(hamming(to_words([phash_hex(parts[0])])[0], to_words([phash_hex(parts[1])])[0]))
    if bits > threshold:
        return bits, float("inf")
    return bits, colour_difference(lab_thumbnail(parts[0]), lab_thumbnail(parts[1]))


@dataclass
class FingerprintIndex:
    """Entries keyed by a caller's label, searched through appendable code tables (`tables.py`): faiss indexes
    when faiss-cpu is installed, an exact numpy scan otherwise; both give the same candidates.

    `image_of(key)` returns an entry's encoded bytes; it is called only for candidates, to compare colours or to
    align a crop (a crop candidate of `stored` rows has its view read from there, not decoded). Entries added without
    window hashes take no part in the crop tier. `crop_pairs` says which window pairs make a crop-tier candidate
    (`CropPairs`).
    """

    image_of: Callable[[str], bytes]
    backend: Backend = field(default_factory=default_backend)
    crop_pairs: CropPairs = "all"
    keys: Keys = field(default_factory=MemoryKeys)
    stored: StoredCodes | None = None
    """The stored fingerprints the first entries are (`of_store`): their crop views are read from it."""
    _phashes: PhashTable = field(init=False)
    _windows: WindowTable = field(init=False)
    _labs: dict[str, np.ndarray] = field(default_factory=dict)
    _views: OrderedDict[str, CropView] = field(default_factory=OrderedDict)

    def __post_init__(self) -> None:
        self._phashes = phash_table(self.backend)
        self._windows = window_table(self.backend)

    @classmethod
    def of_store(
        cls, image_of: Callable[[str], bytes], stored: StoredCodes, crop_pairs: CropPairs = "all"
    ) -> FingerprintIndex:
        """An index over stored fingerprints, searched in place (memory-mapped codes stay on disk)."""
        index = cls(image_of, keys=MappedKeys(stored.keys, stored.sha), crop_pairs=crop_pairs, stored=stored)
        index._phashes = phash_table(index.backend, Codes.of(stored.phash))
        index._windows = window_table(index.backend, Codes.of(stored.windows), Codes.of(stored.present))
        return index

    @classmethod
    def of_images(cls, images: Mapping[str, bytes], crop_pairs: CropPairs = "all") -> FingerprintIndex:
        """An index over encoded images by key, crop tier included (BadImageError if one does not decode)."""
        index = cls(images.__getitem__, crop_pairs=crop_pairs)
        for key, data in images.items():
            found = fingerprint(data)
            index.add(key, found.sha256, found.phash, found.windows)
        return index

    def add(self, key: str, sha: str, phash: str, windows: np.ndarray | None = None) -> None:
        """Index one image by its sha256, pHash (hex) and, for the crop tier, its window hashes (O(1) amortised)."""
        present = np.array([windows is not None])
        self.add_many(
            [key],
            [sha],
            to_words([phash]),
            np.zeros((1, len(WINDOWS)), np.uint64) if windows is None else windows[None],
            present,
        )

    def add_many(
        self, keys: list[str], shas: list[str], phashes: np.ndarray, windows: np.ndarray, present: np.ndarray
    ) -> None:
        """Index n images at once: their (n, 4) pHash words, (n, W) window hashes and which have windows."""
        self.keys.extend(keys, shas)
        self._phashes.add(phashes)
        self._windows.add(windows, present)

    def _lab(self, key: str) -> np.ndarray:
        if key not in self._labs:
            self._labs[key] = lab_thumbnail(decode_image(self.image_of(key)))
        return self._labs[key]

    def _view(self, row: int, key: str) -> CropView:
        if key in self._views:
            self._views.move_to_end(key)
        else:
            stored = self.stored
            if stored is not None and row < len(stored):
                self._views[key] = stored.view(row)
            else:
                self._views[key] = CropView.of(decode_image(self.image_of(key)))
            if len(self._views) > VIEW_CACHE:
                self._views.popitem(last=False)
        return self._views[key]

    def lookup(
        self,
        query: Fingerprint,
        threshold: int,
        colour_threshold: float,
        crops: bool = True,
        crop_threshold: int = CROP_THRESHOLD,
    ) -> Lookup:
        """The exact match, else the nearest pHash match within `threshold` bits whose colours agree, else (with
        `crops`) a cropped copy whose aligned overlap is within `crop_threshold` bits and agrees in colour."""
        found = self.candidates(query, max(threshold, crop_threshold), crops)
        return decide(found, threshold, colour_threshold, crop_threshold)

    def candidates(self, query: Fingerprint, threshold: int, crops: bool = True) -> Iterator[Candidate]:
        """Every candidate a look-up would consider, in the order it considers them, computed as they are taken.

        Perceptual candidates are those within `threshold` bits; a crop candidate's colour is measured only when
        its aligned overlap is within `threshold` bits (else it is infinite).
        """
        row = self.keys.row_of(query.sha256)
        if row is not None:
            yield Candidate(self.keys[row], "exact", 0, 0.0)
            return
        if not len(self.keys):
            return
        yield from self._perceptual(query, threshold)
        if crops and not query.view.flat:
            yield from self._cropped(query, threshold)

    def _perceptual(self, query: Fingerprint, threshold: int) -> Iterator[Candidate]:
        both = to_words([query.phash, query.phash_mirror])
        rows = self._phashes.within(both, threshold)
        words = self._phashes.codes.matrix[rows]
        straight, mirrored = hamming(words, both[0]), hamming(words, both[1])
        distances = np.minimum(straight, mirrored)
        near = np.flatnonzero(distances <= threshold)
        for index in near[np.argsort(distances[near], kind="stable")][:MAX_CANDIDATES]:
            key = self.keys[int(rows[index])]
            lab = query.lab[:, ::-1] if mirrored[index] < straight[index] else query.lab
            yield Candidate(key, "perceptual", int(distances[index]), colour_difference(lab, self._lab(key)))

    def _cropped(self, query: Fingerprint, threshold: int) -> Iterator[Candidate]:
        for mirrored, view in ((False, query.view), (True, query.mirror_view)):
            image: Image.Image | None = None
            rows, distances = self._windows.nearest(
                view.windows, CROP_CANDIDATE_BITS, MAX_CROP_CANDIDATES, self.crop_pairs
            )
            for row, pairs in zip(rows.tolist(), distances, strict=True):
                key = self.keys[row]
                indexed = self._view(row, key)
                ratio = indexed.aspect / view.aspect
                starts = [Placement.from_windows(q, i, ratio) for q, i in start_pairs(pairs)]
                aligned = align(view, indexed, starts)
                boxes = aligned[0].overlap() if aligned is not None else None
                if boxes is None:
                    continue
                if image is None:
                    image = ImageOps.mirror(query.image) if mirrored else query.image
                bits, colour = overlap_difference(image, decode_image(self.image_of(key)), boxes, threshold)
                yield Candidate(key, "crop", bits, colour)

    def __len__(self) -> int:
        return len(self.keys)
