"""The weight-free `features:` models: thumbnail, colour-histogram, foreground-histogram and size baselines, their
options, and the names they answer to."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest
from PIL import Image
from typer.testing import CliRunner

from conftest import make_row, write_snapshot
from lookbench.cli.main import app
from lookbench.errors import LookBenchError
from lookbench.models.embed_options import EmbedOptions
from lookbench.models.features import FEATURES, WeightFreeFeatures, load
from lookbench.models.registry import parse_spec


def _quadrant_image(side: int, corner: tuple[int, int, int], rest: tuple[int, int, int]) -> Image.Image:
    """A square image of colour `rest` whose top-left quarter is `corner`."""
    pixels = np.empty((side, side, 3), dtype=np.uint8)
    pixels[:] = rest
    pixels[: side // 2, : side // 2] = corner
    return Image.fromarray(pixels)


def test_thumbnail_is_the_8x8_image_minus_its_mean() -> None:
    image = _quadrant_image(8, (250, 10, 10), (10, 10, 250))
    vector = WeightFreeFeatures("thumbnail").encode([image])
    pixels = np.asarray(image, dtype=np.float64)
    expected = np.append((pixels - pixels.mean()).ravel(), 1.0)
    assert vector.shape == (1, 193)
    np.testing.assert_allclose(vector[0], expected, atol=1e-4)


def test_thumbnail_of_a_flat_grey_image_is_the_constant_direction_whatever_its_level() -> None:
    flats = [Image.new("RGB", (40, 30), (level,) * 3) for level in (30, 90, 240)]
    expected = np.zeros(193)
    expected[-1] = 1.0  # no layout, but not the zero vector the evaluator refuses
    for vector in WeightFreeFeatures("thumbnail").encode(flats):
        np.testing.assert_allclose(vector, expected, atol=1e-4)


def test_colour_histogram_counts_the_share_of_each_8x8x8_colour_cell() -> None:
    image = _quadrant_image(64, (0, 0, 255), (255, 0, 0))
    vector = WeightFreeFeatures("colour-histogram").encode([image])[0]
    assert vector.shape == (512,)
    red, blue = 7 * 64, 7  # cells (r, g, b) = (7, 0, 0) and (0, 0, 7)
    assert vector[red] == pytest.approx(0.75) and vector[blue] == pytest.approx(0.25)
    assert vector.sum() == pytest.approx(1.0)


def test_colour_histogram_ignores_where_the_colours_are() -> None:
    left = _quadrant_image(64, (0, 0, 255), (255, 0, 0))
    right = left.transpose(Image.Transpose.FLIP_LEFT_RIGHT)
    a, b = WeightFreeFeatures("colour-histogram").encode([left, right])
    np.testing.assert_allclose(a, b)
    t = WeightFreeFeatures("thumbnail").encode([left, right])
    assert np.abs(t[0] - t[1]).max() > 100  # the thumbnail does see the layout


WIDTHS = {
    "colour-gradient": 256,
    "thumbnail": 193,
    "colour-histogram": 512,
    "foreground-histogram": 4096,
    "size": 128,
    "box-shape": 4 * 4 * (8 + 10),
    "box-shape-colour": 4 * 4 * (8 + 10) + 512,
}


def _png(image: Image.Image) -> bytes:
    buf = io.BytesIO()
    image.save(buf, format="PNG")
    return buf.getvalue()


@pytest.mark.parametrize("name", sorted(FEATURES))
def test_every_feature_gives_its_declared_width_for_any_image_size(name: str) -> None:
    images = [Image.new("RGB", (300, 120), (200, 30, 60)), Image.new("RGB", (17, 61), (5, 250, 5))]
    encoder = WeightFreeFeatures(name)
    batch = [_png(im) for im in images] if encoder.input_kind == "bytes" else images
    assert encoder.encode(batch).shape == (2, WIDTHS[name])
    assert encoder.describe()["dimension"] == WIDTHS[name]
    assert encoder.model_id == f"features:{name}"


def _centred_square(colours: list[tuple[int, int, int]], backdrop: tuple[int, int, int]) -> Image.Image:
    """A 64x64 image of `backdrop` with a 32x32 centre square split into equal vertical bands of `colours`."""
    pixels = np.empty((64, 64, 3), dtype=np.uint8)
    pixels[:] = backdrop
    band = 32 // len(colours)
    for i, colour in enumerate(colours):
        pixels[16:48, 16 + i * band : 16 + (i + 1) * band] = colour
    return Image.fromarray(pixels)


def test_foreground_histogram_counts_only_what_differs_from_the_border() -> None:
    image = _centred_square([(255, 0, 0), (0, 0, 255)], (250, 250, 250))
    vector = load(parse_spec("features:foreground-histogram?bins=4"), EmbedOptions()).encode([image])[0]
    assert vector.shape == (64,)
    red, blue = 3 * 16, 3  # cells (r, g, b) = (3, 0, 0) and (0, 0, 3); the white backdrop (3, 3, 3) is left out
    expected = np.zeros(64)
    expected[[red, blue]] = np.sqrt(0.5)  # sqrt of the half shares, then unit length
    np.testing.assert_allclose(vector, expected, atol=1e-6)


def test_foreground_histogram_ignores_the_backdrop_colour() -> None:
    on_white = _centred_square([(200, 40, 40)], (255, 255, 255))
    on_grey = _centred_square([(200, 40, 40)], (120, 120, 120))
    a, b = WeightFreeFeatures("foreground-histogram").encode([on_white, on_grey])
    assert float(a @ b) == pytest.approx(1.0)
    whole = WeightFreeFeatures("colour-histogram").encode([on_white, on_grey])
    assert float(whole[0] @ whole[1]) / float(np.linalg.norm(whole[0]) * np.linalg.norm(whole[1])) < 0.5


def test_a_flat_image_has_its_one_colour_as_foreground() -> None:
    vector = load(parse_spec("features:foreground-histogram?bins=2"), EmbedOptions()).encode(
        [Image.new("RGB", (30, 50), (10, 200, 10))]
    )[0]
    assert vector.shape == (8,) and vector[2] == pytest.approx(1.0)  # cell (0, 1, 0)


def test_thumbnail_side_option_gives_the_16x16_image_minus_its_mean() -> None:
    image = _quadrant_image(16, (250, 10, 10), (10, 10, 250))
    encoder = load(parse_spec("features:thumbnail?side=16"), EmbedOptions())
    pixels = np.asarray(image, dtype=np.float64)
    expected = np.append((pixels - pixels.mean()).ravel(), 1.0)
    np.testing.assert_allclose(encoder.encode([image])[0], expected, atol=1e-4)
    assert encoder.model_id == "features:thumbnail?side=16"
    assert load(parse_spec("features:thumbnail?side=8"), EmbedOptions()).model_id == "features:thumbnail"


def test_size_peaks_at_the_nearest_centre_and_compares_by_closeness() -> None:
    encoder = WeightFreeFeatures("size")
    small = _png(Image.new("RGB", (200, 100), (1, 2, 3)))
    vector = encoder.encode([small])[0].reshape(4, 32)
    # centres 2 + 12 i / 31 (log2 pixels): log2(200) = 7.64 is nearest centre 15, log2(100) = 6.64 centre 12;
    # log2 aspect 1 is nearest 21 of -3 + 6 i / 31
    assert [int(np.argmax(vector[0])), int(np.argmax(vector[1])), int(np.argmax(vector[2]))] == [15, 12, 21]
    np.testing.assert_allclose(np.linalg.norm(vector, axis=1), 1.0, rtol=1e-5)
    padded = small + b"\0" * len(small)  # same pixels, twice the bytes: the file-size bump moves by 1 (log2)
    a, b = encoder.encode([small, padded])
    # three blocks equal, the fourth two unit Gaussians (sigma 0.5) 1 apart: exp(-1 / (4 * 0.25))
    assert float(a @ b) / 4 == pytest.approx((3 + np.exp(-1.0)) / 4, abs=0.02)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("features:foreground-histogram?bins=0", "bins='0' must be a whole number from 2 to 16"),
        ("features:foreground-histogram?bins=17", "bins='17' must be a whole number from 2 to 16"),
        ("features:foreground-histogram?bins=four", "bins='four' must be a whole number from 2 to 16"),
        ("features:thumbnail?side=-3", "side='-3' must be a whole number from 2 to 32"),
        ("features:size?bins=4", "unknown option(s) bins"),
        ("features:foreground-histograms", "unknown feature 'foreground-histograms'"),
    ],
)
def test_bad_feature_options_are_one_line_errors(spec: str, message: str) -> None:
    with pytest.raises(LookBenchError, match=message.replace("(", r"\(").replace(")", r"\)")):
        load(parse_spec(spec), EmbedOptions())


def test_a_bad_bin_count_on_the_command_line_exits_2_with_one_line(tmp_path: Path) -> None:
    rows = [make_row(f"i{i}", "dress", "red", seed=i) for i in range(3)]
    snap = write_snapshot(tmp_path, {"real_studio_flat": {"query": rows[:1], "gallery": rows}})
    spec = "features:foreground-histogram?bins=99"
    result = CliRunner().invoke(app, ["eval", "-s", str(snap), "-m", spec, "-o", str(tmp_path / "r.json")])
    assert result.exit_code == 2, result.output
    errors = [line for line in result.output.splitlines() if line.strip()]
    assert len(errors) == 1 and "bins='99' must be a whole number from 2 to 16" in errors[0]


def test_an_unknown_feature_is_one_clear_error_naming_the_known_ones() -> None:
    with pytest.raises(LookBenchError, match="unknown feature 'thumbnails'; known: colour-gradient, thumbnail"):
        load(parse_spec("features:thumbnails"), EmbedOptions())


def _garment(seed: int) -> np.ndarray:
    """An RGBA 'garment drawing': a random polygon filled with a random stripe print, transparent elsewhere."""
    rng = np.random.default_rng(seed)
    mask = Image.new("L", (120, 160), 0)
    from PIL import ImageDraw

    ImageDraw.Draw(mask).polygon([tuple(p) for p in rng.uniform((5, 5), (115, 155), size=(7, 2))], fill=255)
    yy, xx = np.mgrid[0:160, 0:120]
    angle = rng.uniform(0, np.pi)
    stripes = (np.sin((xx * np.cos(angle) + yy * np.sin(angle)) / rng.uniform(3, 9)) > 0)[..., None]
    a, b = rng.integers(0, 255, size=(2, 3))
    rgb = np.where(stripes, a, b).astype(np.uint8)
    return np.dstack([rgb, np.asarray(mask)])


def _photo(garment: np.ndarray, side: int, at: tuple[int, int], scale: float, backdrop: tuple[int, int, int]):
    """The garment pasted at `scale` on a `side` x `side` plain backdrop at `at`."""
    drawing = Image.fromarray(garment, "RGBA")
    drawing = drawing.resize((int(drawing.width * scale), int(drawing.height * scale)), Image.Resampling.BILINEAR)
    photo = Image.new("RGB", (side, side), backdrop)
    photo.paste(drawing, at, drawing.getchannel("A").point(lambda v: 255 if v > 127 else 0))
    return photo


def _cosine(a: np.ndarray, b: np.ndarray) -> float:
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


@pytest.mark.parametrize("name", ["box-shape", "box-shape-colour"])
def test_box_features_are_the_same_for_an_image_and_its_mirror(name: str) -> None:
    photo = _photo(_garment(1), 224, (40, 20), 1.1, (235, 235, 230))
    mirrored = photo.transpose(Image.Transpose.FLIP_LEFT_RIGHT)
    a, b = WeightFreeFeatures(name).encode([photo, mirrored])
    np.testing.assert_allclose(a, b, atol=1e-6)
    thumbs = WeightFreeFeatures("thumbnail").encode([photo, mirrored])
    assert _cosine(*thumbs) < 0.99  # the garment is not itself symmetric: a mirror does change the image


def test_box_shape_registers_one_drawing_at_any_scale_and_place_and_tells_drawings_apart() -> None:
    encoder = WeightFreeFeatures("box-shape")
    garment = _garment(2)
    shop = _photo(garment, 224, (50, 30), 1.0, (250, 250, 250))
    street = _photo(garment, 300, (170, 120), 0.7, (90, 110, 100))  # smaller, elsewhere, another backdrop
    others = [_photo(_garment(seed), 224, (50, 30), 1.0, (250, 250, 250)) for seed in range(10, 16)]
    shop_v, street_v, *other_v = encoder.encode([shop, street, *others])
    assert _cosine(street_v, shop_v) > 0.9
    assert _cosine(street_v, shop_v) > max(_cosine(street_v, other) for other in other_v)  # retrieved first
    # the whole-image layout does not register the two: the thumbnail ranks another drawing first
    street_t, shop_t, *other_t = WeightFreeFeatures("thumbnail").encode([street, shop, *others])
    assert _cosine(street_t, shop_t) < max(_cosine(street_t, other) for other in other_t)


def test_box_colour_ignores_exposure_and_white_balance_of_the_garment() -> None:
    photo = _photo(_garment(3), 224, (40, 30), 1.0, (250, 250, 250))
    pixels = np.asarray(photo, dtype=np.float64)
    graded = Image.fromarray(np.clip(pixels * (0.8, 0.7, 0.9), 0, 255).astype(np.uint8))
    box = WeightFreeFeatures("box-shape-colour").encode([photo, graded])
    whole = WeightFreeFeatures("colour-histogram").encode([photo, graded])
    assert _cosine(*box) > 0.97
    assert _cosine(*whole) < _cosine(*box) - 0.3


def test_box_shape_cell_option_sets_the_grid_and_is_bounded() -> None:
    vector = load(parse_spec("features:box-shape?cell=2"), EmbedOptions()).encode(
        [_photo(_garment(4), 96, (0, 0), 0.5, (0, 0, 0))]
    )
    assert vector.shape == (1, 2 * 2 * 18)
    with pytest.raises(LookBenchError, match="cell=9.*1 to 8"):
        load(parse_spec("features:box-shape?cell=9"), EmbedOptions())


@pytest.mark.parametrize("name", ["box-shape", "box-shape-colour"])
@pytest.mark.parametrize("size", [(1, 1), (1, 300), (300, 1)])
def test_box_features_of_a_flat_or_one_pixel_wide_image_are_finite_and_not_zero(
    name: str, size: tuple[int, int]
) -> None:
    flat = Image.new("RGB", size, (90, 90, 90))  # no gradient anywhere; the evaluator refuses zero vectors
    vector = WeightFreeFeatures(name).encode([flat])[0]
    assert np.isfinite(vector).all() and np.linalg.norm(vector) > 0.5
