"""Size presets of a Synth release: queries and gallery rows per subset, and the noise pool."""

from __future__ import annotations

from dataclasses import dataclass

from lookbench.errors import SnapshotError
from lookbench.snapshot.schema import SUBSETS

NEGATIVES_PER_PRODUCT = 2
"""Hard negatives in the gallery for every query product (besides its own catalogue shot)."""


@dataclass(frozen=True)
class SizePreset:
    """How many rows each part of a Synth snapshot gets."""

    queries: dict[str, int]
    gallery: dict[str, int]
    """Gallery rows per subset: each query's product and its hard negatives, then other products up to this."""
    noise: int
    note: str = ""

    def extra_gallery(self, subset: str) -> int:
        """Gallery rows beyond the query products and their hard negatives."""
        return self.gallery[subset] - self.queries[subset] * (1 + NEGATIVES_PER_PRODUCT)

    def total_images(self) -> int:
        """Images in all splits (queries, galleries, noise), for sizing the embed job."""
        return sum(self.queries.values()) + sum(self.gallery.values()) + self.noise


def _preset(q: tuple[int, int, int, int], extra: tuple[int, int, int, int], noise: int, note: str = "") -> SizePreset:
    gallery = tuple(n * (1 + NEGATIVES_PER_PRODUCT) + e for n, e in zip(q, extra, strict=True))
    return SizePreset(dict(zip(SUBSETS, q, strict=True)), dict(zip(SUBSETS, gallery, strict=True)), noise, note)


SIZES: dict[str, SizePreset] = {
    "tiny": _preset((6, 3, 6, 3), (2, 1, 2, 1), 12, "tests"),
    "mini": _preset((8, 4, 8, 4), (4, 2, 4, 2), 32, "the builder's tests"),
    "small": _preset((120, 80, 120, 80), (80, 40, 80, 40), 1000, "the embedded default"),
    "medium": _preset((400, 200, 400, 200), (300, 150, 300, 150), 5000),
    "large": _preset(
        (1011, 193, 981, 160),
        (1000, 200, 1000, 200),
        20000,
        "the real query counts, but not real scale: other gallery sizes and a third of the noise",
    ),
    "real": SizePreset(
        dict(zip(SUBSETS, (1011, 193, 981, 160), strict=True)),
        dict(zip(SUBSETS, (3951, 979, 3278, 571), strict=True)),
        58275,
        "real scale: the released query counts, gallery sizes and noise pool",
    ),
}
"""`small` is the embedded default; `real` has the released LookBench counts."""


def size_preset(name: str) -> SizePreset:
    """The preset called `name`; a clear error for an unknown one."""
    if name not in SIZES:
        raise SnapshotError(f"unknown synth size {name!r}; known: {', '.join(SIZES)}")
    preset = SIZES[name]
    for subset in SUBSETS:
        if preset.extra_gallery(subset) < 0:
            raise SnapshotError(f"synth size {name!r}: {subset} gallery smaller than its queries and negatives")
    return preset
