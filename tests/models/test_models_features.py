"""The weight-free `features:` models: thumbnail and colour-histogram baselines, and the names they answer to."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

from lookbench.embeddings.options import EmbedOptions
from lookbench.errors import LookBenchError
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
    expected = (pixels - pixels.mean()).ravel()
    assert vector.shape == (1, 192)
    np.testing.assert_allclose(vector[0], expected, atol=1e-4)


def test_thumbnail_of_a_flat_image_is_zero_whatever_its_colour() -> None:
    flat = Image.new("RGB", (40, 30), (90, 90, 90))
    assert np.abs(WeightFreeFeatures("thumbnail").encode([flat])).max() < 1e-4


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


@pytest.mark.parametrize("name", sorted(FEATURES))
def test_every_feature_gives_its_declared_width_for_any_image_size(name: str) -> None:
    images = [Image.new("RGB", (300, 120), (200, 30, 60)), Image.new("RGB", (17, 61), (5, 250, 5))]
    encoder = WeightFreeFeatures(name)
    assert encoder.encode(images).shape == (2, FEATURES[name].dimension)
    assert encoder.describe()["dimension"] == FEATURES[name].dimension
    assert encoder.model_id == f"features:{name}"


def test_an_unknown_feature_is_one_clear_error_naming_the_known_ones() -> None:
    with pytest.raises(LookBenchError, match="unknown feature 'thumbnails'; known: colour-gradient, thumbnail"):
        load(parse_spec("features:thumbnails"), EmbedOptions())
