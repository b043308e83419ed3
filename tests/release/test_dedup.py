"""Exact and perceptual duplicate detection: resize, re-encode and mirror are caught; distinct images are not."""

from __future__ import annotations

from buildkit import encode, near_copy, photo
from PIL import ImageOps

from lookbench.release.dedup.hashes import phash_pair, sha256_hex
from lookbench.release.dedup.index import FingerprintIndex

THRESHOLD = 24


def _lookup(index: FingerprintIndex, data: bytes):
    phash, mirrored = phash_pair(data)
    return index.lookup(sha256_hex(data), phash, mirrored, THRESHOLD)


def test_exact_near_and_distinct():
    index = FingerprintIndex()
    originals = [photo(seed) for seed in range(30)]
    for seed, im in enumerate(originals):
        index.add_image(f"img{seed}", encode(im))
    exact = _lookup(index, encode(originals[3]))
    assert exact is not None and (exact.key, exact.tier, exact.distance) == ("img3", "exact", 0)
    for seed in (0, 7, 19):
        for copy in (
            near_copy(originals[seed]),
            encode(ImageOps.mirror(originals[seed])),
            encode(originals[seed], "JPEG", 50),
        ):
            match = _lookup(index, copy)
            assert match is not None and match.key == f"img{seed}" and match.tier == "perceptual", seed
    for seed in range(100, 140):
        assert _lookup(index, encode(photo(seed))) is None, seed


def test_empty_index_finds_nothing():
    assert _lookup(FingerprintIndex(), encode(photo(1))) is None
