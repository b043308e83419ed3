"""The crop alignment's hill climb as one compiled loop (numba, part of the `release` extra).

Samples are taken as Pillow's `Image.resize(BILINEAR, box=...)` takes them from a float image (the same filter
weights, row pass then column pass, float32 between and after: `tests/release/test_crop_alignment.py` holds them
equal to Pillow's bit for bit); means, norms and correlations are summed in float64.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

MIN_OVERLAP = 0.7
"""The overlap of a match keeps at least this share of each image's width and of its height (`crops.MIN_OVERLAP`)."""
STAGES = np.array(
    [
        (0.02, 32.0, 0.93),
        (0.01, 32.0, 0.95),
        (0.005, 64.0, 0.0),
        (0.0025, 64.0, 0.0),
    ]
)
"""(step as a share of the frame, sample side, correlation below which the candidate is given up after it)."""
START_FLOOR = 0.5
FIRST_SWEEP_FLOOR = 0.85
"""Candidates correlating below these at the start, or after the first round of moves, are given up at once: on
Fashion-MNIST crops 99% of true pairs start above 0.85 and reach 0.96 after one round, half the others stay
below 0.8 (docs/release.md has the measured recall)."""
MAX_SWEEPS = 6
"""Rounds of moves per stage; a candidate still climbing after that is far off anyway."""


@njit(cache=True, nogil=True)
def weights(first: float, last: float, size: int, side: int) -> tuple[np.ndarray, np.ndarray]:
    """Pillow's bilinear filter weights (`precompute_coeffs`) for `side` samples of [first, last) of `size` pixels:
    (side, 2) first pixel and pixel count per sample, (side, taps) their weights. Pillow takes the bounds as
    float32 and their difference in float32."""
    first32, last32 = np.float32(first), np.float32(last)
    scale = np.float64(last32 - first32) / side
    first = np.float64(first32)
    filterscale = max(scale, 1.0)
    support = filterscale
    taps = int(math.ceil(support)) * 2 + 1
    bounds = np.zeros((side, 2), dtype=np.int64)
    kernel = np.zeros((side, taps), dtype=np.float64)
    for out in range(side):
        center = first + (out + 0.5) * scale
        total = 0.0
        inverse = 1.0 / filterscale
        low = max(int(center - support + 0.5), 0)
        high = min(int(center + support + 0.5), size) - low
        for x in range(high):
            w = abs((x + low - center + 0.5) * inverse)
            w = 1.0 - w if w < 1.0 else 0.0
            kernel[out, x] = w
            total += w
        if total != 0.0:
            for x in range(high):
                kernel[out, x] /= total
        bounds[out, 0], bounds[out, 1] = low, high
    return bounds, kernel


@njit(cache=True, nogil=True)
def resampled(level: np.ndarray, box: tuple[float, float, float, float], side: int) -> np.ndarray:
    """`box` (fractions) of a square float32 image resampled to side x side float32, as Pillow's bilinear resize.

    `level` is the image transposed (column by column), so both passes run over contiguous memory; every sample
    still sums its pixels in Pillow's order."""
    size = level.shape[0]
    xb, xk = weights(box[0] * size, box[2] * size, size, side)
    yb, yk = weights(box[1] * size, box[3] * size, size, side)
    top = yb[0, 0]
    rows = yb[side - 1, 0] + yb[side - 1, 1] - top
    sums = np.empty(max(rows, side), dtype=np.float64)
    across = np.empty((rows, side), dtype=np.float32)
    for out in range(side):
        sums[:rows] = 0.0
        for x in range(xb[out, 1]):
            weight = xk[out, x]
            source = level[xb[out, 0] + x]
            for y in range(rows):
                sums[y] += source[top + y] * weight
        for y in range(rows):
            across[y, out] = sums[y]
    result = np.empty((side, side), dtype=np.float32)
    for out in range(side):
        sums[:side] = 0.0
        for y in range(yb[out, 1]):
            weight = yk[out, y]
            source = across[y + yb[out, 0] - top]
            for x in range(side):
                sums[x] += source[x] * weight
        for x in range(side):
            result[out, x] = sums[x]
    return result


@njit(cache=True, nogil=True)
def unit(values: np.ndarray) -> np.ndarray:
    """`values` less their mean, scaled to unit length (float64)."""
    flat = values.ravel()
    mean = 0.0
    for v in flat:
        mean += float(v)
    mean /= flat.size
    out = np.empty(flat.size, dtype=np.float64)
    norm = 0.0
    for i in range(flat.size):
        out[i] = flat[i] - mean
        norm += out[i] * out[i]
    norm = max(math.sqrt(norm), 1e-6)
    for i in range(flat.size):
        out[i] /= norm
    return out


@njit(cache=True, nogil=True)
def overlap(edges: np.ndarray) -> tuple[bool, tuple[float, float, float, float], tuple[float, float, float, float]]:
    """(whether it keeps enough, the overlap in query fractions, in indexed fractions) of a placement's edges."""
    left, top, right, bottom = edges[0], edges[1], edges[2], edges[3]
    width, height = right - left, bottom - top
    none = (0.0, 0.0, 0.0, 0.0)
    if width <= 0 or height <= 0:
        return False, none, none
    query = (
        max(0.0, -left / width),
        max(0.0, -top / height),
        min(1.0, (1.0 - left) / width),
        min(1.0, (1.0 - top) / height),
    )
    if query[2] - query[0] < MIN_OVERLAP or query[3] - query[1] < MIN_OVERLAP:
        return False, none, none
    indexed = (
        max(0.0, left + width * query[0]),
        max(0.0, top + height * query[1]),
        min(1.0, left + width * query[2]),
        min(1.0, top + height * query[3]),
    )
    if indexed[2] - indexed[0] < MIN_OVERLAP or indexed[3] - indexed[1] < MIN_OVERLAP:
        return False, none, none
    return True, query, indexed


@njit(cache=True, nogil=True)
def correlation(
    query: np.ndarray, indexed: np.ndarray, edges: np.ndarray, side: int, seen: np.ndarray, kept: np.ndarray
) -> float:
    """Normalised cross-correlation of the two overlaps sampled at side x side (-1 when too little overlaps).

    The query's unit samples of the box `seen` are in `kept`; both are replaced when the query's box differs (it
    stays the same while the query lies inside the indexed image)."""
    enough, query_box, indexed_box = overlap(edges)
    if not enough:
        return -1.0
    if not (
        seen[0] == query_box[0] and seen[1] == query_box[1] and seen[2] == query_box[2] and seen[3] == query_box[3]
    ):
        kept[:] = unit(resampled(query, query_box, side))
        seen[0], seen[1], seen[2], seen[3] = query_box
    b = unit(resampled(indexed, indexed_box, side))
    total = 0.0
    for i in range(b.size):
        total += kept[i] * b[i]
    return total


@njit(cache=True, nogil=True)
def moves(ratio: float) -> np.ndarray:
    """(14, 4) edge moves (left, top, right, bottom) per unit step that keep a placement's scale the same both
    ways: shifts across and down, zooms about the centre and about each corner, each both ways."""
    directions = np.array(
        [
            (1.0, 0.0, 1.0, 0.0),
            (0.0, 1.0, 0.0, 1.0),
            (-0.5, -0.5 * ratio, 0.5, 0.5 * ratio),
            (0.0, 0.0, 1.0, ratio),
            (-1.0, -ratio, 0.0, 0.0),
            (-1.0, 0.0, 0.0, ratio),
            (0.0, -ratio, 1.0, 0.0),
        ]
    )
    out = np.empty((14, 4))
    for d in range(7):
        out[2 * d] = -directions[d]
        out[2 * d + 1] = directions[d]
    return out


@njit(cache=True, nogil=True)
def climb(
    query: tuple[np.ndarray, np.ndarray],
    indexed: tuple[np.ndarray, np.ndarray],
    starts: np.ndarray,
    ratio: float,
    start_floor: float = START_FLOOR,
) -> tuple[bool, np.ndarray, float]:
    """(found, edges, correlation): the placement of the query in the indexed image that correlates best near the
    best of `starts` ((n, 4) edges), refined stage by stage; found is False when it was given up (below
    `start_floor` at the start).

    `query` and `indexed` are each an image's float levels, transposed (64 x 64 for 32 samples, 128 x 128 for
    64)."""
    steps = moves(ratio)
    seen = (np.full(4, np.nan), np.full(4, np.nan))
    kept = (np.empty(32 * 32), np.empty(64 * 64))
    placement = starts[0].copy()
    best = -2.0
    for s in range(len(starts)):
        score = correlation(query[0], indexed[0], starts[s], 32, seen[0], kept[0])
        if score > best:
            best, placement = score, starts[s].copy()
    if best < start_floor:
        return False, placement, best
    for stage in range(len(STAGES)):
        step, side, floor = STAGES[stage, 0], int(STAGES[stage, 1]), STAGES[stage, 2]
        level = 0 if side == 32 else 1
        best = correlation(query[level], indexed[level], placement, side, seen[level], kept[level])
        for sweep in range(MAX_SWEEPS):
            improved = False
            for m in range(len(steps)):
                trial = placement + steps[m] * step
                score = correlation(query[level], indexed[level], trial, side, seen[level], kept[level])
                if score > best:
                    placement, best, improved = trial, score, True
            if stage == 0 and sweep == 0 and best < FIRST_SWEEP_FLOOR:
                return False, placement, best
            if not improved:
                break
        if best < floor:
            return False, placement, best
    return True, placement, best
