"""The CPU preprocessing path (decode, box resize, crop, normalise into a batch) against a plain reference."""

from __future__ import annotations

import io

import numpy as np
import pytest
from PIL import Image

from embedding_helpers import ColourStats
from lookbench._util.images import MAX_PIXELS
from lookbench.embeddings.pipeline import Batch, prepare
from lookbench.models.effnet_lite import LITE_PREPROCESS
from lookbench.models.preprocess import IMAGENET_MEAN, IMAGENET_STD, Preprocess

RESAMPLE = {"bilinear": Image.Resampling.BILINEAR, "bicubic": Image.Resampling.BICUBIC}


def reference(data: bytes, pre: Preprocess) -> np.ndarray:
    """Open, flatten alpha on white, resize, crop or pad, then (x / 255 - mean) / std in float64, rounded once."""
    image = Image.open(io.BytesIO(data))
    image.load()
    if "A" in image.getbands() or image.mode == "P":
        rgba = image.convert("RGBA")
        image = Image.alpha_composite(Image.new("RGBA", rgba.size, "white"), rgba)
    image = image.convert("RGB")
    w, h = image.size
    resample = RESAMPLE[pre.interpolation]
    if pre.resize_mode == "squash":
        image = image.resize((pre.crop, pre.crop), resample)
    elif pre.resize_mode == "longest":
        new_w, new_h = max(1, round(w * pre.crop / max(w, h))), max(1, round(h * pre.crop / max(w, h)))
        canvas = Image.new("RGB", (pre.crop, pre.crop), (pre.fill,) * 3)
        canvas.paste(image.resize((new_w, new_h), resample), ((pre.crop - new_w) // 2, (pre.crop - new_h) // 2))
        image = canvas
    else:
        short = pre.resize or pre.crop
        new_w, new_h = max(short, round(w * short / min(w, h))), max(short, round(h * short / min(w, h)))
        left, top = (new_w - pre.crop) // 2, (new_h - pre.crop) // 2
        # Pillow's resampling of exactly the source region the crop keeps: resizing the whole image and then
        # cropping rounds its fixed-point weights differently (1 level, up to 8 at a 7x upscale of noise)
        sx, sy = w / new_w, h / new_h
        box = (left * sx, top * sy, (left + pre.crop) * sx, (top + pre.crop) * sy)
        image = image.resize((pre.crop, pre.crop), resample, box=box)
    pixels = np.asarray(image, dtype=np.float64).transpose(2, 0, 1)
    mean = np.asarray(pre.mean, dtype=np.float64)[:, None, None]
    std = np.asarray(pre.std, dtype=np.float64)[:, None, None]
    return ((pixels / 255.0 - mean) / std).astype(np.float32)


def encoded(image: Image.Image, fmt: str, **options: object) -> bytes:
    buf = io.BytesIO()
    image.save(buf, format=fmt, **options)
    return buf.getvalue()


def photo(rng: np.random.Generator, width: int, height: int) -> Image.Image:
    """Smooth gradients with noise and one hard edge: bicubic overshoot and clipping get exercised."""
    y, x = np.mgrid[0:height, 0:width]
    base = np.stack([(x * (3 + c) + y * (5 - c)) % 256 for c in range(3)], axis=-1).astype(np.float64)
    base[: height // 2, : width // 3] = 255
    noisy = base + rng.normal(0, 20, size=base.shape)
    return Image.fromarray(noisy.clip(0, 255).astype(np.uint8))


def samples(rng: np.random.Generator) -> dict[str, bytes]:
    """Encoded images of odd sizes in the modes a crawl delivers."""
    rgb = photo(rng, 37, 301)
    wide = photo(rng, 513, 19)
    rgba = photo(rng, 90, 61).convert("RGBA")
    rgba.putalpha(Image.fromarray(rng.integers(0, 256, size=(61, 90), dtype=np.uint8)))
    sixteen = Image.fromarray((rng.integers(0, 65536, size=(45, 33))).astype(np.uint16))
    return {
        "rgb_jpeg": encoded(rgb, "JPEG", quality=87),
        "wide_png": encoded(wide, "PNG"),
        "one_pixel": encoded(photo(rng, 1, 1), "PNG"),
        "grey_jpeg": encoded(photo(rng, 50, 77).convert("L"), "JPEG"),
        "cmyk_jpeg": encoded(photo(rng, 64, 40).convert("CMYK"), "JPEG"),
        "rgba_png": encoded(rgba, "PNG"),
        "la_png": encoded(rgba.convert("LA"), "PNG"),
        "palette_png": encoded(photo(rng, 71, 29).convert("P"), "PNG"),
        "palette_transparent_gif": encoded(rgba.convert("P"), "GIF", transparency=0),
        "sixteen_bit_png": encoded(sixteen, "PNG"),
    }


PREPROCESSES = [
    LITE_PREPROCESS,
    Preprocess(crop=17, resize=23, interpolation="bilinear", mean=IMAGENET_MEAN, std=IMAGENET_STD),
    Preprocess(crop=15, resize_mode="squash", mean=(0.1, 0.9, 0.5), std=(0.3, 0.05, 1.7)),
    Preprocess(crop=21, resize_mode="longest", fill=114),
]


@pytest.mark.parametrize("pre", PREPROCESSES, ids=["lite0", "shortest", "squash", "longest"])
def test_batches_match_the_plain_reference_for_every_mode_and_size(pre: Preprocess) -> None:
    images = samples(np.random.default_rng(7))
    encoder = ColourStats()
    encoder.preprocess = pre
    names = list(images)
    prepared = prepare(encoder, Batch(list(range(len(names))), [n.encode() for n in names], list(images.values())))
    assert prepared.errors == {} and prepared.ok == list(range(len(names)))
    for i, name in enumerate(names):
        expected = reference(images[name], pre)
        got = prepared.inputs[i]
        assert got.shape == expected.shape and got.dtype == np.float32, name
        # float32 arithmetic (pixel * scale - offset) against float64: rounding only, far below one pixel level
        assert np.abs(got - expected).max() <= 1e-6 * max(1.0, float(np.abs(expected).max())), name


def test_hostile_bytes_in_a_batch_fail_alone_with_their_reason() -> None:
    good = encoded(photo(np.random.default_rng(1), 40, 30), "JPEG")
    truncated = good[: len(good) // 2]
    frame = good.index(b"\xff\xc0") + 5  # the start-of-frame segment's height and width
    huge = (MAX_PIXELS // 60_000 + 1).to_bytes(2, "big") + (60_000).to_bytes(2, "big")
    bomb = good[:frame] + huge + good[frame + 4 :]
    empty = good[:frame] + bytes(4) + good[frame + 4 :]
    data: list[bytes | None] = [good, b"", None, truncated, bomb, empty, b"GIF89a\x00\x00\x00\x00", good]
    encoder = ColourStats()
    prepared = prepare(encoder, Batch(list(range(10, 18)), [bytes([i]) for i in range(8)], data))
    assert prepared.ok == [0, 7]
    assert set(prepared.errors) == {11, 12, 13, 14, 15, 16}
    assert "no bytes" in prepared.errors[11] and "no bytes" in prepared.errors[12]
    assert "does not decode" in prepared.errors[13]
    assert "too large" in prepared.errors[14]
    assert "does not decode" in prepared.errors[15] and "does not decode" in prepared.errors[16]
    assert encoder.preprocess is not None
    for row in (0, 1):
        assert np.abs(prepared.inputs[row] - reference(good, encoder.preprocess)).max() <= 1e-6
