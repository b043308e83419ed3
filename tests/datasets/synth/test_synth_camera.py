"""Synth colour as a camera sees it: per-shot development, shared shade families, prints that survive the AI look."""

from __future__ import annotations

from collections import Counter
from datetime import date, datetime

import numpy as np
import pytest
from PIL import Image

from lookbench.datasets.synth import camera
from lookbench.datasets.synth.camera import CAMERA, develop, sample_development
from lookbench.datasets.synth.catalogue import BOTTOMS, TOPS
from lookbench.datasets.synth.palette import FAMILY_RADIUS, family_of, shade_families
from lookbench.datasets.synth.plan import ReleasePlan, noise_products, plan_release
from lookbench.datasets.synth.products import Product, sample_product
from lookbench.datasets.synth.render import render_product
from lookbench.datasets.synth.street import compose, scene_params
from lookbench.datasets.synth.studio import query_shot, studio_image
from lookbench.datasets.synth.styles import Style
from lookbench.datasets.synth.tasks import RenderTask, run_task, set_noise_basis

RELEASE = date(2026, 6, 1)
WHEN = datetime(2026, 5, 1)
KS_FACTOR_001 = 1.628
"""c(0.01) of the two-sample Kolmogorov-Smirnov test: reject when D > c * sqrt((n + m) / (n m))."""


@pytest.fixture(scope="module")
def small() -> ReleasePlan:
    return plan_release(0, RELEASE, "small")


def test_development_is_deterministic_per_seed_and_differs_between_seeds() -> None:
    image = Image.new("RGB", (32, 32), (120, 90, 60))
    first = [np.asarray(develop(image, np.random.default_rng([3, k]), "real")) for k in range(4)]
    again = [np.asarray(develop(image, np.random.default_rng([3, k]), "real")) for k in range(4)]
    assert all(np.array_equal(a, b) for a, b in zip(first, again, strict=True))
    assert len({a[0, 0].tobytes() for a in first}) == 4


def _foreground_mean(image: Image.Image) -> np.ndarray:
    """Mean RGB of the pixels far from the border's median colour (the garment on its backdrop)."""
    a = np.asarray(image.convert("RGB"), dtype=np.float32)
    border = np.concatenate([a[0], a[-1], a[:, 0], a[:, -1]])
    far = np.sqrt(((a - np.median(border, axis=0)) ** 2).sum(axis=2)) > 40
    return a[far].mean(axis=0)


def test_one_products_observed_colour_varies_across_its_shots_more_than_shades_within_a_family() -> None:
    rng = np.random.default_rng(11)
    product = next(
        p
        for p in (sample_product(rng, "t-shirt", "p", WHEN) for _ in range(50))
        if p.attribute("pattern", "solid") == "solid"
    )
    rendered = render_product(product)
    means = []
    for k in range(16):
        shot_rng = np.random.default_rng([5, k])
        means.append(_foreground_mean(studio_image(rendered, product.category, "real", query_shot(shot_rng), shot_rng)))
    spread = float(np.sqrt(np.asarray(means).var(axis=0).sum()))
    assert spread > 2 * FAMILY_RADIUS, f"observed colour spread {spread:.1f} across shots"


def test_shade_families_are_shared_by_many_products_and_near_misses(small: ReleasePlan) -> None:
    products = [p for sub in small.subsets for p in sub.query_products()]
    families = Counter((p.attribute("colour"), family_of(p.attribute("colour"), p.rgb)) for p in products)
    assert len(families) <= sum(len(shade_families(c)) for c in {p.attribute("colour") for p in products})
    assert sum(n for n in families.values() if n > 1) >= 0.95 * len(products)
    for colour, index in families:
        centre = shade_families(colour)[index]
        assert np.abs(centre - centre.mean(axis=0)).max() <= 2 * FAMILY_RADIUS
    queries = {p.product_id: p for p in products}
    same = other = 0
    for chunk in small.noise_chunks()[:4]:
        for drawn in noise_products(small.seed, small.release, chunk, small.basis):
            query = queries.get(drawn.near_miss_of or "")
            if query is None or query.attribute("colour") != drawn.product.attribute("colour"):
                continue
            colour = query.attribute("colour")
            if family_of(colour, query.rgb) == family_of(colour, drawn.product.rgb):
                same += 1
            else:
                other += 1
    assert same > 0.3 * (same + other) and other > 0.2 * (same + other), (same, other)


def test_gallery_and_noise_cameras_are_drawn_from_one_distribution(
    small: ReleasePlan, monkeypatch: pytest.MonkeyPatch
) -> None:
    drawn: list[float] = []

    def recording(rng: np.random.Generator, style: Style, model: camera.CameraModel = CAMERA) -> camera.Development:
        development = sample_development(rng, style, model)
        drawn.append(float(np.log(development.gains).mean()))
        return development

    monkeypatch.setattr(camera, "sample_development", recording)
    items = tuple(item for sub in small.subsets for item in sub.gallery[:32])
    run_task(RenderTask("catalogue", "real", items, small.seed, small.release))
    gallery = list(drawn)
    drawn.clear()
    set_noise_basis(small.basis)
    try:
        for chunk in small.noise_chunks()[:2]:
            run_task(RenderTask("noise", "real", (chunk,), small.seed, small.release))
    finally:
        set_noise_basis(type(small.basis)())
    noise = list(drawn)
    assert len(gallery) == len(noise) == 128
    grid = np.sort(np.concatenate([gallery, noise]))
    cdf = [np.searchsorted(np.sort(s), grid, side="right") / len(s) for s in (gallery, noise)]
    d = float(np.abs(cdf[0] - cdf[1]).max())
    assert d < KS_FACTOR_001 * np.sqrt(2 / 128), f"KS D {d:.3f}"
    assert 0.7 * CAMERA.exposure < np.std(gallery) < 1.5 * CAMERA.exposure


def _edge_ratio(style: Style, scenes: int) -> float:
    """Mean gradient in the middle of printed over plain garments' crops, over the same outfits in `style`."""
    edges: dict[bool, list[float]] = {True: [], False: []}
    for k in range(scenes):
        rng = np.random.default_rng([21, k])
        outfit: list[Product] = [
            sample_product(rng, TOPS[k % len(TOPS)], "t", WHEN),
            sample_product(rng, BOTTOMS[k % len(BOTTOMS)], "b", WHEN),
        ]
        scene = compose(outfit, scene_params(np.random.default_rng([22, k])), style, np.random.default_rng([23, k]))
        assert scene.image is not None
        for item in scene.items:
            if item.visibility < 0.45:
                continue
            a = np.asarray(scene.image.crop(item.bbox).convert("L"), dtype=np.float32)
            h, w = a.shape
            c = a[h // 4 : 3 * h // 4, w // 4 : 3 * w // 4]
            grad = np.abs(np.diff(c, axis=1))[:-1] + np.abs(np.diff(c, axis=0))[:, :-1]
            edges[item.product.attribute("pattern", "solid") != "solid"].append(float(grad.mean()))
    return float(np.mean(edges[True]) / np.mean(edges[False]))


def test_prints_survive_the_ai_look_about_as_well_as_a_camera_keeps_them() -> None:
    real, aigen = _edge_ratio("real", 16), _edge_ratio("aigen", 16)
    assert real > 1.1
    assert aigen > 0.9 * real, f"printed/plain edge ratio: aigen {aigen:.2f}, real {real:.2f}"
