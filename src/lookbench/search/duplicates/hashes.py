"""Image fingerprints: sha256 of the bytes, 256-bit pHashes of the image and of its mirror, a colour thumbnail and
the crop tier's view (window hashes)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

import imagehash
import numpy as np
from PIL import Image, ImageOps

from lookbench._util.hashing import sha256_hex
from lookbench._util.images import decode_image
from lookbench.search.duplicates.colour import lab_thumbnail
from lookbench.search.duplicates.crops import CropView

HASH_SIZE = 16
"""pHash side: 16 gives 256-bit hashes; the default threshold in docs/release.md is measured for this size."""


@dataclass
class Fingerprint:
    """What duplicate look-ups compare: exact bytes, perceptual hashes, and (only when needed) colours and crops."""

    sha256: str
    phash: str
    phash_mirror: str
    data: bytes
    """The encoded image: decoded only when a look-up needs its colours (hashes may come from a shard's output)."""

    _image: Image.Image | None = None
    _lab: np.ndarray | None = None

    def undecoded(self) -> Fingerprint:
        """The same fingerprint with nothing decoded yet: a copy another thread decodes on its own."""
        return Fingerprint(self.sha256, self.phash, self.phash_mirror, self.data)

    @property
    def image(self) -> Image.Image:
        """The decoded image."""
        if self._image is None:
            self._image = decode_image(self.data)
        return self._image

    @property
    def lab(self) -> np.ndarray:
        """The CIELAB thumbnail, computed on first use (only pHash candidates need it)."""
        if self._lab is None:
            self._lab = lab_thumbnail(self.image)
        return self._lab

    @cached_property
    def view(self) -> CropView:
        """The crop tier's view of the image."""
        return CropView.of(self.image)

    @cached_property
    def mirror_view(self) -> CropView:
        """The crop tier's view of the image's horizontal mirror."""
        return self.view.mirrored()

    @property
    def windows(self) -> np.ndarray | None:
        """The window hashes to index (None for an image too flat to take part in the crop tier)."""
        return None if self.view.flat else self.view.windows


def phash_hex(image: Image.Image) -> str:
    """The 256-bit pHash of a PIL image as 64 hex digits."""
    return str(imagehash.phash(image, hash_size=HASH_SIZE))


def fingerprint(data: bytes) -> Fingerprint:
    """Fingerprint encoded image bytes (BadImageError if they do not decode)."""
    rgb = decode_image(data)
    return Fingerprint(sha256_hex(data), phash_hex(rgb), phash_hex(ImageOps.mirror(rgb)), data, rgb)


def phash_pair(data: bytes) -> tuple[str, str]:
    """(pHash of the image, pHash of its horizontal mirror) of encoded image bytes."""
    found = fingerprint(data)
    return found.phash, found.phash_mirror


def to_words(hexes: Sequence[str]) -> np.ndarray:
    """Hex hashes as an (N, 4) uint64 matrix."""
    if not hexes:
        return np.zeros((0, HASH_SIZE * HASH_SIZE // 64), dtype=np.uint64)
    raw = b"".join(bytes.fromhex(h) for h in hexes)
    return np.frombuffer(raw, dtype=">u8").astype(np.uint64).reshape(len(hexes), -1)


def popcount(values: np.ndarray, dtype: type[np.integer] = np.int64) -> np.ndarray:
    """Set bits per uint64 element (as `dtype`: uint8 holds them in an eighth of the memory)."""
    if hasattr(np, "bitwise_count"):
        return np.bitwise_count(values).astype(dtype, copy=False)
    as_bytes = np.ascontiguousarray(values, dtype=np.uint64).view(np.uint8).reshape(*values.shape, 8)
    return np.unpackbits(as_bytes, axis=-1).sum(axis=-1).astype(dtype)


def hamming(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Hamming distances between broadcast (..., 4) word matrices."""
    return popcount(np.bitwise_xor(a, b)).sum(axis=-1)
