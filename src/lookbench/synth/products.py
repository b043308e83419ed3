"""Products: exact labels plus the non-label look, sampled per category; hard-negative variants."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime

import numpy as np

from lookbench.synth.catalogue import BAG_STRAPS, SPECS
from lookbench.synth.palette import COLOURS, RGB, jitter
from lookbench.synth.patterns import PatternLook
from lookbench.taxonomy import load_taxonomy

DETAILS = "details"


@dataclass(frozen=True)
class Product:
    """One product: its category, attributes per group, details, main attribute, date and look."""

    product_id: str
    category: str
    attributes: dict[str, str]
    details: tuple[str, ...]
    main_attribute: str
    first_seen_at: datetime
    rgb: RGB
    pattern_look: PatternLook
    variation: int
    """Seed of small non-label variations (button count, proportions)."""

    def attribute(self, group: str, default: str = "") -> str:
        """The product's value in a single-valued group, or `default`."""
        return self.attributes.get(group, default)

    def has(self, detail: str) -> bool:
        """True if the product has the detail (e.g. hood, patch pockets)."""
        return detail in self.details

    def all_attributes(self) -> list[str]:
        """Every attribute value, in taxonomy group order, details last."""
        order = list(load_taxonomy().groups)
        values = [self.attributes[g] for g in sorted(self.attributes, key=order.index)]
        return values + list(self.details)

    def other_attributes(self) -> list[str]:
        """Every attribute except the main one."""
        return [a for a in self.all_attributes() if a != self.main_attribute]


def _choose(rng: np.random.Generator, values: tuple[str, ...] | list[str]) -> str:
    return str(values[int(rng.integers(len(values)))])


def _look(rng: np.random.Generator, colour: str) -> tuple[RGB, PatternLook, int]:
    rgb = jitter(COLOURS[colour], rng)
    look = PatternLook(
        period=int(rng.integers(12, 22)), phase=int(rng.integers(0, 32)), angle=float(rng.choice([0.0, 0.0, 0.785]))
    )
    return rgb, look, int(rng.integers(0, 2**31 - 1))


def pick_main(rng: np.random.Generator, attributes: dict[str, str], details: tuple[str, ...]) -> str:
    """The main attribute: colour, a non-solid pattern, or a structural attribute or detail."""
    structural = [v for g, v in attributes.items() if g not in ("colour", "pattern", "material", "strap")]
    structural += list(details)
    roll = rng.random()
    if roll < 0.3 or not structural:
        return attributes["colour"]
    if roll < 0.5 and attributes.get("pattern", "solid") != "solid":
        return attributes["pattern"]
    return _choose(rng, structural)


def sample_product(rng: np.random.Generator, category: str, product_id: str, first_seen_at: datetime) -> Product:
    """A random product of a rendered category, with exact labels."""
    spec = SPECS[category]
    attributes = {group: _choose(rng, values) for group, values in spec.vary.items()}
    attributes.update(spec.fixed)
    if "bag style" in attributes:
        attributes["strap"] = BAG_STRAPS[attributes["bag style"]]
    details = spec.always_details + tuple(d for d in spec.optional_details if rng.random() < 0.45)
    main = pick_main(rng, attributes, details)
    rgb, look, variation = _look(rng, attributes["colour"])
    return Product(product_id, category, attributes, details, main, first_seen_at, rgb, look, variation)


def changeable_groups(product: Product) -> list[str]:
    """Groups a hard negative may change: varied groups with another value, and optional details."""
    spec = SPECS[product.category]
    groups = [g for g, values in spec.vary.items() if len(values) > 1]
    if spec.optional_details:
        groups.append(DETAILS)
    return groups


def main_group(product: Product) -> str:
    """The group the product's main attribute belongs to."""
    if product.main_attribute in product.details:
        return DETAILS
    return next(g for g, v in product.attributes.items() if v == product.main_attribute)


def variant(product: Product, group: str, rng: np.random.Generator, product_id: str) -> Product:
    """A hard negative: the same product with one group changed (the main attribute follows the change)."""
    spec = SPECS[product.category]
    attributes = dict(product.attributes)
    details = product.details
    main = product.main_attribute
    rgb = product.rgb
    if group == DETAILS:
        toggled = main if main in spec.optional_details else _choose(rng, spec.optional_details)
        details = tuple(d for d in (*spec.always_details, *spec.optional_details) if (d in details) != (d == toggled))
        if main == toggled:
            main = attributes["colour"]
    else:
        old = attributes[group]
        attributes[group] = _choose(rng, [v for v in spec.vary[group] if v != old])
        if group == "bag style":
            attributes["strap"] = BAG_STRAPS[attributes["bag style"]]
        if group == "colour":
            rgb = jitter(COLOURS[attributes["colour"]], rng)
        if main == old:
            main = attributes[group]
    return replace(product, product_id=product_id, attributes=attributes, details=details, main_attribute=main, rgb=rgb)
