"""Crop views read from the history store: pixel for pixel the views decoded from the published images, the same
look-ups and decisions, no image fetched for a candidate that does not align, and caches or stores of the format
before the views were stored never read."""

from __future__ import annotations

import io
import shutil
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
from PIL import Image, ImageOps
from releasekit import encode, near_copy, photo

from conftest import make_row, write_snapshot
from lookbench._util.images import decode_image
from lookbench.release.config import DedupConfig
from lookbench.search.duplicates.crops import CropView
from lookbench.search.duplicates.hashes import fingerprint
from lookbench.search.duplicates.history import (
    CACHE_FORMAT,
    FINGERPRINT_SCHEMA,
    PublishedImages,
    history_store,
    prune_history_stores,
)
from lookbench.search.duplicates.index import Candidate, FingerprintIndex
from lookbench.search.duplicates.store import MANIFEST, StoreManifest, open_store
from lookbench.snapshot.writer import image_value

SETTINGS = DedupConfig.model_validate({})
THRESHOLD = max(SETTINGS.phash_threshold, SETTINGS.crop_phash_threshold)
OLD_FORMAT = CACHE_FORMAT.removesuffix("-views")


def published(root: Path, images: list[bytes]) -> Path:
    """An output folder holding one published version with these encoded images as gallery rows, and one query."""
    rows = [make_row(f"p{n}", "dress", "red", image=image_value(data, f"p{n}")) for n, data in enumerate(images)]
    query = [make_row("q", "dress", "red", image=image_value(encode(photo(99, 64)), "q.png"))]
    write_snapshot(root / "out", {"real_studio_flat": {"query": query, "gallery": rows}}, "v20260101")
    return root / "out"


def noise(width: int, height: int, seed: int) -> Image.Image:
    return Image.fromarray(np.random.default_rng(seed).integers(0, 256, (height, width, 3), dtype=np.uint8))


def varied_images() -> dict[str, bytes]:
    """Images of every mode and shape a crawl brings, encoded as a crawl finds them."""
    rgba = photo(1, 160).convert("RGBA")
    rgba.putalpha(Image.linear_gradient("L").resize((160, 160)))
    palette = photo(2, 128).quantize(64)
    palette.info["transparency"] = 3
    return {
        "rgba": encode(rgba),
        "palette": encode(palette),
        "cmyk": encode(photo(3, 200).convert("CMYK"), "JPEG", 90),
        "grey": encode(photo(4, 150).convert("L")),
        "one pixel": encode(Image.new("RGB", (1, 1), (200, 10, 10))),
        "3x500": encode(noise(3, 500, 5)),
        "500x3": encode(noise(500, 3, 6)),
        "800x1000": encode(photo(7, 1000).resize((800, 1000)), "JPEG", 90),
        "1000x37": encode(photo(8, 1000).resize((1000, 37)), "JPEG", 80),
        "37x999": encode(photo(9, 999).resize((37, 999))),
        "333x211": encode(photo(10, 333).resize((333, 211)), "JPEG", 75),
    }


def test_views_read_from_the_store_are_the_decoded_views_pixel_for_pixel(tmp_path: Path) -> None:
    images = varied_images()
    out = published(tmp_path, list(images.values()))
    folder, _ = history_store(out, "v20260601", tmp_path / "cache")
    assert folder is not None
    stored = open_store(folder)
    assert stored.grey.dtype == np.uint8 and stored.aspect.dtype == np.float64
    keys = stored.keys.to_pylist()
    for n, (name, data) in enumerate(images.items()):
        row = keys.index(f"v20260101/real_studio_flat/gallery#{n}")
        decoded = CropView.of(decode_image(data))
        with Image.open(io.BytesIO(data)) as im:
            assert stored.aspect[row, 0] == im.width / im.height, name
        assert bool(stored.present[row, 0]) == (name != "one pixel"), name
        if name == "one pixel":  # too flat: no crop tier, no thumbnail kept
            assert not stored.grey[row].any()
            continue
        view = stored.view(row)
        assert view.grey.mode == "L" and view.grey.size == decoded.grey.size, name
        assert view.grey.tobytes() == decoded.grey.tobytes(), name
        assert view.aspect == decoded.aspect, name
        assert np.array_equal(view.windows, decoded.windows) and not view.flat, name


def cropped(im: Image.Image, rng: np.random.Generator) -> Image.Image:
    """The image less 0-12% of its width and height on each side."""
    w, h = im.size
    cut = rng.uniform(0, 0.12, 4)
    return im.crop((round(cut[0] * w), round(cut[1] * h), w - round(cut[2] * w), h - round(cut[3] * h)))


class Fetches:
    """Published images by key, remembering which were fetched."""

    def __init__(self, out: Path) -> None:
        self.images = PublishedImages(out)
        self.fetched: set[str] = set()

    def __call__(self, key: str) -> bytes:
        self.fetched.add(key)
        return self.images(key)


@pytest.mark.parametrize("seed", [0, 1])
def test_look_ups_with_stored_views_equal_those_with_decoded_views(tmp_path: Path, seed: int) -> None:
    rng = np.random.default_rng(seed)
    originals = [
        photo(100 * seed + n, int(rng.integers(160, 320))).resize((int(rng.integers(150, 400)), 240)) for n in range(12)
    ]
    out = published(tmp_path, [encode(im, "JPEG", 90) if n % 2 else encode(im) for n, im in enumerate(originals)])
    folder, _ = history_store(out, "v20260601", tmp_path / "cache")
    assert folder is not None
    fetches = Fetches(out)
    stored = FingerprintIndex.of_store(fetches, open_store(folder))
    published_images = PublishedImages(out)
    keys = [key.as_py() for key in open_store(folder).keys]
    decoded = FingerprintIndex.of_images({key: published_images(key) for key in keys})
    queries = [encode(cropped(im, rng), "JPEG", 85) for im in originals[:8]]
    queries += [encode(ImageOps.mirror(cropped(im, rng)).resize((180, 200)), "JPEG", 80) for im in originals[8:]]
    queries += [near_copy(im) for im in originals[::3]]
    queries += [encode(photo(1000 + 100 * seed + n, 224), "JPEG", 85) for n in range(6)]
    tiers = []
    for data in queries:
        fetches.fetched.clear()
        found: list[Candidate] = list(stored.candidates(fingerprint(data), THRESHOLD))
        assert found == list(decoded.candidates(fingerprint(data), THRESHOLD))
        # images are fetched for a crop candidate's overlap check only once it aligned, never for its view
        assert fetches.fetched <= {candidate.key for candidate in found}
        match = stored.lookup(fingerprint(data), SETTINGS.phash_threshold, SETTINGS.colour_threshold).match
        other = decoded.lookup(fingerprint(data), SETTINGS.phash_threshold, SETTINGS.colour_threshold).match
        assert match == other
        tiers.append(None if match is None else match.tier)
    assert tiers.count("crop") >= 6 and tiers[-6:] == [None] * 6


def test_caches_and_stores_of_the_format_before_views_are_never_read(tmp_path: Path) -> None:
    out = published(tmp_path, [encode(photo(n, 200)) for n in range(3)])
    cache = tmp_path / "cache"
    folder, _ = history_store(out, "v20260601", cache)
    assert folder is not None and folder.name.endswith(CACHE_FORMAT)
    [current] = cache.glob("*.parquet")
    # what the format before wrote: the same file name but for its format, columns without the views
    old_cache = current.with_name(current.name.replace(CACHE_FORMAT, OLD_FORMAT))
    pq.write_table(pq.read_table(current).drop(["grey", "aspect"]), old_cache)
    old_store = folder.with_name(folder.name.replace(CACHE_FORMAT, OLD_FORMAT))
    folder.rename(old_store)
    for name in ("grey.npy", "aspect.npy"):
        (old_store / name).unlink()
    manifest = StoreManifest.model_validate_json((old_store / MANIFEST).read_bytes())
    files = {name: digest for name, digest in manifest.files.items() if name not in ("grey.npy", "aspect.npy")}
    (old_store / MANIFEST).write_text(manifest.model_copy(update={"files": files}).model_dump_json())
    current.unlink()
    problems: list[tuple[Path, str]] = []
    again, _ = history_store(out, "v20260601", cache, lambda path, why: problems.append((path, why)))
    assert problems == [] and again == folder and current.is_file()
    assert pq.read_table(current).schema.equals(FINGERPRINT_SCHEMA)
    assert open_store(folder).grey.any(axis=1).all()
    assert prune_history_stores(cache, folder) == [old_store.name] and old_cache.is_file()


def test_entries_added_after_the_store_have_their_views_decoded(tmp_path: Path) -> None:
    originals = [photo(n, 200) for n in range(3)]
    out = published(tmp_path, [encode(im) for im in originals])
    folder, _ = history_store(out, "v20260601", tmp_path / "cache")
    assert folder is not None
    added = photo(50, 240)
    images = {"added": encode(added)}
    history = PublishedImages(out)
    index = FingerprintIndex.of_store(lambda key: images[key] if key in images else history(key), open_store(folder))
    found = fingerprint(images["added"])
    index.add("added", found.sha256, found.phash, found.windows)
    rng = np.random.default_rng(7)
    for im, key in ((added, "added"), (originals[1], "v20260101/real_studio_flat/gallery#1")):
        query = fingerprint(encode(cropped(im, rng), "JPEG", 85))
        match = index.lookup(query, SETTINGS.phash_threshold, SETTINGS.colour_threshold).match
        assert match is not None and (match.key, match.tier) == (key, "crop")


def test_a_published_file_written_anew_at_the_same_path_is_read_anew(tmp_path: Path) -> None:
    first = [encode(photo(n, 64)) for n in range(2)]
    key = "v20260101/real_studio_flat/gallery#1"
    assert PublishedImages(published(tmp_path, first))(key) == first[1]
    shutil.rmtree(tmp_path / "out")  # as a test's or a rebuilt release's folder is removed and made again
    second = [encode(photo(10 + n, 64)) for n in range(2)]
    assert PublishedImages(published(tmp_path, second))(key) == second[1] != first[1]
