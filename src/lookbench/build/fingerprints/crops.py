"""The crop tier: cropped copies found by pHashes of sub-windows, then aligned and checked like a perceptual match.

Cropping 5% off each side moves an image's 256-bit pHash by more than 80 bits, so the perceptual tier misses it.
Every image also gets a 64-bit pHash of each of `WINDOWS` (the full frame, centred windows, windows cut on one side
or at one corner). A query's windows are compared with every indexed image's windows, all pairs: the query's full
frame against an indexed window finds a crop of the indexed image, a query window against the indexed full frame
finds an indexed crop of the query, and window against window finds two crops of one photo. The nearest indexed
images become candidates; the pair of windows that matched says roughly where the query sits in the candidate.
That placement is refined by normalised cross-correlation of grey thumbnails, coarse to fine (a candidate that
correlates poorly after a coarse step is given up), and the overlap of the two images must then pass the
perceptual tier's own gates (`index.py`): 256-bit pHash distance within the threshold and the colour check.
The thresholds are measured in docs/release.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
import scipy.fftpack
from PIL import Image

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
MIN_OVERLAP = 0.7
"""The overlap of a match keeps at least this share of each image's width and of its height."""
MIN_CONTRAST = 2.0
"""Grey standard deviation (0-255) below which an image is too flat to align: it takes no part in the crop tier."""

_SIDE = 128
GREY_BYTES = _SIDE * _SIDE
"""Bytes of a view's grey thumbnail (uint8, row by row): what a history store keeps so its views need no decode."""
WINDOWS_ID = f"w{len(WINDOWS)}-phash64-grey{_SIDE}-flat{MIN_CONTRAST:g}"
"""Names the window set, how its hashes are computed and which images have none; part of the fingerprint cache's
file name, so cached window hashes are never read under other settings."""
_KEPT_SAMPLES = 256
"""Resampled overlaps remembered per view (a query's own overlap is the same for every candidate inside it)."""
_STAGES: tuple[tuple[float, int, float], ...] = (
    (0.02, 32, 0.93),
    (0.01, 32, 0.95),
    (0.005, 64, 0.0),
    (0.0025, 64, 0.0),
)
"""(step as a share of the frame, thumbnail side, correlation below which the candidate is given up after it)."""
_START_FLOOR = 0.5
_FIRST_SWEEP_FLOOR = 0.85
"""Candidates correlating below these at the start, or after the first round of moves, are given up at once: on
Fashion-MNIST crops 99% of true pairs start above 0.85 and reach 0.96 after one round, half the others stay
below 0.8 (docs/release.md has the measured recall)."""
_MAX_SWEEPS = 6
"""Rounds of moves per stage; a candidate still climbing after that is far off anyway."""


class CropView:
    """An image as the crop tier sees it: a grey thumbnail, its window hashes and alignment levels (computed once)."""

    def __init__(self, grey: Image.Image, aspect: float) -> None:
        self.grey = grey
        self.aspect = aspect
        """Width over height of the image itself (the thumbnail is square)."""
        self._samples: dict[tuple[Box, int], np.ndarray] = {}

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
    def levels(self) -> dict[int, Image.Image]:
        """Float thumbnails sampled during alignment, by the side of the samples taken from them."""
        fine = self.grey.convert("F")
        return {32: fine.resize((_SIDE // 2, _SIDE // 2), Image.Resampling.BOX), 64: fine}

    def samples(self, box: Box, side: int) -> np.ndarray:
        """`box` resampled to side x side, centred and scaled to unit length (the query's recur: kept a while)."""
        key = (box, side)
        found = self._samples.get(key)
        if found is None:
            values = _resampled(self.levels[side], box, side)
            # `values.mean()` without its overhead: the same float32 sum, divided by a power of two (exact).
            centred = values - np.float32(values.sum() / values.size)
            found = centred / max(float(np.sqrt(centred @ centred)), 1e-6)
            if len(self._samples) >= _KEPT_SAMPLES:
                self._samples.clear()
            self._samples[key] = found
        return found

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


def _resampled(level: Image.Image, box: Box, side: int) -> np.ndarray:
    """`Image.resize(..., BILINEAR, box=...)` of a float thumbnail as float32 values, through Pillow's core: the
    same resampling in C, without the wrapper's checks and the generic `tobytes` (most of an alignment step's cost;
    `tests/release/test_crop_alignment.py` holds it equal to the public calls)."""
    size = level.size[0]
    small = level.im.resize((side, side), Image.Resampling.BILINEAR, _pixels(box, size, size))
    encoder = Image.core.raw_encoder("F", "F")
    encoder.setimage(small, (0, 0, side, side))
    _, finished, data = encoder.encode(4 * side * side)
    if finished != 1 or len(data) != 4 * side * side:
        raise RuntimeError(f"Pillow's raw encoder returned {len(data)} bytes (code {finished}) for {side}x{side}")
    return np.frombuffer(data, dtype=np.float32)


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


def moved(edges: Edges, move: tuple[float, float, float, float], step: float) -> Edges:
    """`edges` moved by `move` times `step`."""
    return (
        edges[0] + move[0] * step,
        edges[1] + move[1] * step,
        edges[2] + move[2] * step,
        edges[3] + move[3] * step,
    )


def _overlap(edges: Edges) -> tuple[Box, Box] | None:
    left, top, right, bottom = edges
    width, height = right - left, bottom - top
    if width <= 0 or height <= 0:
        return None
    query = (
        max(0.0, -left / width),
        max(0.0, -top / height),
        min(1.0, (1.0 - left) / width),
        min(1.0, (1.0 - top) / height),
    )
    if query[2] - query[0] < MIN_OVERLAP or query[3] - query[1] < MIN_OVERLAP:
        return None
    indexed = (
        max(0.0, left + width * query[0]),
        max(0.0, top + height * query[1]),
        min(1.0, left + width * query[2]),
        min(1.0, top + height * query[3]),
    )
    if indexed[2] - indexed[0] < MIN_OVERLAP or indexed[3] - indexed[1] < MIN_OVERLAP:
        return None
    return query, indexed


def correlation(query: CropView, indexed: CropView, edges: Edges, side: int) -> float:
    """Normalised cross-correlation of the two overlaps (-1 when the placement leaves too little overlap)."""
    boxes = _overlap(edges)
    if boxes is None:
        return -1.0
    return float(query.samples(boxes[0], side) @ indexed.samples(boxes[1], side))


def moves(ratio: float) -> list[tuple[float, float, float, float]]:
    """Edge moves (left, top, right, bottom) per unit step that keep a placement's scale the same both ways: shifts
    across and down, and zooms about the centre and about each corner (a crop from one side or corner)."""
    directions = [
        (1.0, 0.0, 1.0, 0.0),
        (0.0, 1.0, 0.0, 1.0),
        (-0.5, -0.5 * ratio, 0.5, 0.5 * ratio),
        (0.0, 0.0, 1.0, ratio),
        (-1.0, -ratio, 0.0, 0.0),
        (-1.0, 0.0, 0.0, ratio),
        (0.0, -ratio, 1.0, 0.0),
    ]
    return [(sign * a, sign * b, sign * c, sign * d) for a, b, c, d in directions for sign in (-1.0, 1.0)]


def align(query: CropView, indexed: CropView, starts: list[Placement]) -> tuple[Placement, float] | None:
    """The placement of `query` in `indexed` that correlates best near the best of `starts`, or None if given up."""
    steps = moves(indexed.aspect / query.aspect)
    scored = [(correlation(query, indexed, start.edges, _STAGES[0][1]), start.edges) for start in starts]
    best, placement = max(scored, key=lambda pair: pair[0])
    if best < _START_FLOOR:
        return None
    for stage, (step, side, floor) in enumerate(_STAGES):
        best = correlation(query, indexed, placement, side)
        for sweep in range(_MAX_SWEEPS):
            improved = False
            for move in steps:
                trial = moved(placement, move, step)
                score = correlation(query, indexed, trial, side)
                if score > best:
                    placement, best, improved = trial, score, True
            if stage == sweep == 0 and best < _FIRST_SWEEP_FLOOR:
                return None
            if not improved:
                break
        if best < floor:
            return None
    return Placement(*placement), best
