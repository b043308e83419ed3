"""The crop tier: cropped copies found by pHashes of sub-windows, then aligned and checked like a perceptual match.

Cropping 5% off each side moves an image's 256-bit pHash by more than 80 bits, so the perceptual tier misses it.
Every image also gets a 64-bit pHash of each of `WINDOWS` (the full frame, centred windows, windows cut on one side
or at one corner). A query's windows are compared with every indexed image's windows, all pairs: the query's full
frame against an indexed window finds a crop of the indexed image, a query window against the indexed full frame
finds an indexed crop of the query, and window against window finds two crops of one photo. The nearest indexed
images become candidates; the pair of windows that matched says roughly where the query sits in the candidate.
That placement is refined by normalised cross-correlation of grey thumbnails, coarse to fine (`alignment.py`: a
candidate that correlates poorly after a coarse step is given up), and the overlap of the two images must then pass
the perceptual tier's own gates (`index.py`): 256-bit pHash distance within the threshold and the colour check.
The thresholds are measured in docs/release.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Literal

import numpy as np
import scipy.fftpack
from PIL import Image

from lookbench.search.duplicates import alignment

Box = tuple[float, float, float, float]
"""(left, top, right, bottom) as fractions of an image's width and height."""

FULL: Box = (0.0, 0.0, 1.0, 1.0)

Edges = tuple[float, float, float, float]
"""A placement as plain floats, (left, top, right, bottom): the alignment's inner loop builds no objects."""


def _cut(left: float = 0.0, top: float = 0.0, right: float = 0.0, bottom: float = 0.0) -> Box:
    return (left, top, 1.0 - right, 1.0 - bottom)


WINDOWS: tuple[Box, ...] = (
    FULL,
    *(_cut(s, s, s, s) for s in (0.04, 0.08, 0.12)),
    _cut(left=0.08),
    _cut(top=0.08),
    _cut(right=0.08),
    _cut(bottom=0.08),
    _cut(left=0.08, top=0.08),
    _cut(top=0.08, right=0.08),
    _cut(right=0.08, bottom=0.08),
    _cut(left=0.08, bottom=0.08),
)
"""Where the 64-bit window hashes are taken; changing it changes every stored window hash (`WINDOWS_ID`)."""
MIN_CONTRAST = 2.0
"""Grey standard deviation (0-255) below which an image is too flat to align: it takes no part in the crop tier."""

_SIDE = 128
GREY_BYTES = _SIDE * _SIDE
"""Bytes of a view's grey thumbnail (uint8, row by row): what a history store keeps so its views need no decode."""
WINDOWS_ID = f"w{len(WINDOWS)}-phash64-grey{_SIDE}-flat{MIN_CONTRAST:g}"
"""Names the window set, how its hashes are computed and which images have none; part of the fingerprint cache's
file name, so cached window hashes are never read under other settings."""
_START_FLOOR = 0.5
"""Candidates correlating below this at the start are given up at once (`alignment.START_FLOOR`; read at each
alignment, so a benchmark can try another)."""

CropPairs = Literal["all", "full-frame"]
"""Which (query window, indexed window) pairs the crop tier's candidate search compares (`dedup.crop_pairs`,
docs/release.md): `all` 12 x 12 (`WINDOWS`; two different crops of one photo included), or
`full-frame` only those with a full frame on either side (a crop of an indexed image, or an indexed crop of the
query): 2 x 12 - 1 pairs."""


class CropView:
    """An image as the crop tier sees it: a grey thumbnail, its window hashes and alignment levels (computed once)."""

    def __init__(self, grey: Image.Image, aspect: float) -> None:
        self.grey = grey
        self.aspect = aspect
        """Width over height of the image itself (the thumbnail is square)."""

    @classmethod
    def of(cls, image: Image.Image) -> CropView:
        """The view of an image (aspect squashed into a square: windows are fractions of the frame)."""
        return cls(image.convert("L").resize((_SIDE, _SIDE), Image.Resampling.BOX), image.width / image.height)

    @classmethod
    def of_grey(cls, grey: bytes | np.ndarray, aspect: float) -> CropView:
        """The view whose thumbnail is `grey` (GREY_BYTES, as `grey_bytes` gives them) of an image of that aspect."""
        return cls(Image.frombytes("L", (_SIDE, _SIDE), bytes(grey)), aspect)

    def grey_bytes(self) -> bytes:
        """The grey thumbnail's GREY_BYTES pixels, row by row (`of_grey` rebuilds the view from them)."""
        return self.grey.tobytes()

    def mirrored(self) -> CropView:
        """The view of the image's horizontal mirror."""
        return CropView(self.grey.transpose(Image.Transpose.FLIP_LEFT_RIGHT), self.aspect)

    @cached_property
    def levels(self) -> tuple[np.ndarray, np.ndarray]:
        """Float thumbnails the alignment samples, transposed (`alignment.resampled`): 64 x 64 for its 32 x 32
        samples, 128 x 128 for its 64 x 64."""
        fine = np.frombuffer(self.grey.tobytes(), dtype=np.uint8).reshape(_SIDE, _SIDE).astype(np.float64)
        # Pillow's BOX halving of a float image: each pair of pixels weighted 0.5, across then down, float32 between.
        across = (fine[:, 0::2] * 0.5 + fine[:, 1::2] * 0.5).astype(np.float32).astype(np.float64)
        coarse = (across[0::2] * 0.5 + across[1::2] * 0.5).astype(np.float32)
        return np.ascontiguousarray(coarse.T), np.ascontiguousarray(fine.astype(np.float32).T)

    @cached_property
    def flat(self) -> bool:
        """Too little contrast to align (a flat colour field, a 1x1 image)."""
        return float(np.asarray(self.grey, dtype=np.float32).std()) < MIN_CONTRAST

    @cached_property
    def windows(self) -> np.ndarray:
        """The 64-bit pHash of every window of WINDOWS, as uint64."""
        smalls = np.stack(
            [
                np.asarray(self.grey.resize((32, 32), Image.Resampling.LANCZOS, box=_pixels(box, _SIDE, _SIDE)))
                for box in WINDOWS
            ]
        )
        # imagehash.phash(hash_size=8) of every window at once: the same transforms, in one call each.
        low = scipy.fftpack.dct(scipy.fftpack.dct(smalls, axis=1), axis=2)[:, :8, :8].reshape(len(WINDOWS), 64)
        bits = low > np.median(low, axis=1, keepdims=True)
        return np.packbits(bits, axis=1).view(">u8").astype(np.uint64).ravel()


def _pixels(box: Box, width: int, height: int) -> tuple[float, float, float, float]:
    return (box[0] * width, box[1] * height, box[2] * width, box[3] * height)


def region(image: Image.Image, box: Box, side: int, resample: Image.Resampling) -> Image.Image:
    """The part `box` of an image, resampled to side x side."""
    return image.resize((side, side), resample, box=_pixels(box, *image.size))


@dataclass(frozen=True)
class Placement:
    """Where the query's frame edges fall in the indexed image, as fractions of the indexed image's frame.

    A crop, and any resize that keeps the aspect ratio, only scales and shifts: in pixels, the query's frame is
    the same scale across as down. In fractions of the indexed frame its height is therefore `ratio` (the indexed
    image's width/height over the query's) times its width, and every placement here keeps that: stretching one
    image onto another (ankle-length trousers onto full-length ones) is never a match.
    """

    left: float
    top: float
    right: float
    bottom: float

    @classmethod
    def from_windows(cls, query_window: Box, indexed_window: Box, ratio: float) -> Placement:
        """The placement under which the two windows show about the same content, as a pure scale and shift."""
        qx0, qy0, qx1, qy1 = query_window
        ix0, iy0, ix1, iy1 = indexed_window
        sx, sy = (ix1 - ix0) / (qx1 - qx0), (iy1 - iy0) / (qy1 - qy0)
        cx, cy = ix0 + sx * (0.5 - qx0), iy0 + sy * (0.5 - qy0)
        width = float(np.sqrt(sx * sy / ratio))
        height = width * ratio
        return cls(cx - width / 2, cy - height / 2, cx + width / 2, cy + height / 2)

    @property
    def edges(self) -> Edges:
        """(left, top, right, bottom)."""
        return (self.left, self.top, self.right, self.bottom)

    def overlap(self) -> tuple[Box, Box] | None:
        """(the overlap in query fractions, in indexed fractions), or None when it keeps too little of either."""
        return _overlap(self.edges)


def _overlap(edges: Edges) -> tuple[Box, Box] | None:
    enough, query, indexed = alignment.overlap(np.array(edges, dtype=np.float64))
    return (query, indexed) if enough else None


def align(query: CropView, indexed: CropView, starts: list[Placement]) -> tuple[Placement, float] | None:
    """The placement of `query` in `indexed` that correlates best near the best of `starts`, or None if given up."""
    found, edges, best = alignment.climb(
        query.levels,
        indexed.levels,
        np.array([start.edges for start in starts], dtype=np.float64),
        indexed.aspect / query.aspect,
        _START_FLOOR,
    )
    return (Placement(*(float(edge) for edge in edges)), float(best)) if found else None
