"""Label exactness on pixels: the rendered colour and parts are the recorded ones."""

from __future__ import annotations

from datetime import datetime, timezone

import numpy as np
import pytest

from lookbench.synth.catalogue import SPECS
from lookbench.synth.palette import nearest_colour, nearest_colours
from lookbench.synth.products import Product, changeable_groups, main_group, sample_product, variant
from lookbench.synth.render import render_product
from lookbench.taxonomy import load_taxonomy

WHEN = datetime(2026, 5, 1, tzinfo=timezone.utc)


def _products(category: str, n: int = 12, seed: int = 0) -> list[Product]:
    rng = np.random.default_rng([seed, len(category)])
    return [sample_product(rng, category, f"{category}-{k}", WHEN) for k in range(n)]


def _opaque(product: Product, probe: str) -> bool:
    rendered = render_product(product)
    return rendered.image.getpixel(rendered.probes[probe])[3] > 0


def _with(product: Product, **attributes: str) -> Product:
    return Product(**{**product.__dict__, "attributes": {**product.attributes, **attributes}})


def _details(product: Product, details: tuple[str, ...]) -> Product:
    return Product(**{**product.__dict__, "details": details})


def test_rendered_categories_and_labels_are_in_the_taxonomy() -> None:
    tax = load_taxonomy()
    assert len(SPECS) >= 12
    for category in SPECS:
        allowed = set(tax.category(category).attribute_names())
        for product in _products(category, 6):
            assert set(product.all_attributes()) <= allowed, category
            assert product.main_attribute in product.all_attributes()
            assert product.main_attribute not in product.other_attributes()


@pytest.mark.parametrize("category", sorted(SPECS))
def test_dominant_colour_is_the_recorded_colour(category: str) -> None:
    for product in _products(category, 8):
        rendered = render_product(product)
        pixels = np.asarray(rendered.image)
        visible = pixels[np.asarray(rendered.fabric_mask) > 0][:, :3]
        values, counts = np.unique(nearest_colours(visible), return_counts=True)
        assert values[np.argmax(counts)] == product.attribute("colour"), (product.product_id, product.attributes)


def test_hood_is_present_exactly_when_recorded() -> None:
    for product in _products("jacket", 6):
        assert _opaque(_details(product, ("hood",)), "hood")
        assert not _opaque(_details(product, ()), "hood")
    assert all(_opaque(p, "hood") for p in _products("hoodie", 4))


def test_sleeve_length_is_drawn_as_recorded() -> None:
    base = _products("blouse", 1)[0]
    expected = {"sleeveless": (False, False), "short sleeve": (True, False), "long sleeve": (True, True)}
    for length, (short, long) in expected.items():
        product = _with(base, **{"sleeve length": length})
        for side in ("left", "right"):
            assert _opaque(product, f"sleeve_short_{side}") is short, length
            assert _opaque(product, f"sleeve_long_{side}") is long, length


def test_garment_lengths_are_drawn_as_recorded() -> None:
    dress = _products("dress", 1)[0]
    for length, below in {"mini": (False, False), "knee length": (True, False), "maxi": (True, True)}.items():
        product = _with(dress, length=length)
        assert (_opaque(product, "below_mini"), _opaque(product, "below_midi")) == below, length
    pants = _products("pants", 1)[0]
    for length, below in {
        "cropped": (False, False),
        "ankle length": (True, False),
        "full length": (True, True),
    }.items():
        product = _with(pants, length=length)
        assert (_opaque(product, "below_cropped"), _opaque(product, "below_ankle")) == below, length
    top = _with(_products("t-shirt", 1)[0], length="cropped")
    assert not _opaque(top, "below_cropped")
    assert _opaque(_with(top, length="hip length"), "below_cropped")


def test_pockets_are_drawn_exactly_when_recorded() -> None:
    for product in _products("coat", 6):
        plain = _with(product, pattern="solid")
        with_pockets = render_product(_details(plain, ("patch pockets",)))
        without = render_product(_details(plain, ()))
        probe = with_pockets.probes["patch_pocket_left"]
        assert with_pockets.image.getpixel(probe)[:3] != without.image.getpixel(probe)[:3]
        assert nearest_colour(without.image.getpixel(probe)) == plain.attribute("colour")


def test_shoe_parts_follow_labels() -> None:
    boots = _products("boots", 1)[0]
    assert _opaque(_with(boots, **{"shaft height": "knee high"}), "shaft_high")
    assert not _opaque(_with(boots, **{"shaft height": "ankle boot"}), "shaft_mid")
    sneaker = _products("sneakers", 1)[0]
    assert _opaque(_with(sneaker, **{"shaft height": "high top"}), "high_top")
    assert not _opaque(_with(sneaker, **{"shaft height": "low top"}), "high_top")


def test_hard_negative_changes_exactly_one_group() -> None:
    rng = np.random.default_rng(3)
    for category in SPECS:
        for product in _products(category, 4):
            for group in changeable_groups(product):
                neg = variant(product, group, rng, "neg")
                changed = {g for g in product.attributes if product.attributes[g] != neg.attributes[g]}
                if group == "details":
                    assert not changed and neg.details != product.details
                else:
                    assert changed - {"strap"} == {group}
                if group == main_group(product):
                    assert neg.main_attribute != product.main_attribute
                assert neg.main_attribute in neg.all_attributes()


def test_rendering_is_deterministic() -> None:
    product = _products("dress", 1)[0]
    assert render_product(product).image.tobytes() == render_product(product).image.tobytes()
