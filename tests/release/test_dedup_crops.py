"""The crop tier: cropped copies of earlier releases' images are found; distinct products, flat, tiny, huge and
undecodable images and a corrupt fingerprint cache never stop a build or merge what differs."""

from __future__ import annotations

import shutil
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path

import imagehash
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from PIL import Image, ImageOps
from releasekit import earlier_release, encode, photo

from lookbench._util.images import BadImageError, decode_image
from lookbench.errors import ReleaseError
from lookbench.release.config import DedupConfig
from lookbench.search.duplicates.crops import WINDOWS, CropPairs, CropView, region
from lookbench.search.duplicates.hashes import fingerprint
from lookbench.search.duplicates.history import (
    FINGERPRINT_SCHEMA,
    history_index,
    history_store,
    read_cached,
    store_index,
)
from lookbench.search.duplicates.index import FingerprintIndex, Lookup

SETTINGS = DedupConfig.model_validate({})
VERSION = "v20260101"


def cropped(im: Image.Image, left: float, top: float, right: float, bottom: float) -> Image.Image:
    """The image less these shares of its width/height on each side."""
    w, h = im.size
    return im.crop((round(left * w), round(top * h), w - round(right * w), h - round(bottom * h)))


def _lookup(index: FingerprintIndex, data: bytes, crops: bool = True) -> Lookup:
    return index.lookup(fingerprint(data), SETTINGS.phash_threshold, SETTINGS.colour_threshold, crops)


ORIGINALS = [photo(seed, 224) for seed in range(8)]


def test_crops_of_an_earlier_release_are_found_by_the_crop_tier_only(tmp_path: Path) -> None:
    out = earlier_release(tmp_path, ORIGINALS)
    history, names = history_index(out, "v20260601", tmp_path / "cache")
    assert names == [VERSION]
    copies = {
        2: encode(cropped(ORIGINALS[2], 0.05, 0.05, 0.05, 0.05)),
        3: encode(cropped(ORIGINALS[3], 0.10, 0.0, 0.0, 0.0), "JPEG", 85),
        5: encode(ImageOps.mirror(cropped(ORIGINALS[5], 0.0, 0.08, 0.08, 0.0)).resize((150, 150)), "JPEG", 80),
    }
    for row, data in copies.items():
        match = _lookup(history, data).match
        assert match is not None and match.tier == "crop", row
        assert match.key == f"{VERSION}/real_studio_flat/gallery#{row}"
        assert _lookup(history, data, crops=False).match is None, row


@pytest.mark.parametrize("pairs", ["all", "full-frame"])
def test_a_crop_of_an_indexed_image_also_finds_the_full_image_the_other_way_round(pairs: CropPairs) -> None:
    index = FingerprintIndex.of_images({"crop": encode(cropped(ORIGINALS[1], 0.06, 0.06, 0.06, 0.06))}, pairs)
    match = _lookup(index, encode(ORIGINALS[1])).match
    assert match is not None and (match.key, match.tier) == ("crop", "crop")


def test_full_frame_pairs_find_crops_of_an_earlier_release_and_still_merge_no_other_image(tmp_path: Path) -> None:
    out = earlier_release(tmp_path, ORIGINALS)
    store, _ = history_store(out, "v20260601", tmp_path / "cache")
    history = store_index(out, store, "full-frame")
    for row, copy in ((2, cropped(ORIGINALS[2], 0.05, 0.05, 0.05, 0.05)), (6, cropped(ORIGINALS[6], 0, 0, 0.1, 0))):
        match = _lookup(history, encode(copy, "JPEG", 85)).match
        assert match is not None and (match.key, match.tier) == (f"{VERSION}/real_studio_flat/gallery#{row}", "crop")
    for seed in range(100, 106):
        assert _lookup(history, encode(cropped(photo(seed, 224), 0.05, 0.05, 0.05, 0.05))).match is None, seed


def test_the_crop_pair_set_is_a_checked_dedup_setting() -> None:
    assert DedupConfig.model_validate({}).crop_pairs == "all"
    assert DedupConfig.model_validate({"crop_pairs": "full-frame"}).crop_pairs == "full-frame"
    with pytest.raises(ValueError, match="crop_pairs"):
        DedupConfig.model_validate({"crop_pairs": "nearest"})


def test_crops_of_other_images_and_colour_variants_are_not_merged() -> None:
    index = FingerprintIndex.of_images({f"img{n}": encode(im) for n, im in enumerate(ORIGINALS)})
    for seed in range(100, 112):
        assert _lookup(index, encode(cropped(photo(seed, 224), 0.05, 0.05, 0.05, 0.05))).match is None, seed
    y, cb, cr = ORIGINALS[4].convert("YCbCr").split()
    swapped = Image.merge("YCbCr", (y, cr, cb)).convert("RGB")
    assert _lookup(index, encode(cropped(swapped, 0.05, 0.05, 0.05, 0.05))).match is None


def test_a_different_product_with_the_same_labels_is_not_a_cropped_copy() -> None:
    from lookbench.datasets.synth.palette import sample_shade
    from lookbench.datasets.synth.products import sample_product
    from lookbench.datasets.synth.render import render_product

    when = datetime(2026, 5, 1, tzinfo=timezone.utc)
    for category in ("t-shirt", "hoodie", "coat", "skirt"):
        rng = np.random.default_rng([3, len(category)])
        first, other = (sample_product(rng, category, key, when) for key in "ab")
        labels = {"attributes": first.attributes, "details": first.details, "main_attribute": first.main_attribute}
        second = replace(other, rgb=sample_shade(first.attribute("colour"), rng), **labels)
        shots = [decode_image(encode(render_product(p, size=256).image)) for p in (first, second)]
        index = FingerprintIndex.of_images({"first": encode(shots[0])})
        own = _lookup(index, encode(cropped(shots[0], 0.06, 0.06, 0.06, 0.06))).match
        assert own is not None and (own.key, own.tier) == ("first", "crop"), category
        assert _lookup(index, encode(cropped(shots[1], 0.06, 0.06, 0.06, 0.06))).match is None, category


@pytest.mark.parametrize(
    "image",
    [ORIGINALS[0], cropped(ORIGINALS[1], 0.0, 0.07, 0.11, 0.0), photo(9, 224).resize((300, 120)), photo(10, 40)],
    ids=["photo", "crop", "wide", "small"],
)
def test_window_hashes_are_each_windows_own_phash(image: Image.Image) -> None:
    """Window hashes are computed in one batch; they must stay the windows' own pHashes (cached ones are reused)."""
    for view in (CropView.of(image), CropView.of(image).mirrored()):
        own = [
            int(str(imagehash.phash(region(view.grey, box, 32, Image.Resampling.LANCZOS), hash_size=8)), 16)
            for box in WINDOWS
        ]
        assert view.windows.tolist() == own


@pytest.mark.parametrize(
    "image",
    [
        Image.new("RGB", (1, 1), (200, 10, 10)),
        Image.new("RGB", (300, 300), (40, 90, 160)),
        photo(7, 224).resize((2000, 3)),
        photo(8, 224).resize((2, 900)),
    ],
    ids=["1x1", "flat colour", "2000x3", "2x900"],
)
def test_tiny_flat_and_extreme_images_are_looked_up_without_error(image: Image.Image) -> None:
    index = FingerprintIndex.of_images(
        {f"img{n}": encode(im) for n, im in enumerate(ORIGINALS)} | {"odd": encode(image)}
    )
    assert _lookup(index, encode(image)).match is not None
    for other in ORIGINALS[:2]:
        match = _lookup(index, encode(cropped(other, 0.05, 0.05, 0.05, 0.05))).match
        assert match is not None and match.key != "odd"
    flat = fingerprint(encode(Image.new("RGB", (64, 64), (5, 5, 5))))
    assert flat.windows is None


def test_large_images_are_aligned_and_oversized_or_undecodable_ones_refused_with_a_clear_error() -> None:
    large = ORIGINALS[6].resize((2400, 1800), Image.Resampling.BICUBIC)
    index = FingerprintIndex.of_images({"large": encode(large, "JPEG", 90)})
    match = _lookup(index, encode(cropped(large, 0.05, 0.05, 0.05, 0.05).resize((400, 300)), "JPEG", 85)).match
    assert match is not None and match.key == "large"
    with pytest.raises(BadImageError):
        fingerprint(b"\x89PNG\r\n\x1a\n not really a png")
    with pytest.raises(BadImageError, match="too large"):
        fingerprint(encode(Image.new("1", (9000, 9000))))


@pytest.mark.parametrize(
    "damage",
    [
        *("garbage", "empty", "truncated", "other columns", "short windows", "short phash", "non-hex sha256"),
        *("null phash", "old format", "short grey", "grey without windows", "windows without grey"),
        *("aspect nan", "aspect zero", "aspect inf", "null aspect"),
    ],
)
def test_a_corrupt_fingerprint_cache_is_recomputed_and_reported(tmp_path: Path, damage: str) -> None:
    out = earlier_release(tmp_path, ORIGINALS[:3])
    cache = tmp_path / "cache"
    history_index(out, "v20260601", cache)
    [cached] = cache.glob("*.parquet")
    [store] = cache.glob("history-*")
    shutil.rmtree(store)  # the store is built from the per-version caches: without it they are read again
    good = pq.read_table(cached)
    if damage == "garbage":
        cached.write_bytes(b"PAR1" + b"\0" * 100)
    elif damage == "empty":
        cached.write_bytes(b"")
    elif damage == "truncated":  # a crawl killed while the file was written by something not atomic
        cached.write_bytes(cached.read_bytes()[: cached.stat().st_size // 2])
    elif damage == "other columns":
        pq.write_table(good.drop(["windows"]), cached)
    elif damage == "old format":  # the columns of the format before crop views were stored
        pq.write_table(good.drop(["grey", "aspect"]), cached)
    elif damage in ("short grey", "grey without windows", "windows without grey"):
        column = "windows" if damage == "grey without windows" else "grey"
        values = good[column].to_pylist()
        assert values[1] is not None
        values[1] = values[1][:-1] if damage == "short grey" else None
        position = FINGERPRINT_SCHEMA.get_field_index(column)
        pq.write_table(
            good.set_column(position, FINGERPRINT_SCHEMA.field(column), pa.array(values, pa.binary())), cached
        )
    elif damage.startswith(("aspect", "null aspect")):
        aspects = good["aspect"].to_pylist()
        aspects[1] = {"aspect nan": float("nan"), "aspect zero": 0.0, "aspect inf": float("inf"), "null aspect": None}[
            damage
        ]
        position = FINGERPRINT_SCHEMA.get_field_index("aspect")
        pq.write_table(good.set_column(position, FINGERPRINT_SCHEMA.field("aspect"), pa.array(aspects)), cached)
    elif damage in ("short phash", "non-hex sha256", "null phash"):
        column = "sha256" if "sha256" in damage else "phash"
        values = good[column].to_pylist()
        values[1] = {"short phash": values[1][:-2], "non-hex sha256": "z" * 64, "null phash": None}[damage]
        position = FINGERPRINT_SCHEMA.get_field_index(column)
        pq.write_table(
            good.set_column(position, FINGERPRINT_SCHEMA.field(column), pa.array(values, pa.string())), cached
        )
    else:
        short = [None if w is None else w[:8] for w in good["windows"].to_pylist()]
        pq.write_table(good.set_column(3, pa.field("windows", pa.binary()), pa.array(short, pa.binary())), cached)
    with pytest.raises(ReleaseError, match=cached.name):
        read_cached(cached)
    problems: list[tuple[Path, str]] = []
    history, _ = history_index(out, "v20260601", cache, lambda path, why: problems.append((path, why)))
    assert [path for path, _ in problems] == [cached] and "recomputed" in problems[0][1]
    assert pq.read_table(cached).equals(good) and pq.read_table(cached).schema.equals(FINGERPRINT_SCHEMA)
    match = _lookup(history, encode(cropped(ORIGINALS[1], 0.05, 0.05, 0.05, 0.05))).match
    assert match is not None and match.key.endswith("#1")


@pytest.mark.parametrize("pairs", ["all", "full-frame"])
def test_the_card_says_when_two_crops_of_one_photo_are_not_looked_for(pairs: str) -> None:
    from lookbench.release.card import version_card

    window = dict.fromkeys(("published_from", "published_to", "first_seen_from", "first_seen_to"), "2026-01-01")
    dedup = {
        "earlier_versions": [],
        "excluded_as_duplicates_of_earlier_versions": {},
        "merged_within_batch": {},
        "phash_threshold": 24,
        "crops": True,
        "crop_phash_threshold": 16,
        "crop_pairs": pairs,
    }
    release = {"title": "T", "version": "v1", "release_date": "2026-01-01", "subsets": {}, "sources": []}
    card = version_card({**release, "window": window, "dedup": dedup}, [])
    assert ("two different crops of one photo are not looked for" in card) == (pairs == "full-frame")
    assert "cropped copies (keeping" in card
