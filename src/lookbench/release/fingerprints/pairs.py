"""Candidate pairs and pair decisions over stored fingerprints: what a sharded, order-independent dedup is made of.

A batch image's candidates are searched in the history's store and in the whole batch's (the index is the same for
every shard, so the candidates are too); a pair is then decided from the two images' stored fingerprints and views
alone, with the tiers of a look-up (`search.duplicates.index`): exact sha256, else pHash (or the mirror's) within
the threshold and the colour check, else a crop aligned from the stored views whose overlap passes pHash and colour.
A pair is always decided the same way round (the later image is the query), so its decision does not depend on who
found it.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from PIL import Image, ImageOps

from lookbench._util.images import decode_image
from lookbench.release.config import DedupConfig
from lookbench.search.duplicates.colour import colour_difference, lab_thumbnail
from lookbench.search.duplicates.crops import CropPairs, CropView, Placement, align
from lookbench.search.duplicates.hashes import hamming
from lookbench.search.duplicates.index import (
    CROP_CANDIDATE_BITS,
    MAX_CANDIDATES,
    MAX_CROP_CANDIDATES,
    overlap_difference,
    start_pairs,
)
from lookbench.search.duplicates.keys import MappedKeys
from lookbench.search.duplicates.store import StoredCodes
from lookbench.search.duplicates.tables import (
    Backend,
    Codes,
    default_backend,
    nearest_pairs,
    phash_table,
    window_distances,
    window_table,
)

CACHED = 256
"""Decoded images, colour thumbnails and crop views kept per side (a shard's pairs are sorted by query)."""


@dataclass(frozen=True)
class Decision:
    """A pair's outcome: the tier that accepted it (None: kept apart), at what distance, and how many colour checks
    kept it apart on the way."""

    tier: str | None
    distance: float
    colour_rejected: int


class Memo:
    """The last `CACHED` values computed per key."""

    def __init__(self) -> None:
        self._values: OrderedDict[tuple[int, bool], object] = OrderedDict()

    def get(self, key: tuple[int, bool], make: Callable[[], object]) -> object:
        """The value of `key`, computed by `make` when it is not held."""
        if key in self._values:
            self._values.move_to_end(key)
        else:
            self._values[key] = make()
            if len(self._values) > CACHED:
                self._values.popitem(last=False)
        return self._values[key]


@dataclass
class Entries:
    """Stored fingerprints searched and compared by row: the history's store or the batch's.

    `image_of(row)` gives a row's encoded image (decoded only for a colour check or a crop's overlap); `mirror` and
    `mirror_windows` hold the pHash words and window hashes of each row's mirror image (the batch, whose rows are
    queries)."""

    stored: StoredCodes
    image_of: Callable[[int], bytes]
    mirror: np.ndarray | None = None
    mirror_windows: np.ndarray | None = None
    crop_pairs: CropPairs = "all"
    backend: Backend = field(default_factory=default_backend)
    _memo: dict[str, Memo] = field(init=False, default_factory=dict)

    def __post_init__(self) -> None:
        self.phashes = phash_table(self.backend, Codes.of(np.asarray(self.stored.phash)))
        self.windows = window_table(
            self.backend, Codes.of(np.asarray(self.stored.windows)), Codes.of(np.asarray(self.stored.present))
        )
        self.keys = MappedKeys(self.stored.keys, self.stored.sha)
        self._memo = {name: Memo() for name in ("image", "lab", "view", "windows")}

    def __len__(self) -> int:
        return len(self.stored)

    def key(self, row: int) -> str:
        """A row's key."""
        return self.keys[row]

    def sha_hex(self, row: int) -> str:
        """A row's sha256 as hex."""
        return "".join(f"{int(word):016x}" for word in self.stored.sha[row])

    def present(self, row: int) -> bool:
        """Whether a row takes part in the crop tier (not too flat)."""
        return bool(self.stored.present[row, 0])

    def image(self, row: int, mirrored: bool = False) -> Image.Image:
        """A row's decoded image (or its mirror)."""

        def make() -> Image.Image:
            image = decode_image(self.image_of(row))
            return ImageOps.mirror(image) if mirrored else image

        found = self._memo["image"].get((row, mirrored), make)
        assert isinstance(found, Image.Image)
        return found

    def lab(self, row: int) -> np.ndarray:
        """A row's CIELAB thumbnail."""
        found = self._memo["lab"].get((row, False), lambda: lab_thumbnail(self.image(row)))
        assert isinstance(found, np.ndarray)
        return found

    def view(self, row: int, mirrored: bool = False) -> CropView:
        """A row's stored crop view (or its mirror's)."""

        def make() -> CropView:
            view = self.stored.view(row)
            return view.mirrored() if mirrored else view

        found = self._memo["view"].get((row, mirrored), make)
        assert isinstance(found, CropView)
        return found

    def window_codes(self, row: int, mirrored: bool = False) -> np.ndarray:
        """A row's window hashes, or its mirror's (stored with a batch, else computed from its stored view)."""
        if not mirrored:
            return np.asarray(self.stored.windows[row])
        if self.mirror_windows is not None:
            return self.mirror_windows[row]
        found = self._memo["windows"].get((row, True), lambda: self.view(row, True).windows)
        assert isinstance(found, np.ndarray)
        return found

    def query_words(self, row: int) -> np.ndarray:
        """(2, 4) pHash words of a row's image and of its mirror."""
        if self.mirror is None:
            raise ValueError("these entries hold no mirror pHashes: they are not queries")
        return np.stack([np.asarray(self.stored.phash[row]), self.mirror[row]])


def candidate_rows(
    query: Entries, rows: list[int], against: Entries, settings: DedupConfig, exclude: Callable[[int], np.ndarray]
) -> list[list[int]]:
    """For each batch row of `rows`, the rows of `against` it is paired with, ascending: the row holding its bytes
    when there is one, else its nearest `MAX_CANDIDATES` pHash neighbours within the threshold and (with crops) its
    nearest `MAX_CROP_CANDIDATES` by window pairs, straight and mirrored; never a row of `exclude(row)`. The window
    searches of all the rows run together (one k-nearest search per side), with the same answers as one by one."""
    found: dict[int, set[int]] = {}
    cropped: dict[int, list[int]] = {}
    for q in rows:
        left_out = exclude(q)
        exact = against.keys.row_of(query.sha_hex(q))
        if exact is not None and exact not in left_out:
            found[q] = {exact}
            continue
        both = query.query_words(q)
        near = against.phashes.within(both, settings.phash_threshold)
        near = near[~np.isin(near, left_out)]
        distances = np.minimum(*(hamming(against.phashes.codes.matrix[near], words) for words in both))
        found[q] = {int(row) for row in near[np.lexsort((near, distances))[:MAX_CANDIDATES]]}
        if settings.crops and query.present(q):
            cropped.setdefault(len(left_out), []).append(q)
    for extra, queries in sorted(cropped.items()):
        for mirrored in (False, True):
            codes = np.stack([query.window_codes(q, mirrored) for q in queries])
            limit = MAX_CROP_CANDIDATES + extra
            answers = against.windows.nearest_many(codes, CROP_CANDIDATE_BITS, limit, against.crop_pairs)
            for q, got in zip(queries, answers, strict=True):
                found[q].update(int(row) for row in got[~np.isin(got, exclude(q))][:MAX_CROP_CANDIDATES])
    return [sorted(found[q]) for q in rows]


def decide_pair(query: Entries, q: int, indexed: Entries, i: int, settings: DedupConfig) -> Decision:
    """Whether batch row `q` duplicates row `i` of `indexed`, read from their stored fingerprints and views: equal
    bytes; else pHashes within the threshold (straight or mirrored) and colours that agree; else (with crops) a
    window pair the crop-candidate rule counts within the candidate radius, an alignment, and an overlap within the
    crop threshold whose colours agree."""
    if np.array_equal(query.stored.sha[q], indexed.stored.sha[i]):
        return Decision("exact", 0.0, 0)
    rejected = 0
    words = query.query_words(q)
    straight, mirrored = (int(hamming(words[side], np.asarray(indexed.stored.phash[i]))) for side in (0, 1))
    if min(straight, mirrored) <= settings.phash_threshold:
        lab = query.lab(q)[:, ::-1] if mirrored < straight else query.lab(q)
        if colour_difference(lab, indexed.lab(i)) <= settings.colour_threshold:
            return Decision("perceptual", float(min(straight, mirrored)), 0)
        rejected += 1
    if not (settings.crops and query.present(q) and indexed.present(i)):
        return Decision(None, 0.0, rejected)
    target = indexed.view(i)
    codes = np.asarray(indexed.stored.windows[i : i + 1])
    for flip in (False, True):
        windows = query.window_codes(q, flip)
        if int(nearest_pairs(windows, codes, indexed.crop_pairs, indexed.windows.flips)[0]) > CROP_CANDIDATE_BITS:
            continue
        view = query.view(q, flip)
        ratio = target.aspect / view.aspect
        distances = window_distances(windows, codes)[0]
        starts = [Placement.from_windows(a, b, ratio) for a, b in start_pairs(distances)]
        aligned = align(view, target, starts)
        boxes = aligned[0].overlap() if aligned is not None else None
        if boxes is None:
            continue
        bits, colour = overlap_difference(query.image(q, flip), indexed.image(i), boxes, settings.crop_phash_threshold)
        if bits > settings.crop_phash_threshold:
            continue
        if colour <= settings.colour_threshold:
            return Decision("crop", float(bits), rejected)
        rejected += 1
    return Decision(None, 0.0, rejected)
