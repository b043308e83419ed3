"""Model-free image statistics: what an image's source (studio, shop, scrape) leaves behind besides its content."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from PIL import Image
from PIL.JpegImagePlugin import JpegImageFile

from lookbench._util.images import BadImageError, decode_image, opened

SIDE = 64
"""Images are decoded (JPEG at a reduced DCT scale) and resized to SIDE x SIDE for the pixel statistics."""
BORDER = 4
"""Width in pixels (of SIDE) of the frame that stands for the border and background."""
HISTOGRAM_LEVELS = 4
EDGE_THRESHOLD = 0.1


@dataclass(frozen=True)
class StatisticGroup:
    """A named statistic and the feature columns it spans."""

    name: str
    columns: slice


GROUPS: tuple[StatisticGroup, ...] = (
    StatisticGroup("border colour", slice(0, 3)),
    StatisticGroup("background colour", slice(3, 6)),
    StatisticGroup("border saturation and spread", slice(6, 8)),
    StatisticGroup("saturation and spread", slice(8, 10)),
    StatisticGroup("edge density", slice(10, 12)),
    StatisticGroup("colour histogram", slice(12, 12 + HISTOGRAM_LEVELS**3)),
    StatisticGroup("size", slice(76, 78)),
    StatisticGroup("aspect", slice(78, 79)),
    StatisticGroup("file size", slice(79, 80)),
    StatisticGroup("format and JPEG quantisation", slice(80, 83)),
)
WIDTH = 83


def _saturation(rgb: np.ndarray) -> np.ndarray:
    high = rgb.max(axis=-1)
    low = rgb.min(axis=-1)
    return np.where(high > 0, (high - low) / np.maximum(high, 1e-9), 0.0)


def _luminance(rgb: np.ndarray) -> np.ndarray:
    return rgb @ np.array([0.299, 0.587, 0.114])


def _quantisation(image: Image.Image) -> tuple[float, float, float]:
    """(is JPEG, mean luma table entry, mean chroma table entry); zeros for other formats."""
    if not isinstance(image, JpegImageFile):
        return 0.0, 0.0, 0.0
    tables = image.quantization or {}
    luma = np.mean(tables[0]) if 0 in tables else 0.0
    chroma = np.mean(tables[1]) if 1 in tables else 0.0
    return 1.0, float(luma), float(chroma)


HEADER_WIDTH = 7
"""Columns read from the file rather than the pixels: size, aspect, file size, format and JPEG quantisation."""


@dataclass(frozen=True)
class Decoded:
    """What the statistics read of one image: its SIDE x SIDE resize and its file's facts."""

    pixels: np.ndarray
    """(SIDE, SIDE, 3) uint8."""
    header: np.ndarray
    """(HEADER_WIDTH,) log width, log height, log aspect, log file bytes, is JPEG, mean luma and chroma tables."""


def decode_for_statistics(data: bytes | None) -> Decoded:
    """The resize and the file's facts of one encoded image; BadImageError when it does not decode."""
    with opened(data) as header:
        width, height = header.size
        quant = _quantisation(header)
    picture = decode_image(data, draft=2 * SIDE)
    small = np.asarray(picture.resize((SIDE, SIDE), Image.Resampling.BILINEAR), dtype=np.uint8)
    facts = [np.log(width), np.log(height), np.log(width / height), np.log(len(data or b"x")), *quant]
    return Decoded(pixels=small, header=np.asarray(facts, dtype=np.float64))


def pixel_statistics(small: np.ndarray, header: np.ndarray) -> np.ndarray:
    """(WIDTH,) statistics, in GROUPS order, of a (SIDE, SIDE, 3) resize in [0, 1] and its file's facts."""
    frame = np.ones((SIDE, SIDE), dtype=bool)
    frame[BORDER:-BORDER, BORDER:-BORDER] = False
    border = small[frame]
    grey = _luminance(small)
    gradient = np.hypot(np.diff(grey, axis=0)[:, :-1], np.diff(grey, axis=1)[:-1, :])
    bins = np.minimum((small * HISTOGRAM_LEVELS).astype(np.int64), HISTOGRAM_LEVELS - 1)
    codes = (bins[..., 0] * HISTOGRAM_LEVELS + bins[..., 1]) * HISTOGRAM_LEVELS + bins[..., 2]
    histogram = np.bincount(codes.ravel(), minlength=HISTOGRAM_LEVELS**3) / codes.size
    out = np.concatenate(
        [
            border.mean(axis=0),
            np.median(border, axis=0),
            [_saturation(border).mean(), _luminance(border).std()],
            [_saturation(small).mean(), grey.std()],
            [(gradient > EDGE_THRESHOLD).mean(), gradient.mean()],
            histogram,
            header,
        ]
    )
    assert out.shape == (WIDTH,)
    return out


def image_statistics(data: bytes | None) -> np.ndarray:
    """(WIDTH,) statistics of one encoded image, in GROUPS order; BadImageError when it does not decode."""
    decoded = decode_for_statistics(data)
    return pixel_statistics(decoded.pixels / 255.0, decoded.header)


@dataclass(frozen=True)
class Measured:
    """Statistics of some rows (NaN lines where a row failed), why rows failed, and what was decoded when kept."""

    features: np.ndarray
    failed: dict[int, str]
    decoded: list[Decoded | None] | None = None


def statistics_of(images: dict[int, bytes], rows: np.ndarray, keep_decoded: bool = False) -> Measured:
    """(len(rows), WIDTH) statistics of the given rows and {row: error} for rows that could not be read (their
    lines are left as NaN); with `keep_decoded`, each row's resize and facts too (None where it failed)."""
    out = np.full((len(rows), WIDTH), np.nan)
    failed: dict[int, str] = {}
    decoded: list[Decoded | None] = [None] * len(rows)
    for i, row in enumerate(rows):
        data = images.get(int(row))
        if data is None:
            failed[int(row)] = "image has no bytes"
            continue
        try:
            one = decode_for_statistics(data)
        except BadImageError as exc:
            failed[int(row)] = str(exc)
            continue
        decoded[i] = one
        out[i] = pixel_statistics(one.pixels / 255.0, one.header)
    return Measured(out, failed, decoded if keep_decoded else None)
