"""Size presets of a Synth release: queries per subset, negatives, extra gallery items and noise."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SizePreset:
    """How many rows each part of a Synth snapshot gets."""

    queries: dict[str, int]
    negatives_per_product: int
    extra_gallery: dict[str, int]
    noise: int

    def total_images(self) -> int:
        """Approximate image count (queries, galleries, noise), for sizing the embed job."""
        positives = sum(self.queries.values())
        gallery = positives * (1 + self.negatives_per_product) + sum(self.extra_gallery.values())
        return positives + gallery + self.noise


def _preset(q: tuple[int, int, int, int], extra: tuple[int, int, int, int], noise: int) -> SizePreset:
    names = ("real_studio_flat", "aigen_studio", "real_streetlook", "aigen_streetlook")
    return SizePreset(dict(zip(names, q, strict=True)), 2, dict(zip(names, extra, strict=True)), noise)


SIZES: dict[str, SizePreset] = {
    "tiny": _preset((6, 3, 6, 3), (2, 1, 2, 1), 12),
    "mini": _preset((8, 4, 8, 4), (4, 2, 4, 2), 32),
    "small": _preset((120, 80, 120, 80), (80, 40, 80, 40), 1000),
    "medium": _preset((400, 200, 400, 200), (300, 150, 300, 150), 5000),
    "large": _preset((1011, 193, 981, 160), (1000, 200, 1000, 200), 20000),
}
"""`small` is the embedded default (about 2,840 images); `large` mirrors the real query counts."""
