"""`features:<name>`: weight-free image features, no weights and no network.

- `colour-gradient`, 256 numbers: a 4x4x4 RGB histogram of the whole image and of its centre, and 4x4 cells of 8-bin
  magnitude-weighted histograms of unsigned gradient orientations, on a 64x64 resize. The builder's probes and
  distractor mining use it where no learned model is wanted.
- `thumbnail`, 193 numbers: the 8x8 RGB thumbnail minus its mean (cosine = correlation of the two thumbnails),
  then a constant 1 (one grey level), so a flat image is that constant direction rather than a zero vector.
  `thumbnail?side=N` (2 to 32): the N x N one.
- `colour-histogram`, 512 numbers: the normalised 8x8x8 joint RGB histogram of the whole image on a 64x64 resize.
- `foreground-histogram?bins=N` (2 to 16, default 16), N^3 numbers: the joint RGB histogram (N levels a channel) of
  the foreground pixels of a 64x64 resize, those farther than 48 (RGB distance, 0-255) from the median colour of the
  4-pixel border (every pixel when none is), square-rooted and L2-normalised (cosine = Hellinger affinity).
- `box-shape?cell=N` (1 to 8, default 4), N^2 x 18 numbers: the garment's box registered cell for cell: the
  foreground's bounding box (foreground as in `foreground-histogram`) cropped and resized to 64 x 64 grey, then per
  cell of an N x N grid an 8-bin magnitude-weighted histogram of unsigned gradient orientations and a 10-bin histogram
  of rotation-invariant uniform local binary patterns (texture), each cell's histograms square-rooted and
  L2-normalised; the sum of the image's and its mirror's features (mirror-invariant); the orientation and texture
  blocks each L2-normalised, then joined with equal weight.
- `box-shape-colour?cell=N`, N^2 x 18 + 512 numbers: `box-shape` joined with equal weight with the square-rooted,
  L2-normalised 8x8x8 RGB histogram of the box's foreground after a grey-world correction (each channel scaled to a
  mean of 128: exposure and white balance normalised).
- `size`, 4 x 32 numbers: log2 width, log2 height, log2 aspect and log2 file bytes, each as a Gaussian bump
  (sigma 0.5) over 32 fixed centres, each block L2-normalised: cosine = mean closeness of the four.

All but `colour-gradient` are fashion-blind baselines: what layout, shape, colour or size alone scores on a snapshot
(docs/synth.md, docs/audit.md#query-side-shortcuts).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from PIL import Image

from lookbench._util.images import opened
from lookbench.errors import LookBenchError
from lookbench.models.embed_options import EmbedOptions
from lookbench.models.encoder import EncoderBase, InputKind
from lookbench.models.preprocess import Preprocess
from lookbench.models.spec import ModelSpec

SIDE = 64
CELLS = 4
BINS = 8
THUMB = 8
THUMB_FLAT = 1.0
"""The thumbnail's last number: a flat image (plain fabric, a blank sweep) has no layout but is not a zero vector,
which the evaluator refuses; against a thumbnail's norm (hundreds of grey levels) it moves cosines by ~1e-5."""
HISTOGRAM_LEVELS = 8
FOREGROUND_BORDER = 4
FOREGROUND_DISTANCE = 48.0
BOX_SIDE = 64
TEXTURE_BINS = 10
"""Rotation-invariant uniform binary patterns of 8 neighbours: 0-8 neighbours brighter, and every non-uniform one."""
BOX_COLOUR_LEVELS = 8
SIZE_CENTRES = 32
SIZE_SIGMA = 0.5
SIZE_RANGES = ((2.0, 14.0), (2.0, 14.0), (-3.0, 3.0), (6.0, 22.0))
"""log2 ranges of the size feature's centres: width, height, aspect (width / height), file bytes."""
Options = Mapping[str, int]
Box = tuple[float, float, float, float]
"""(left, top, right, bottom) in an image's pixels."""


def colour_histogram(rgb: np.ndarray, levels: int = 4) -> np.ndarray:
    """Normalised joint RGB histogram with `levels` per channel."""
    codes = (np.asarray(rgb, dtype=np.int64) * levels) // 256
    index = codes[..., 0] * levels * levels + codes[..., 1] * levels + codes[..., 2]
    hist = np.bincount(index.ravel(), minlength=levels**3).astype(np.float64)
    return hist / max(hist.sum(), 1.0)


def _orientations(grey: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per pixel, its unsigned gradient orientation as one of BINS bins over 0-180 degrees, and its magnitude."""
    gy, gx = np.gradient(grey)
    angle = np.mod(np.arctan2(gy, gx), np.pi)
    return np.minimum((angle / np.pi * BINS).astype(np.int64), BINS - 1), np.hypot(gx, gy)


def _cell_histograms(codes: np.ndarray, weights: np.ndarray | None, bins: int, cells: int) -> np.ndarray:
    """(cells, cells, bins) histograms of `codes` over an even grid, weighted by `weights` when given."""
    h, w = codes.shape
    row = np.minimum(np.arange(h) * cells // h, cells - 1)
    col = np.minimum(np.arange(w) * cells // w, cells - 1)
    index = (row[:, None] * cells + col[None, :]) * bins + codes
    flat = np.bincount(index.ravel(), None if weights is None else weights.ravel(), minlength=cells * cells * bins)
    return flat.reshape(cells, cells, bins)


def gradient_histograms(grey: np.ndarray) -> np.ndarray:
    """HOG-like: per cell of a CELLS x CELLS grid, a magnitude-weighted histogram of unsigned orientations."""
    hists = _cell_histograms(*_orientations(grey), BINS, CELLS).reshape(-1, BINS)
    return np.concatenate([hist / (np.linalg.norm(hist) + 1e-9) for hist in hists])


def thumbnail(image: Image.Image, side: int = THUMB) -> np.ndarray:
    """The RGB thumbnail (bilinear, 0-255) minus its mean, then THUMB_FLAT; JPEGs decode at a reduced scale."""
    image.draft("RGB", (side * 4, side * 4))
    small = np.asarray(image.convert("RGB").resize((side, side), Image.Resampling.BILINEAR), dtype=np.float64).ravel()
    return np.append(small - small.mean(), THUMB_FLAT)


def _resized(image: Image.Image) -> np.ndarray:
    return np.asarray(image.convert("RGB").resize((SIDE, SIDE), Image.Resampling.BILINEAR), dtype=np.int64)


def foreground_mask(rgb: np.ndarray) -> np.ndarray:
    """(h, w) True where a pixel is farther than FOREGROUND_DISTANCE from the median colour of the border frame."""
    frame = np.ones(rgb.shape[:2], dtype=bool)
    frame[FOREGROUND_BORDER:-FOREGROUND_BORDER, FOREGROUND_BORDER:-FOREGROUND_BORDER] = False
    background = np.median(rgb[frame], axis=0)
    return np.asarray(np.linalg.norm(rgb - background, axis=-1) > FOREGROUND_DISTANCE)


def foreground_histogram(image: Image.Image, bins: int = 16) -> np.ndarray:
    """Square-rooted, L2-normalised joint RGB histogram (`bins` levels a channel) of the foreground pixels."""
    rgb = _resized(image)
    mask = foreground_mask(rgb)
    pixels = rgb[mask] if mask.any() else rgb.reshape(-1, 3)
    root = np.sqrt(colour_histogram(pixels, bins))
    return np.asarray(root / np.linalg.norm(root))


def size_features(data: bytes) -> np.ndarray:
    """log2 width, height, aspect and file bytes, each a Gaussian bump over SIZE_CENTRES centres, unit blocks."""
    with opened(data) as header:
        width, height = header.size
    values = (np.log2(width), np.log2(height), np.log2(width / height), np.log2(len(data)))
    blocks = []
    for value, (low, high) in zip(values, SIZE_RANGES, strict=True):
        centres = np.linspace(low, high, SIZE_CENTRES)
        bump = np.exp(-0.5 * ((np.clip(value, low, high) - centres) / SIZE_SIGMA) ** 2)
        blocks.append(bump / np.linalg.norm(bump))
    return np.concatenate(blocks)


def _extent(occupied: np.ndarray) -> tuple[int, int]:
    """First and one past the last index of a boolean line with at least one true value."""
    return int(occupied.argmax()), len(occupied) - int(occupied[::-1].argmax())


def garment_box(image: Image.Image) -> Box:
    """(left, top, right, bottom) in the image's pixels of its foreground's bounding box; the whole image if none."""
    mask = foreground_mask(_resized(image))
    width, height = image.size
    if not mask.any():
        return (0.0, 0.0, float(width), float(height))
    columns, rows = np.asarray(mask.any(axis=0)), np.asarray(mask.any(axis=1))
    (x0, x1), (y0, y1) = _extent(columns), _extent(rows)
    return (x0 * width / SIDE, y0 * height / SIDE, x1 * width / SIDE, y1 * height / SIDE)


def _registered(image: Image.Image, mode: str, box: Box) -> Image.Image:
    """The garment's box resized to BOX_SIDE x BOX_SIDE (the box in fractional pixels: a mirror gives its mirror)."""
    return image.convert(mode).resize((BOX_SIDE, BOX_SIDE), Image.Resampling.BILINEAR, box=box)


def _texture_codes(grey: np.ndarray) -> np.ndarray:
    """Per inner pixel, its rotation-invariant uniform binary pattern over the 8 neighbours (0-8; 9: non-uniform)."""
    centre = grey[1:-1, 1:-1]
    h, w = centre.shape
    ring = ((0, 0), (0, 1), (0, 2), (1, 2), (2, 2), (2, 1), (2, 0), (1, 0))
    bits = np.stack([grey[dy : dy + h, dx : dx + w] >= centre for dy, dx in ring]).astype(np.int64)
    transitions = np.abs(bits - np.roll(bits, 1, axis=0)).sum(axis=0)
    return np.where(transitions <= 2, bits.sum(axis=0), TEXTURE_BINS - 1)


def _unit_rows(histograms: np.ndarray) -> np.ndarray:
    """Each last-axis histogram square-rooted and L2-normalised (a Hellinger embedding per cell)."""
    root = np.sqrt(np.maximum(histograms, 0.0))
    return root / (np.linalg.norm(root, axis=-1, keepdims=True) + 1e-9)


def _unit(vector: np.ndarray) -> np.ndarray:
    return vector / (np.linalg.norm(vector) + 1e-12)


def _box_shape_of(grey: np.ndarray, cells: int) -> tuple[np.ndarray, np.ndarray]:
    """Orientation and texture cell histograms of one registered box."""
    orientation = _cell_histograms(*_orientations(grey), BINS, cells)
    texture = _cell_histograms(_texture_codes(grey), None, TEXTURE_BINS, cells)
    return _unit_rows(orientation), _unit_rows(texture)


def _box_shape(image: Image.Image, box: Box, cells: int) -> np.ndarray:
    grey = np.asarray(_registered(image, "L", box), dtype=np.float64)
    orientation, texture = _box_shape_of(grey, cells)
    mirror_orientation, mirror_texture = _box_shape_of(grey[:, ::-1], cells)
    # f(x) + f(mirror x) is the same for an image and its mirror
    orientation = orientation + mirror_orientation
    texture = texture + mirror_texture
    return np.concatenate([_unit(orientation.ravel()), _unit(texture.ravel())]) / np.sqrt(2.0)


def _box_colour(image: Image.Image, box: Box) -> np.ndarray:
    rgb = np.asarray(_registered(image, "RGB", box), dtype=np.int64)
    mask = foreground_mask(rgb)
    pixels = (rgb[mask] if mask.any() else rgb.reshape(-1, 3)).astype(np.float64)
    balanced = np.clip(pixels * (128.0 / np.maximum(pixels.mean(axis=0), 1.0)), 0, 255).astype(np.int64)
    return _unit(np.sqrt(colour_histogram(balanced, BOX_COLOUR_LEVELS)))


def box_shape(image: Image.Image, cells: int = CELLS) -> np.ndarray:
    """Mirror-invariant orientation and texture histograms of the garment's box, registered cell for cell."""
    return _box_shape(image, garment_box(image), cells)


def box_shape_colour(image: Image.Image, cells: int = CELLS) -> np.ndarray:
    """`box_shape` joined with equal weight with the square-rooted, L2-normalised joint RGB histogram of the box's
    foreground after a grey-world correction."""
    box = garment_box(image)
    return np.concatenate([_box_shape(image, box, cells), _box_colour(image, box)]) / np.sqrt(2.0)


def whole_colour_histogram(image: Image.Image) -> np.ndarray:
    """The normalised HISTOGRAM_LEVELS^3 joint RGB histogram of the image on a SIDE x SIDE resize."""
    return colour_histogram(_resized(image), HISTOGRAM_LEVELS)


def image_features(image: Image.Image) -> np.ndarray:
    """Colour histogram (64) + centre colour histogram (64) + gradient histograms (128) of one RGB image."""
    rgb = _resized(image)
    centre = rgb[SIDE // 4 : 3 * SIDE // 4, SIDE // 4 : 3 * SIDE // 4]
    grey = rgb.astype(np.float64).mean(axis=2)
    return np.concatenate([colour_histogram(rgb), colour_histogram(centre), gradient_histograms(grey)])


@dataclass(frozen=True)
class IntOption:
    """A whole-number spec option (`?name=N`) and its allowed range."""

    default: int
    low: int
    high: int


@dataclass(frozen=True)
class Feature:
    """One weight-free feature: how it is computed from its input and options, its width, and its revision (part
    of the embedding cache key, beside the spec with its options)."""

    compute: Callable[[Any, Options], np.ndarray]
    width: Callable[[Options], int]
    revision: str
    input_kind: InputKind = "image"
    options: dict[str, IntOption] = field(default_factory=dict)

    def resolved(self, given: Mapping[str, str], where: str) -> dict[str, int]:
        """Every option's value: the given ones checked (whole numbers in range), the others at their defaults."""
        values = {name: option.default for name, option in self.options.items()}
        for name, text in given.items():
            option = self.options[name]
            if not text.strip().isdigit() or not option.low <= int(text) <= option.high:
                raise LookBenchError(
                    f"{where}: option {name}={text!r} must be a whole number from {option.low} to {option.high}"
                )
            values[name] = int(text)
        return values


FEATURES = {
    "colour-gradient": Feature(lambda im, _: image_features(im), lambda _: 2 * 4**3 + CELLS * CELLS * BINS, "1"),
    "thumbnail": Feature(
        lambda im, o: thumbnail(im, o["side"]),
        lambda o: o["side"] ** 2 * 3 + 1,
        "2",
        options={"side": IntOption(THUMB, 2, 32)},
    ),
    "colour-histogram": Feature(lambda im, _: whole_colour_histogram(im), lambda _: HISTOGRAM_LEVELS**3, "1"),
    "foreground-histogram": Feature(
        lambda im, o: foreground_histogram(im, o["bins"]),
        lambda o: o["bins"] ** 3,
        "1",
        options={"bins": IntOption(16, 2, 16)},
    ),
    "box-shape": Feature(
        lambda im, o: box_shape(im, o["cell"]),
        lambda o: o["cell"] ** 2 * (BINS + TEXTURE_BINS),
        "1",
        options={"cell": IntOption(CELLS, 1, 8)},
    ),
    "box-shape-colour": Feature(
        lambda im, o: box_shape_colour(im, o["cell"]),
        lambda o: o["cell"] ** 2 * (BINS + TEXTURE_BINS) + BOX_COLOUR_LEVELS**3,
        "1",
        options={"cell": IntOption(CELLS, 1, 8)},
    ),
    "size": Feature(lambda data, _: size_features(data), lambda _: 4 * SIZE_CENTRES, "1", input_kind="bytes"),
}
FASHION_BLIND = (
    "features:foreground-histogram?bins=4",
    "features:foreground-histogram?bins=8",
    "features:foreground-histogram?bins=16",
    "features:thumbnail",
    "features:thumbnail?side=16",
    "features:size",
    "features:box-shape?cell=2",
    "features:box-shape",
    "features:box-shape?cell=8",
    "features:box-shape-colour?cell=2",
    "features:box-shape-colour",
)
"""The trivial baselines `lookbench audit` scores on the query side (docs/audit.md#query-side-shortcuts)."""


class WeightFreeFeatures(EncoderBase):
    """The Encoder of `features:<name>[?option=N]`: decoded RGB images (or encoded bytes) in, the feature's numbers
    out."""

    preprocess: Preprocess | None = None

    def __init__(self, name: str = "colour-gradient", options: Options | None = None) -> None:
        self.feature = FEATURES[name]
        self.options = dict(options) if options is not None else self.feature.resolved({}, name)
        given = "&".join(f"{k}={v}" for k, v in self.options.items() if v != self.feature.options[k].default)
        self.model_id = f"features:{name}" + (f"?{given}" if given else "")
        self.revision = self.feature.revision
        self.input_kind: InputKind = self.feature.input_kind
        self.dimension = self.feature.width(self.options)

    def encode(self, batch: list[Any]) -> np.ndarray:
        """A (len(batch), dimension) float array."""
        rows = [self.feature.compute(item, self.options) for item in batch]
        return np.asarray(rows, dtype=np.float32).reshape(len(batch), self.dimension)

    def describe(self) -> dict[str, Any]:
        """Kind and dimension."""
        return {"kind": "features", "dimension": self.dimension, "weights": "none"}


def load(spec: ModelSpec, options: EmbedOptions) -> WeightFreeFeatures:
    """The feature named by `features:<name>[?option=N]`."""
    name = spec.argument.partition("?")[0]
    if name not in FEATURES:
        raise LookBenchError(f"unknown feature {name!r}; known: {', '.join(FEATURES)}")
    feature = FEATURES[name]
    _, given = spec.options(set(feature.options))
    return WeightFreeFeatures(name, feature.resolved(given, str(spec)))
