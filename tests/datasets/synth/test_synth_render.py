"""Label exactness on pixels: every recorded attribute is drawn, the colour and parts are the recorded ones."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timezone

import numpy as np
import pytest

from lookbench.datasets.synth.catalogue import NOISE_ONLY, SPECS
from lookbench.datasets.synth.palette import accent, nearest_colour, nearest_colours, sample_shade
from lookbench.datasets.synth.patterns import sample_pattern_look
from lookbench.datasets.synth.products import (
    DETAILS,
    Product,
    changeable_groups,
    choose_main,
    main_candidates,
    main_group,
    sample_product,
    variant,
)
from lookbench.datasets.synth.render import render_product
from lookbench.datasets.synth.salience import salience
from lookbench.datasets.synth.shape import Pose
from lookbench.taxonomy import load_taxonomy

WHEN = datetime(2026, 5, 1, tzinfo=timezone.utc)


def _products(category: str, n: int = 12, seed: int = 0) -> list[Product]:
    rng = np.random.default_rng([seed, len(category), sum(map(ord, category))])
    return [sample_product(rng, category, f"{category}-{k}", WHEN) for k in range(n)]


def _opaque(product: Product, probe: str) -> bool:
    rendered = render_product(product)
    return rendered.image.getpixel(rendered.probes[probe])[3] > 0


def _with(product: Product, **attributes: str) -> Product:
    return replace(product, attributes={**product.attributes, **attributes})


def _details(product: Product, details: tuple[str, ...]) -> Product:
    return replace(product, details=details)


def test_all_27_taxonomy_categories_are_rendered_with_taxonomy_labels() -> None:
    tax = load_taxonomy()
    assert set(SPECS) == set(tax.categories) and len(SPECS) == 27
    groups: set[str] = set()
    for category in SPECS:
        allowed = set(tax.category(category).attribute_names())
        for product in _products(category, 6):
            assert set(product.all_attributes()) <= allowed, category
            assert product.main_attribute in product.all_attributes()
            assert product.main_attribute not in product.other_attributes()
            groups |= set(product.attributes)
        render_product(_products(category, 1)[0])
    assert {"material", "sleeve shape", "style"} <= groups


@pytest.mark.parametrize("category", sorted(SPECS))
def test_every_recorded_attribute_is_drawn(category: str) -> None:
    """Changing any recorded attribute (or toggling any detail) changes the picture: nothing recorded is undrawn."""
    rng = np.random.default_rng(5)
    for product in _products(category, 3, seed=1):
        base = np.asarray(render_product(product).image, dtype=np.int16)
        for group in changeable_groups(product):
            for _ in range(3):
                other = variant(product, group, rng, "v")
                changed = np.abs(np.asarray(render_product(other).image, dtype=np.int16) - base).max(axis=2) > 16
                assert changed.sum() >= 40, (category, group, product.attributes, other.attributes)


@pytest.mark.parametrize("category", sorted(SPECS))
def test_dominant_colour_is_the_recorded_colour(category: str) -> None:
    for product in _products(category, 8):
        rendered = render_product(product)
        pixels = np.asarray(rendered.image)
        visible = pixels[np.asarray(rendered.fabric_mask) > 0][:, :3]
        values, counts = np.unique(nearest_colours(visible), return_counts=True)
        assert values[np.argmax(counts)] == product.attribute("colour"), (product.product_id, product.attributes)


def test_same_labels_are_visibly_different_products() -> None:
    """Shade, proportions, print scale, trims and logos vary: two products with equal labels differ in many pixels."""
    rng = np.random.default_rng(11)
    for category in ("t-shirt", "dress", "jeans", "sneakers", "bag"):
        first = sample_product(rng, category, "a", WHEN)
        second = replace(
            first,
            rgb=sample_shade(first.attribute("colour"), rng),
            second=accent(rng, first.rgb),
            pattern_look=sample_pattern_look(rng),
            variation=int(rng.integers(2**31 - 1)),
        )
        a = np.asarray(render_product(first).image, dtype=np.int16)
        b = np.asarray(render_product(second).image, dtype=np.int16)
        assert (np.abs(a - b).max(axis=2) > 12).mean() > 0.05, category


def test_main_attribute_is_the_most_salient_distinguishing_one() -> None:
    for category in SPECS:
        for product in _products(category, 6):
            candidates = main_candidates(product.category, product.attributes, product.details)
            if not candidates:
                continue
            best = max(salience(a, g, product.rgb) for g, a in candidates)
            assert salience(product.main_attribute, main_group(product), product.rgb) == best
            fixed = set(SPECS[category].fixed.values()) | set(SPECS[category].always_details)
            assert product.main_attribute not in fixed


@pytest.mark.parametrize(
    ("rgb", "changes", "details", "main"),
    [
        ((128, 128, 128), {}, (), "grey"),  # a neutral colour (0.34) beats crew neck, short sleeve, hip length
        ((128, 128, 128), {}, ("chest pocket",), "chest pocket"),  # 0.36 > 0.34
        ((128, 128, 128), {"length": "cropped"}, (), "cropped"),
        ((255, 0, 0), {"length": "cropped", "colour": "red"}, (), "red"),  # saturated red 0.79 > cropped 0.6
        ((255, 0, 0), {"pattern": "floral", "colour": "red"}, (), "floral"),  # 0.95 beats any colour
    ],
)
def test_main_attribute_of_hand_made_t_shirts(
    rgb: tuple[int, int, int], changes: dict[str, str], details: tuple[str, ...], main: str
) -> None:
    """Known answers from the salience table, not re-derived with the generator's own functions."""
    plain = {"colour": "grey", "pattern": "solid", "neckline": "crew neck", "sleeve length": "short sleeve"}
    attributes = {**plain, "length": "hip length", **changes}
    assert choose_main("t-shirt", attributes, details, rgb) == main


def test_hood_is_present_exactly_when_recorded() -> None:
    for product in _products("jacket", 6):
        assert _opaque(_details(product, ("hood",)), "hood")
        assert not _opaque(_details(product, ()), "hood")
    assert all(_opaque(p, "hood") for p in _products("hoodie", 4))


def test_sleeve_length_is_drawn_as_recorded() -> None:
    base = _products("blouse", 1)[0]
    base = replace(base, attributes={k: v for k, v in base.attributes.items() if k != "sleeve shape"})
    expected = {"sleeveless": (False, False), "short sleeve": (True, False), "long sleeve": (True, True)}
    for length, (short, long) in expected.items():
        product = _with(base, **{"sleeve length": length})
        for side in ("left", "right"):
            assert _opaque(product, f"sleeve_short_{side}") is short, length
            assert _opaque(product, f"sleeve_long_{side}") is long, length


def test_garment_lengths_are_drawn_as_recorded() -> None:
    for dress in _products("dress", 4):
        for length, below in {"mini": (False, False), "knee length": (True, False), "maxi": (True, True)}.items():
            product = _with(dress, length=length)
            assert (_opaque(product, "below_mini"), _opaque(product, "below_midi")) == below, length
    for pants in _products("pants", 4):
        for length, below in {
            "cropped": (False, False),
            "ankle length": (True, False),
            "full length": (True, True),
        }.items():
            product = _with(pants, length=length)
            assert (_opaque(product, "below_cropped"), _opaque(product, "below_ankle")) == below, length
    for top in _products("t-shirt", 4):
        assert not _opaque(_with(top, length="cropped"), "below_cropped")
        assert _opaque(_with(top, length="hip length"), "below_cropped")


def test_pockets_are_drawn_exactly_when_recorded() -> None:
    for product in _products("coat", 6):
        plain = _with(product, pattern="solid")
        with_pockets = render_product(_details(plain, ("patch pockets",)))
        without = render_product(_details(plain, ()))
        probe = with_pockets.probes["patch_pocket_left"]
        assert with_pockets.image.getpixel(probe)[:3] != without.image.getpixel(probe)[:3]
        assert nearest_colour(without.image.getpixel(probe)) == plain.attribute("colour")


def test_shoe_and_skirt_parts_follow_labels() -> None:
    boots = _products("boots", 1)[0]
    assert _opaque(_with(boots, **{"shaft height": "knee high"}), "shaft_high")
    assert not _opaque(_with(boots, **{"shaft height": "ankle boot"}), "shaft_mid")
    sneaker = _products("sneakers", 1)[0]
    assert _opaque(_with(sneaker, **{"shaft height": "high top"}), "high_top")
    assert not _opaque(_with(sneaker, **{"shaft height": "low top"}), "high_top")
    for heel, fabric in (("platform", False), ("flat", True)):
        rendered = render_product(_with(sneaker, heel=heel))
        colour = nearest_colour(rendered.image.getpixel(rendered.probes["platform"]))
        assert (colour == sneaker.attribute("colour")) is fabric, heel
    heels = _products("heels", 1)[0]
    assert _opaque(_with(heels, toe="pointed toe"), "toe_tip")
    assert not _opaque(_with(heels, toe="open toe"), "open_toe")
    skirt = _with(_products("skirt", 1)[0], length="knee length")
    assert not _opaque(_details(skirt, ("side slit",)), "slit")
    assert _opaque(_details(skirt, ()), "slit")


def test_materials_read_as_their_surface() -> None:
    """Mesh shows holes, leather and satin shine where suede stays matte (measured against the plain render)."""

    def surface(product: Product) -> np.ndarray:
        rendered = render_product(product)
        with_surface = np.asarray(rendered.image)[..., :3].astype(float).mean(axis=2)
        plain = np.asarray(render_product(product, plain=True).image)[..., :3].astype(float).mean(axis=2)
        return (with_surface - plain)[np.asarray(rendered.fabric_mask) > 0]

    sneaker = _with(_products("sneakers", 1)[0], colour="grey")
    heels = _with(_products("heels", 1)[0], colour="grey")

    def holes(material: str) -> float:
        return float((surface(_with(sneaker, material=material)) < -20).mean())

    def sheen(product: Product, material: str) -> float:
        return float(np.percentile(surface(_with(product, material=material)), 99))

    assert holes("mesh") > 0.05 and holes("leather") == 0.0
    assert sheen(heels, "satin") > sheen(heels, "leather") + 10
    assert sheen(sneaker, "leather") > sheen(sneaker, "suede") + 10


def test_noise_only_categories_exist_and_poses_redraw_garments() -> None:
    assert set(NOISE_ONLY) <= set(SPECS) and len(NOISE_ONLY) >= 3
    top = _with(_products("t-shirt", 1)[0], **{"sleeve length": "long sleeve"})
    flat = np.asarray(render_product(top).image)[..., 3] > 0
    worn = np.asarray(render_product(top, pose=Pose(10.0, 12.0)).image)[..., 3] > 0
    assert (flat != worn).mean() > 0.01


def test_hard_negative_changes_exactly_one_group() -> None:
    rng = np.random.default_rng(3)
    for category in SPECS:
        for product in _products(category, 4):
            groups = changeable_groups(product)
            assert len(groups) >= 2, category
            for group in groups:
                neg = variant(product, group, rng, "neg")
                keys = set(product.attributes) | set(neg.attributes)
                changed = {g for g in keys if product.attributes.get(g) != neg.attributes.get(g)}
                if group == DETAILS:
                    assert not changed and neg.details != product.details
                else:
                    assert changed - {"strap"} == {group}
                if group == main_group(product):
                    assert neg.main_attribute != product.main_attribute
                assert neg.main_attribute in neg.all_attributes()


def test_rendering_is_deterministic() -> None:
    product = _products("dress", 1)[0]
    assert render_product(product).image.tobytes() == render_product(product).image.tobytes()
