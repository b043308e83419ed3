"""Exact and perceptual duplicate detection: resize, re-encode, mirror and small colour jitter are caught; distinct
images and colour variants of one design are not."""

from __future__ import annotations

from PIL import Image, ImageEnhance, ImageOps
from releasekit import encode, near_copy, photo

from lookbench.release.config import DedupConfig
from lookbench.search.duplicates.hashes import fingerprint
from lookbench.search.duplicates.index import FingerprintIndex, Lookup

SETTINGS = DedupConfig.model_validate({})


def _index(images: dict[str, bytes]) -> FingerprintIndex:
    index = FingerprintIndex(images.__getitem__)
    for key, data in images.items():
        found = fingerprint(data)
        index.add(key, found.sha256, found.phash)
    return index


def _lookup(index: FingerprintIndex, data: bytes) -> Lookup:
    return index.lookup(fingerprint(data), SETTINGS.phash_threshold, SETTINGS.colour_threshold)


def test_exact_near_and_distinct():
    originals = [photo(seed) for seed in range(30)]
    index = _index({f"img{seed}": encode(im) for seed, im in enumerate(originals)})
    exact = _lookup(index, encode(originals[3])).match
    assert exact is not None and (exact.key, exact.tier, exact.distance) == ("img3", "exact", 0)
    for seed in (0, 7, 19):
        for copy in (
            near_copy(originals[seed]),
            encode(ImageOps.mirror(originals[seed])),
            encode(originals[seed], "JPEG", 50),
            encode(ImageEnhance.Color(ImageEnhance.Brightness(originals[seed]).enhance(1.05)).enhance(1.1), "JPEG"),
        ):
            match = _lookup(index, copy).match
            assert match is not None and match.key == f"img{seed}" and match.tier == "perceptual", seed
    for seed in range(100, 140):
        assert _lookup(index, encode(photo(seed))).match is None, seed


def test_colour_variants_are_kept_apart_by_the_colour_check():
    original = photo(11)
    y, cb, cr = original.convert("YCbCr").split()
    variants = [
        Image.merge("YCbCr", (y, cr, cb)).convert("RGB"),
        Image.merge("YCbCr", (y, cb.point(lambda v: 255 - v), cr)).convert("RGB"),
    ]
    index = _index({"original": encode(original)})
    for variant in variants:
        found = _lookup(index, encode(ImageOps.mirror(variant)))
        assert found.match is None and found.colour_rejected == 1


def test_empty_index_finds_nothing():
    assert _lookup(FingerprintIndex(lambda key: b""), encode(photo(1))).match is None
