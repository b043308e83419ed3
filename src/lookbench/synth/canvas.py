"""A drawing surface in unit coordinates: a fabric silhouette mask plus solid-colour parts on top."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from PIL import Image, ImageDraw

from lookbench.synth.palette import RGB

Point = tuple[float, float]


def inner_edge(mask: Image.Image) -> Image.Image:
    """The one-pixel inner border of a binary mask (pixels with a background 4-neighbour)."""
    inside = np.asarray(mask) > 0
    core = np.zeros_like(inside)
    core[1:-1, 1:-1] = inside[1:-1, 1:-1] & inside[:-2, 1:-1] & inside[2:, 1:-1] & inside[1:-1, :-2] & inside[1:-1, 2:]
    return Image.fromarray(((inside & ~core) * 255).astype(np.uint8))


class Canvas:
    """Collects a garment's fabric shapes and part shapes, then renders them to an RGBA image."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.mask = Image.new("L", (size, size), 0)
        self._mask_draw = ImageDraw.Draw(self.mask)
        self._parts: list[Callable[[ImageDraw.ImageDraw], None]] = []
        self.probes: dict[str, tuple[int, int]] = {}

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
        self._parts.append(lambda d: d.polygon(pts, fill=fill, outline=outline, width=width))

    def ellipse(
        self, centre: Point, radii: Point, fill: RGB | None, outline: RGB | None = None, width: int = 1
    ) -> None:
        """A solid elliptical part drawn over the fabric."""
        box = self._box(centre, radii)
        self._parts.append(lambda d: d.ellipse(box, fill=fill, outline=outline, width=width))

    def lower_half_ellipse(self, centre: Point, radii: Point, fill: RGB) -> None:
        """The lower half of an ellipse (a neckline opening seen from the front)."""
        box = self._box(centre, radii)
        self._parts.append(lambda d: d.chord(box, 0, 180, fill=fill))

    def line(self, points: Sequence[Point], fill: RGB, width: int = 2) -> None:
        """A line part (seam, zip, strap) drawn over the fabric."""
        pts = self.px(points)
        self._parts.append(lambda d: d.line(pts, fill=fill, width=width, joint="curve"))

    def probe(self, name: str, point: Point) -> None:
        """Record a pixel position whose content the labels determine (used by tests)."""
        x, y = self.px([point])[0]
        self.probes[name] = (int(round(x)), int(round(y)))

    def render(self, texture: np.ndarray, outline: RGB) -> Image.Image:
        """The RGBA garment: texture inside the silhouette, an inner outline, then the parts."""
        image = Image.new("RGBA", (self.size, self.size), (0, 0, 0, 0))
        image.paste(Image.fromarray(texture, "RGB"), (0, 0), self.mask)
        image.paste((*outline, 255), (0, 0), inner_edge(self.mask))
        draw = ImageDraw.Draw(image)
        for part in self._parts:
            part(draw)
        return image
