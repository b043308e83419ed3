"""Street scenes and shop layouts: crops are a detector's boxes, things cross the garments, no photo reuses a layout."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timezone

import numpy as np
import pytest
from PIL import Image

from lookbench.datasets.synth import street
from lookbench.datasets.synth.catalogue import SPECS
from lookbench.datasets.synth.products import Product, sample_product
from lookbench.datasets.synth.render import render_product
from lookbench.datasets.synth.shape import Pose
from lookbench.datasets.synth.shots import POSED, SHOP_ARMS, shop_pose
from lookbench.datasets.synth.street import DETECTOR_MARGIN, FRONTS, compose, scene_params

WHEN = datetime(2026, 5, 1, tzinfo=timezone.utc)


def _first(kind: str) -> str:
    return next(category for category, spec in SPECS.items() if spec.kind == kind)


def _outfit(seed: int) -> list[Product]:
    rng = np.random.default_rng(seed)
    return [sample_product(rng, _first(kind), f"{kind}-{seed}", WHEN) for kind in ("top", "pants", "sneakers")]


def test_a_crop_is_a_detector_box_within_the_documented_margins_of_the_garment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each side of a crop lies between 8 % inside and 25 % outside the garment's own extent (read from a
    composition whose detector is exact), and both tighter and looser sides occur."""
    offsets = []
    for seed in range(6):
        params = scene_params(np.random.default_rng(seed))
        products = _outfit(seed)
        detected = compose(products, params, "real", None).items
        monkeypatch.setattr(street, "DETECTOR_MARGIN", (0.0, 0.0))
        exact = compose(products, params, "real", None).items
        monkeypatch.setattr(street, "DETECTOR_MARGIN", DETECTOR_MARGIN)
        for found, true in zip(detected, exact, strict=True):
            if true.visibility == 0 or min(true.bbox[2] - true.bbox[0], true.bbox[3] - true.bbox[1]) <= street.MIN_CROP:
                continue  # widened to the minimum crop or not visible: no detector box to read
            width, height = true.bbox[2] - true.bbox[0], true.bbox[3] - true.bbox[1]
            assert found.visibility == true.visibility
            sides = (true.bbox[0] - found.bbox[0], true.bbox[1] - found.bbox[1], found.bbox[2] - true.bbox[2],
                     found.bbox[3] - true.bbox[3])  # fmt: skip
            for side, extent in zip(sides, (width, height, width, height), strict=True):
                assert DETECTOR_MARGIN[0] * extent - 1 <= side <= DETECTOR_MARGIN[1] * extent + 1
                offsets.append(side / extent)
    assert len(offsets) >= 8 and min(offsets) < 0 < max(offsets)
    assert np.std(offsets) > 0.05


def test_an_arm_hair_or_strap_across_the_garments_hides_part_of_them_in_the_label_plan() -> None:
    """The label plan (which decides which garments get queries) sees what crosses the garments: a scene with an
    arm across the top leaves less of the top visible than the same scene with nothing in front."""
    assert set(FRONTS) == {"none", "arm", "hair", "strap"}
    products = _outfit(3)
    base = replace(scene_params(np.random.default_rng(3)), occluders=())
    clear = compose(products, replace(base, front="none"), "real", None, 0.5).items[0].visibility
    for front in ("arm", "hair", "strap"):
        assert compose(products, replace(base, front=front), "real", None, 0.5).items[0].visibility < clear


def test_shop_and_studio_photos_lay_out_sleeves_and_legs_anew_each_shot() -> None:
    """Garments with sleeves or legs get a per-photo pose inside SHOP_ARMS (their silhouettes differ between
    shots); shoes and bags keep the catalogue drawing."""
    rng = np.random.default_rng(0)
    top = sample_product(np.random.default_rng(1), _first("top"), "t", WHEN)
    shoe = sample_product(np.random.default_rng(1), _first("sneakers"), "s", WHEN)
    assert shop_pose(shoe, rng) == Pose() and "sneakers" not in POSED
    poses = [shop_pose(top, rng) for _ in range(12)]
    for pose in poses:
        assert SHOP_ARMS[0] <= pose.arm_left <= SHOP_ARMS[1] and SHOP_ARMS[0] <= pose.arm_right <= SHOP_ARMS[1]
    masks = {np.asarray(render_product(top, pose=pose).image.getchannel("A")).tobytes() for pose in poses[:4]}
    assert len(masks) == 4


def _mapped(coeffs: list[float], x: float, y: float) -> tuple[float, float]:
    """Where PIL's perspective transform with `coeffs` reads output pixel (x, y) from."""
    a, b, c, d, e, f, g, h = coeffs
    den = g * x + h * y + 1
    return (a * x + b * y + c) / den, (d * x + e * y + f) / den


def test_a_rolled_photo_shows_the_scene_turned_about_its_centre() -> None:
    """With no corner jitter, the photo's pixel at offset v from its centre shows the padded scene's pixel at v
    turned back by the roll about the scene's centre: the photo is the scene tilted by `roll` degrees."""
    size, pad, roll = (768, 1152), 170, 10.0
    params = replace(scene_params(np.random.default_rng(0)), corners=((0.0, 0.0),) * 4, roll=roll)
    coeffs = street._perspective(params, size, pad)
    t = np.radians(roll)
    for vx, vy in ((100.0, 0.0), (0.0, 200.0), (-50.0, 80.0), (300.0, -400.0)):
        x, y = _mapped(coeffs, size[0] / 2 + vx, size[1] / 2 + vy)
        assert x == pytest.approx(pad + size[0] / 2 + np.cos(t) * vx + np.sin(t) * vy, abs=1e-6)
        assert y == pytest.approx(pad + size[1] / 2 - np.sin(t) * vx + np.cos(t) * vy, abs=1e-6)


def test_no_roll_and_corner_jitter_reads_past_the_padded_scene() -> None:
    """At the largest roll either way and every extreme of corner jitter, the photo's four corners read from inside
    the padded scene, so a tilted photo has no empty corners."""
    size = street.SCENE_SIZE
    pad = int(street.PAD * size[1])
    base = scene_params(np.random.default_rng(0))
    jitter = 0.06
    for roll in (-street.ROLL, street.ROLL):
        for signs in np.ndindex(*(2,) * 8):
            offsets = [jitter * (2 * s - 1) for s in signs]
            corners = tuple((offsets[2 * k], offsets[2 * k + 1]) for k in range(4))
            coeffs = street._perspective(replace(base, roll=roll, corners=corners), size, pad)
            for x, y in ((0, 0), (size[0], 0), (size[0], size[1]), (0, size[1])):
                sx, sy = _mapped(coeffs, x, y)
                assert 0 <= sx <= size[0] + 2 * pad and 0 <= sy <= size[1] + 2 * pad


def test_shade_leaves_the_sun_alone_and_makes_the_shade_darker_and_bluer() -> None:
    """About SHADE of scenes get sun and shade: sunlit pixels keep their value, shaded ones lose at least the
    smallest depth on red and keep more blue than red."""
    grey = Image.new("RGB", (192, 288), (160, 160, 160))
    shaded = [np.asarray(street._shade(grey, np.random.default_rng(seed)), dtype=float) for seed in range(40)]
    touched = [pixels for pixels in shaded if (pixels != 160).any()]
    assert 0.4 <= len(touched) / len(shaded) <= 0.8
    for pixels in touched:
        assert (pixels == 160).all(axis=2).any()
        shade = pixels[..., 0] <= 160 * (1 - street.SHADE_DEPTH[0]) + 1
        assert shade.any()
        assert (pixels[shade][:, 2] > pixels[shade][:, 0]).all()
