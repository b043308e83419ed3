"""Products: exact labels plus a wide non-label look, sampled per category; hard-negative variants."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace
from datetime import datetime
from functools import lru_cache
from itertools import chain, combinations
from itertools import product as cartesian

import numpy as np

from lookbench.datasets.synth.catalogue import BAG_STRAPS, SPECS
from lookbench.datasets.synth.palette import RGB, accent, family_of, sample_shade
from lookbench.datasets.synth.patterns import PatternLook, sample_pattern_look
from lookbench.datasets.synth.salience import pick_main
from lookbench.taxonomy import load_taxonomy

DETAILS = "details"
OPTIONAL_SHARE = 0.4
"""How often an optional group is left unrecorded (drawn in its plain form)."""
SAME_FAMILY_SHARE = 0.5
"""How often a restyled product (a near-miss distractor) keeps the shade family; otherwise it draws one afresh."""
LINKED_GROUPS = frozenset({"bag style"})
"""Groups whose change also changes another recorded attribute (a bag's style sets its strap)."""


@dataclass(frozen=True)
class Product:
    """One product: category, recorded attributes per group, details, main attribute, date and look."""

    product_id: str
    category: str
    attributes: dict[str, str]
    details: tuple[str, ...]
    main_attribute: str
    first_seen_at: datetime
    rgb: RGB
    second: RGB
    """Second colour of prints, trims and logos (never covers half the fabric)."""
    pattern_look: PatternLook
    variation: int
    """Seed of the non-label shape: proportions, trims, logo, button count."""

    def attribute(self, group: str, default: str = "") -> str:
        """The product's value in a single-valued group, or `default`."""
        return self.attributes.get(group, default)

    def has(self, detail: str) -> bool:
        """True if the product has the detail (e.g. hood, patch pockets)."""
        return detail in self.details

    def all_attributes(self) -> list[str]:
        """Every attribute value, in taxonomy group order, details last."""
        order = _group_order()
        values = [self.attributes[g] for g in sorted(self.attributes, key=order.index)]
        return values + list(self.details)

    def other_attributes(self) -> list[str]:
        """Every attribute except the main one."""
        return [a for a in self.all_attributes() if a != self.main_attribute]


@lru_cache(maxsize=1)
def _group_order() -> list[str]:
    return list(load_taxonomy().groups)


def consistent(category: str, attributes: dict[str, str]) -> bool:
    """False for combinations a garment cannot have (a sleeveless blouse has no sleeve shape, ...)."""
    if category == "blouse" and attributes.get("sleeve length") == "sleeveless" and "sleeve shape" in attributes:
        return False
    if category == "jumpsuit" and attributes.get("neckline") == "halter neck":
        return attributes.get("sleeve length") == "sleeveless"
    if category == "hat":
        style, material = attributes.get("hat style"), attributes.get("material")
        if style == "beanie" and material == "cotton":
            return False
        if style in ("fedora", "baseball cap") and material == "knit":
            return False
    return True


def _choose(rng: np.random.Generator, values: tuple[str, ...] | list[str]) -> str:
    return str(values[int(rng.integers(len(values)))])


def main_candidates(category: str, attributes: dict[str, str], details: tuple[str, ...]) -> list[tuple[str, str]]:
    """The (group, attribute) pairs that can distinguish the product within its category, in group order."""
    spec = SPECS[category]
    order = _group_order()
    groups = sorted((g for g in attributes if g in spec.vary), key=order.index)
    pairs = [(g, attributes[g]) for g in groups if len(spec.vary[g]) > 1 or g in spec.optional_groups]
    return pairs + [(DETAILS, d) for d in details if d in spec.optional_details]


def choose_main(category: str, attributes: dict[str, str], details: tuple[str, ...], rgb: RGB) -> str:
    """The most salient distinguishing attribute (the colour when nothing else is varied)."""
    return pick_main(main_candidates(category, attributes, details), rgb) or attributes["colour"]


def _with_derived(attributes: dict[str, str]) -> dict[str, str]:
    if "bag style" in attributes and attributes["bag style"] in BAG_STRAPS:
        attributes["strap"] = BAG_STRAPS[attributes["bag style"]]
    return attributes


def sample_attributes(rng: np.random.Generator, category: str) -> dict[str, str]:
    """One value per varied group (optional groups sometimes unrecorded), plus fixed and derived ones."""
    spec = SPECS[category]
    for _ in range(50):
        attributes = {}
        for group, values in spec.vary.items():
            if group in spec.optional_groups and rng.random() < OPTIONAL_SHARE:
                continue
            attributes[group] = _choose(rng, values)
        attributes.update(spec.fixed)
        if consistent(category, attributes):
            return _with_derived(attributes)
    raise RuntimeError(f"no consistent attributes for {category}")  # unreachable with the catalogue's rules


def label_space(category: str) -> Iterator[frozenset[str]]:
    """Every attribute set A (details included) that `sample_product` can give a product of `category`."""
    spec = SPECS[category]
    choices = [(*values, *((None,) if group in spec.optional_groups else ())) for group, values in spec.vary.items()]
    optional = spec.optional_details
    detail_sets = list(chain.from_iterable(combinations(optional, n) for n in range(len(optional) + 1)))
    for picked in cartesian(*choices):
        attributes = {g: v for g, v in zip(spec.vary, picked, strict=True) if v is not None}
        attributes.update(spec.fixed)
        if consistent(category, attributes):
            values = frozenset(_with_derived(attributes).values())
            for details in detail_sets:
                yield values | frozenset(spec.always_details) | frozenset(details)


def sample_product(rng: np.random.Generator, category: str, product_id: str, first_seen_at: datetime) -> Product:
    """A random product of a category, with exact labels and a wide non-label look."""
    spec = SPECS[category]
    attributes = sample_attributes(rng, category)
    details = spec.always_details + tuple(d for d in spec.optional_details if rng.random() < 0.4)
    rgb = sample_shade(attributes["colour"], rng)
    second = accent(rng, rgb)
    look = sample_pattern_look(rng)
    main = choose_main(category, attributes, details, rgb)
    variation = int(rng.integers(0, 2**31 - 1))
    return Product(product_id, category, attributes, details, main, first_seen_at, rgb, second, look, variation)


def _alternatives(product: Product, group: str) -> list[str | None]:
    spec = SPECS[product.category]
    current = product.attributes.get(group)
    values: list[str | None] = [v for v in spec.vary[group] if v != current]
    if group in spec.optional_groups and current is not None:
        values.append(None)
    out = []
    for value in values:
        attributes = {g: v for g, v in product.attributes.items() if g != group}
        if value is not None:
            attributes[group] = value
        if consistent(product.category, _with_derived(attributes)):
            out.append(value)
    return out


def changeable_groups(product: Product) -> list[str]:
    """Groups a hard negative may change (to a value consistent with the rest), and optional details."""
    spec = SPECS[product.category]
    groups = [g for g in spec.vary if _alternatives(product, g)]
    if spec.optional_details:
        groups.append(DETAILS)
    return groups


def main_group(product: Product) -> str:
    """The group the product's main attribute belongs to."""
    if product.main_attribute in product.details:
        return DETAILS
    return next(g for g, v in product.attributes.items() if v == product.main_attribute)


def variant(product: Product, group: str, rng: np.random.Generator, product_id: str) -> Product:
    """A hard negative: the same product with one group changed; its main attribute is re-chosen by salience."""
    spec = SPECS[product.category]
    attributes = dict(product.attributes)
    details = product.details
    rgb = product.rgb
    if group == DETAILS:
        main = product.main_attribute
        toggled = main if main in spec.optional_details else _choose(rng, spec.optional_details)
        details = tuple(d for d in (*spec.always_details, *spec.optional_details) if (d in details) != (d == toggled))
    else:
        choices = _alternatives(product, group)
        value = choices[int(rng.integers(len(choices)))]
        if value is None:
            del attributes[group]
        else:
            attributes[group] = value
        attributes = _with_derived(attributes)
        if group == "colour":
            rgb = sample_shade(attributes["colour"], rng)
    main = choose_main(product.category, attributes, details, rgb)
    return replace(product, product_id=product_id, attributes=attributes, details=details, main_attribute=main, rgb=rgb)


def restyled(product: Product, rng: np.random.Generator, product_id: str, first_seen_at: datetime) -> Product:
    """The same labels in another shop's look: a new shade within the colour name (as often as not in the same
    shade family), print look and shape."""
    colour = product.attributes["colour"]
    family = family_of(colour, product.rgb) if rng.random() < SAME_FAMILY_SHARE else None
    rgb = sample_shade(colour, rng, family)
    main = choose_main(product.category, product.attributes, product.details, rgb)
    return replace(
        product,
        product_id=product_id,
        first_seen_at=first_seen_at,
        rgb=rgb,
        second=accent(rng, rgb),
        pattern_look=sample_pattern_look(rng),
        variation=int(rng.integers(0, 2**31 - 1)),
        main_attribute=main,
    )


def near_miss(
    product: Product, changes: int, rng: np.random.Generator, product_id: str, first_seen_at: datetime
) -> Product:
    """A hard near-miss of `product`: its category and labels with `changes` groups changed (never a linked group,
    so exactly that many label values differ), in another shop's look."""
    out = restyled(product, rng, product_id, first_seen_at)
    changed: list[str] = []
    for _ in range(changes):
        groups = [g for g in changeable_groups(out) if g not in LINKED_GROUPS and g not in changed]
        group = groups[int(rng.integers(len(groups)))]
        out = variant(out, group, rng, product_id)
        changed.append(group)
    return out


def strict_labels(product: Product) -> tuple[str, frozenset[str]]:
    """The product's category and attribute set A as the strict fine rule compares them."""
    return product.category, frozenset(product.all_attributes())


class LabelCover:
    """Query products' label sets, to test whether a product carries one in full (same category, A_q within A)."""

    def __init__(self) -> None:
        self._sets: dict[str, set[frozenset[str]]] = {}
        self._count = 0

    def add(self, product: Product) -> None:
        """Remember a query product's labels."""
        category, attributes = strict_labels(product)
        self._sets.setdefault(category, set()).add(attributes)
        self._count += 1

    def covers(self, product: Product) -> bool:
        """True if some remembered product of the same category has every attribute `product` has or fewer."""
        category, attributes = strict_labels(product)
        known = self._sets.get(category, set())
        if 2 ** len(attributes) < len(known):  # a real-scale release holds thousands: look each subset up instead
            items = sorted(attributes)
            return any(frozenset(c) in known for size in range(len(items) + 1) for c in combinations(items, size))
        return any(q <= attributes for q in known)

    def __len__(self) -> int:
        return self._count
