"""Boxes, the photo a detector sees, the GarmentDetector Protocol and the box sanity checks."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol


@dataclass(frozen=True)
class Box:
    """A garment found in a photo: category, [x0, y0, x1, y1] in photo pixels and a score."""

    category: str
    bbox: tuple[float, float, float, float]
    score: float = 1.0

    @property
    def area(self) -> float:
        """Pixel area (0 for a degenerate box)."""
        x0, y0, x1, y1 = self.bbox
        return max(0.0, x1 - x0) * max(0.0, y1 - y0)


@dataclass
class Photo:
    """A full photo to cut into crops, and the boxes its source already knows (Synth), if any."""

    sha256: str
    data: bytes
    width: int
    height: int
    known: list[Box] = field(default_factory=list)


class GarmentDetector(Protocol):
    """Finds the garments in a full photo."""

    name: str
    device: str
    """Where it runs (`cpu`, `cuda:0`...): a detector on CUDA runs its shards on GPU workers."""

    def detect(self, photo: Photo) -> list[Box]:
        """Boxes in photo pixel coordinates."""
        ...

    def describe(self) -> dict[str, Any]:
        """Backend and model, for the log and the card."""
        ...


def clipped(box: Box, width: int, height: int) -> Box:
    """The box clipped to the photo."""
    x0, y0, x1, y1 = box.bbox
    return Box(box.category, (max(0.0, x0), max(0.0, y0), min(float(width), x1), min(float(height), y1)), box.score)


def box_problem(box: Box, width: int, height: int, min_side: int, min_area_fraction: float) -> str | None:
    """Why a (clipped) box is unusable: degenerate, tiny; None if it is fine."""
    x0, y0, x1, y1 = box.bbox
    if not x1 > x0 or not y1 > y0:
        return "degenerate"
    if x1 - x0 < min_side or y1 - y0 < min_side or box.area < min_area_fraction * width * height:
        return "tiny"
    return None


def iou(a: tuple[float, ...], b: tuple[float, ...]) -> float:
    """Intersection over union of two [x0, y0, x1, y1] boxes."""
    w = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    h = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = w * h
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0
