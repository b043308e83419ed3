"""Image fingerprints: sha256 of the bytes and 256-bit pHashes of the image and of its mirror image."""

from __future__ import annotations

import hashlib
import io
from collections.abc import Sequence

import imagehash
import numpy as np
from PIL import Image, ImageOps

HASH_SIZE = 16
"""pHash side: 16 gives 256-bit hashes; the default threshold in docs/build.md is measured for this size."""


def sha256_hex(data: bytes) -> str:
    """Hex sha256 of encoded image bytes."""
    return hashlib.sha256(data).hexdigest()


def phash_hex(image: Image.Image) -> str:
    """The 256-bit pHash of a PIL image as 64 hex digits."""
    return str(imagehash.phash(image, hash_size=HASH_SIZE))


def phash_pair(data: bytes) -> tuple[str, str]:
    """(pHash of the image, pHash of its horizontal mirror) of encoded image bytes."""
    with Image.open(io.BytesIO(data)) as im:
        rgb = im.convert("RGB")
    return phash_hex(rgb), phash_hex(ImageOps.mirror(rgb))


def to_words(hexes: Sequence[str]) -> np.ndarray:
    """Hex hashes as an (N, 4) uint64 matrix."""
    if not hexes:
        return np.zeros((0, HASH_SIZE * HASH_SIZE // 64), dtype=np.uint64)
    raw = b"".join(bytes.fromhex(h) for h in hexes)
    return np.frombuffer(raw, dtype=">u8").astype(np.uint64).reshape(len(hexes), -1)


def popcount(values: np.ndarray) -> np.ndarray:
    """Set bits per uint64 element."""
    if hasattr(np, "bitwise_count"):
        return np.bitwise_count(values).astype(np.int64)
    as_bytes = np.ascontiguousarray(values, dtype=np.uint64).view(np.uint8).reshape(*values.shape, 8)
    return np.unpackbits(as_bytes, axis=-1).sum(axis=-1).astype(np.int64)


def hamming(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Hamming distances between broadcast (..., 4) word matrices."""
    return popcount(np.bitwise_xor(a, b)).sum(axis=-1)


def flip_distances(hash_words: np.ndarray, flipped_words: np.ndarray, matrix: np.ndarray) -> np.ndarray:
    """Distance of one image to each row of `matrix`: the smaller of as-is and mirrored."""
    return np.minimum(hamming(matrix, hash_words), hamming(matrix, flipped_words))
