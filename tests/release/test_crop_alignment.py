"""The crop tier's compiled alignment is the plain algorithm: a copy of it as first written (public Pillow calls,
placements as objects, numpy sums in float64) is kept here; samples equal Pillow's bit for bit, and every placement
and score equals the copy's (scores to float64 rounding)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest
from PIL import Image, ImageOps
from releasekit import photo

from lookbench.search.duplicates import alignment
from lookbench.search.duplicates.crops import FULL, WINDOWS, Box, CropView, Placement, align


class ReferenceView:
    """`CropView`'s alignment levels and samples as first written, normalised in float64."""

    def __init__(self, view: CropView) -> None:
        fine = view.grey.convert("F")
        self.levels = {32: fine.resize((64, 64), Image.Resampling.BOX), 64: fine}
        self.aspect = view.aspect

    def samples(self, box: Box, side: int) -> np.ndarray:
        level = self.levels[side]
        size = level.size[0]
        pixels = (box[0] * size, box[1] * size, box[2] * size, box[3] * size)
        small = level.resize((side, side), Image.Resampling.BILINEAR, box=pixels)
        values = np.frombuffer(small.tobytes(), dtype=np.float32).astype(np.float64)
        centred = values - values.mean()
        return centred / max(float(np.sqrt(centred @ centred)), 1e-6)

    def resampled(self, box: Box, side: int) -> np.ndarray:
        level = self.levels[side]
        size = level.size[0]
        pixels = (box[0] * size, box[1] * size, box[2] * size, box[3] * size)
        return np.asarray(level.resize((side, side), Image.Resampling.BILINEAR, box=pixels))


@dataclass(frozen=True)
class ReferencePlacement:
    """`Placement.moved` and `Placement.overlap` as first written."""

    left: float
    top: float
    right: float
    bottom: float

    def moved(self, move: tuple[float, float, float, float], step: float) -> ReferencePlacement:
        return ReferencePlacement(
            self.left + move[0] * step,
            self.top + move[1] * step,
            self.right + move[2] * step,
            self.bottom + move[3] * step,
        )

    def overlap(self) -> tuple[Box, Box] | None:
        width, height = self.right - self.left, self.bottom - self.top
        if width <= 0 or height <= 0:
            return None
        query = (
            max(0.0, -self.left / width),
            max(0.0, -self.top / height),
            min(1.0, (1.0 - self.left) / width),
            min(1.0, (1.0 - self.top) / height),
        )
        indexed = (
            self.left + width * query[0],
            self.top + height * query[1],
            self.left + width * query[2],
            self.top + height * query[3],
        )
        indexed = (max(0.0, indexed[0]), max(0.0, indexed[1]), min(1.0, indexed[2]), min(1.0, indexed[3]))
        for box in (query, indexed):
            if box[2] - box[0] < alignment.MIN_OVERLAP or box[3] - box[1] < alignment.MIN_OVERLAP:
                return None
        return query, indexed


def reference_correlation(
    query: ReferenceView, indexed: ReferenceView, placement: ReferencePlacement, side: int
) -> float:
    boxes = placement.overlap()
    if boxes is None:
        return -1.0
    return float(query.samples(boxes[0], side) @ indexed.samples(boxes[1], side))


def reference_moves(ratio: float) -> list[tuple[float, float, float, float]]:
    """Shifts across and down, zooms about the centre and each corner, each both ways, as first written."""
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


def reference_align(
    query: ReferenceView, indexed: ReferenceView, starts: list[ReferencePlacement]
) -> tuple[ReferencePlacement, float] | None:
    """`align` as first written, under the module's thresholds."""
    steps = reference_moves(indexed.aspect / query.aspect)
    scored = [(reference_correlation(query, indexed, start, 32), start) for start in starts]
    best, placement = max(scored, key=lambda pair: pair[0])
    if best < alignment.START_FLOOR:
        return None
    for stage, (step, side, floor) in enumerate(alignment.STAGES.tolist()):
        best = reference_correlation(query, indexed, placement, int(side))
        for sweep in range(alignment.MAX_SWEEPS):
            improved = False
            for move in steps:
                trial = placement.moved(move, step)
                score = reference_correlation(query, indexed, trial, int(side))
                if score > best:
                    placement, best, improved = trial, score, True
            if stage == sweep == 0 and best < alignment.FIRST_SWEEP_FLOOR:
                return None
            if not improved:
                break
        if best < floor:
            return None
    return placement, best


def cut(image: Image.Image, left: float, top: float, right: float, bottom: float) -> Image.Image:
    """The image with these shares of its width and height cut off each side."""
    w, h = image.size
    return image.crop((round(left * w), round(top * h), w - round(right * w), h - round(bottom * h)))


def edges(placement: Placement | ReferencePlacement) -> tuple[float, float, float, float]:
    return (placement.left, placement.top, placement.right, placement.bottom)


def pairs() -> list[tuple[Image.Image, Image.Image]]:
    """(query, indexed) images: true crops either way round and two crops of one photo (some of other sizes and
    aspects), mirrors, and unrelated images."""
    rng = np.random.default_rng(26)
    found = []
    for seed in range(24):
        image = photo(seed, size=int(rng.choice([96, 128, 160])))
        if seed % 3 == 0:
            image = image.resize((image.width, int(image.height * rng.uniform(0.7, 1.4))))
        sides = rng.uniform(0.0, 0.12, size=4)
        other = rng.uniform(0.0, 0.12, size=4)
        found += [
            (cut(image, *sides), image),
            (image, cut(image, *sides)),
            (cut(image, *sides), cut(image, *other)),
            (ImageOps.mirror(cut(image, *sides)), image),
            (photo(1000 + seed), image),
        ]
    return found


def starts(query: CropView, indexed: CropView, rng: np.random.Generator) -> list[Placement]:
    """Start placements as the index makes them (from window pairs), plus some edge ones that fail the overlap."""
    ratio = indexed.aspect / query.aspect
    chosen = [(FULL, FULL)] + [(WINDOWS[i], WINDOWS[j]) for i, j in rng.integers(0, len(WINDOWS), size=(3, 2))]
    found = [Placement.from_windows(q, i, ratio) for q, i in chosen]
    if rng.random() < 0.3:
        x, y = rng.uniform(-0.6, 0.6, size=2)
        found.append(Placement(x, y, x + rng.uniform(-0.2, 1.5), y + rng.uniform(-0.2, 1.5)))
    return found


def test_align_gives_the_placements_and_scores_of_the_algorithm_as_first_written() -> None:
    rng = np.random.default_rng(3)
    outcomes = {"aligned": 0, "given up": 0}
    for query_image, indexed_image in pairs():
        query, indexed = CropView.of(query_image), CropView.of(indexed_image)
        for view in (query, query.mirrored()):
            placements = starts(view, indexed, rng)
            got = align(view, indexed, placements)
            expected = reference_align(
                ReferenceView(view),
                ReferenceView(indexed),
                [ReferencePlacement(*edges(p)) for p in placements],
            )
            assert (got is None) == (expected is None)
            if got is not None and expected is not None:
                assert edges(got[0]) == edges(expected[0])
                assert got[1] == pytest.approx(expected[1], abs=1e-9)
                assert got[0].overlap() == expected[0].overlap()
            outcomes["aligned" if got is not None else "given up"] += 1
    # Both ways out of the algorithm are compared, not only the early give-ups.
    assert outcomes["aligned"] >= 30 and outcomes["given up"] >= 30, outcomes


def test_samples_equal_the_public_resize_of_the_overlap_bit_for_bit_for_any_box() -> None:
    rng = np.random.default_rng(7)
    for seed in range(6):
        view = CropView.of(photo(seed))
        reference = ReferenceView(view)
        boxes: list[Box] = [FULL, (0.0, 0.0, 0.5, 0.5), (0.25, 0.125, 0.75, 0.625)]
        for _ in range(60):
            x0, y0 = rng.uniform(0.0, 0.3, size=2)
            boxes.append((x0, y0, x0 + rng.uniform(0.01, 1.0 - x0), y0 + rng.uniform(0.01, 1.0 - y0)))
        for level, side in enumerate((32, 64)):
            assert np.array_equal(view.levels[level].T, np.asarray(reference.levels[side]))
        for box in boxes:
            for level, side in enumerate((32, 64)):
                got = alignment.resampled(view.levels[level], box, side)
                assert got.dtype == np.float32
                assert np.array_equal(got, reference.resampled(box, side))


@pytest.mark.parametrize("seed", range(3))
def test_overlaps_of_random_placements_equal_the_algorithm_as_first_written(seed: int) -> None:
    rng = np.random.default_rng(seed)
    for _ in range(3000):
        left, top = rng.uniform(-0.8, 0.8, size=2)
        right, bottom = left + rng.uniform(-0.3, 1.8), top + rng.uniform(-0.3, 1.8)
        assert Placement(left, top, right, bottom).overlap() == ReferencePlacement(left, top, right, bottom).overlap()
