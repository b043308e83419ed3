"""A drawing surface in unit coordinates: a fabric silhouette mask plus solid-colour parts on top."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from PIL import Image, ImageDraw

from lookbench.datasets.synth.palette import RGB

Point = tuple[float, float]


def inner_edge(inside: np.ndarray) -> np.ndarray:
    """The one-pixel inner border of a boolean mask (pixels with an outside 4-neighbour)."""
    core = np.zeros_like(inside)
    core[1:-1, 1:-1] = inside[1:-1, 1:-1] & inside[:-2, 1:-1] & inside[2:, 1:-1] & inside[1:-1, :-2] & inside[1:-1, 2:]
    return inside & ~core


class Canvas:
    """Collects a garment's fabric shapes and part shapes, then renders them to an RGBA image."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.scale = size / 256
        self.mask = Image.new("L", (size, size), 0)
        self._mask_draw = ImageDraw.Draw(self.mask)
        self._parts: list[Callable[[ImageDraw.ImageDraw], None]] = []
        self.probes: dict[str, tuple[int, int]] = {}

    def width(self, width: int) -> int:
        """A line width given for the canonical 256 px canvas, scaled to this canvas."""
        return max(1, int(round(width * self.scale)))

    def px(self, points: Sequence[Point]) -> list[tuple[float, float]]:
        """Unit coordinates to pixels."""
        s = self.size
        return [(x * s, y * s) for x, y in points]

    def _box(self, centre: Point, radii: Point) -> list[float]:
        (x0, y0), (x1, y1) = self.px(
            [(centre[0] - radii[0], centre[1] - radii[1]), (centre[0] + radii[0], centre[1] + radii[1])]
        )
        return [x0, y0, x1, y1]

    def fabric(self, points: Sequence[Point]) -> None:
        """Add a fabric polygon to the silhouette."""
        self._mask_draw.polygon(self.px(points), fill=255)

    def fabric_ellipse(self, centre: Point, radii: Point) -> None:
        """Add a fabric ellipse to the silhouette."""
        self._mask_draw.ellipse(self._box(centre, radii), fill=255)

    def polygon(self, points: Sequence[Point], fill: RGB | None, outline: RGB | None = None, width: int = 1) -> None:
        """A solid part drawn over the fabric."""
        pts = self.px(points)
        w = self.width(width)
        self._parts.append(lambda d: d.polygon(pts, fill=fill, outline=outline, width=w))

    def ellipse(
        self, centre: Point, radii: Point, fill: RGB | None, outline: RGB | None = None, width: int = 1
    ) -> None:
        """A solid elliptical part drawn over the fabric."""
        box = self._box(centre, radii)
        w = self.width(width)
        self._parts.append(lambda d: d.ellipse(box, fill=fill, outline=outline, width=w))

    def lower_half_ellipse(
        self, centre: Point, radii: Point, fill: RGB | None, outline: RGB | None = None, width: int = 2
    ) -> None:
        """The lower half of an ellipse (a neckline opening seen from the front)."""
        box = self._box(centre, radii)
        w = self.width(width)
        self._parts.append(lambda d: d.chord(box, 0, 180, fill=fill, outline=outline, width=w))

    def line(self, points: Sequence[Point], fill: RGB, width: int = 2) -> None:
        """A line part (seam, zip, strap) drawn over the fabric."""
        pts = self.px(points)
        w = self.width(width)
        self._parts.append(lambda d: d.line(pts, fill=fill, width=w, joint="curve"))

    def probe(self, name: str, point: Point) -> None:
        """Record a pixel position whose content the labels determine (used by tests)."""
        x, y = self.px([point])[0]
        self.probes[name] = (int(round(x)), int(round(y)))

    def render(self, texture: np.ndarray, outline: RGB) -> Image.Image:
        """The RGBA garment: texture inside the silhouette, an inner outline, then the parts."""
        alpha = np.asarray(self.mask)
        rgba = np.empty((*alpha.shape, 4), dtype=np.uint8)
        rgba[..., :3] = texture
        rgba[..., 3] = alpha
        edge = inner_edge(alpha > 0)
        for c in range(3):
            np.copyto(rgba[..., c], outline[c], where=edge)
        image = Image.fromarray(rgba, "RGBA")
        draw = ImageDraw.Draw(image)
        for part in self._parts:
            part(draw)
        return image
