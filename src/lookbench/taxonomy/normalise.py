"""Map free-form category and attribute labels (case, spacing, synonyms, plurals) onto the taxonomy."""

from __future__ import annotations

import re

from lookbench._util.labels import normalise_label
from lookbench.taxonomy.loader import load_taxonomy
from lookbench.taxonomy.models import Taxonomy, TaxonomyError

_ATTRIBUTE_SYNONYMS: dict[str, str] = {
    "gray": "grey",
    "navy": "blue",
    "beige": "brown",
    "tan": "brown",
    "camel": "brown",
    "burgundy": "red",
    "khaki": "green",
    "stripe": "striped",
    "stripes": "striped",
    "plaid": "checked",
    "check": "checked",
    "gingham": "checked",
    "tartan": "checked",
    "dots": "polka dot",
    "dotted": "polka dot",
    "polka dots": "polka dot",
    "flower": "floral",
    "plain": "solid",
    "round neck": "crew neck",
    "crewneck": "crew neck",
    "v neck": "v-neck",
    "vneck": "v-neck",
    "turtle neck": "turtleneck",
    "roll neck": "turtleneck",
    "long sleeves": "long sleeve",
    "long-sleeved": "long sleeve",
    "short sleeves": "short sleeve",
    "short-sleeved": "short sleeve",
    "3/4 sleeve": "three-quarter sleeve",
    "zipper": "zip",
    "zip-up": "zip",
    "button": "buttons",
    "button-up": "buttons",
    "laces": "lace-up",
    "velcro": "hook and loop",
    "hooded": "hood",
    "pocket": "patch pockets",
    "pockets": "patch pockets",
    "pleated": "pleats",
    "ruffle": "ruffles",
    "distressed": "ripped",
    "sleeve-less": "sleeveless",
}


def clean(label: object) -> str:
    """A label in the form every label is compared in (`normalise_label`), whitespace and underscores collapsed."""
    return re.sub(r"[\s_]+", " ", normalise_label(label))


def _singular(text: str) -> str:
    if text.endswith("ies") and len(text) > 4:
        return text[:-3] + "y"
    if text.endswith(("sses", "shes", "ches")):
        return text[:-2]
    if text.endswith("s") and not text.endswith("ss"):
        return text[:-1]
    return text


_INDEXES: dict[int, tuple[Taxonomy, dict[str, str]]] = {}


def _category_index(taxonomy: Taxonomy) -> dict[str, str]:
    cached = _INDEXES.get(id(taxonomy))
    if cached is not None and cached[0] is taxonomy:
        return cached[1]
    index: dict[str, str] = {}
    for name, cat in taxonomy.categories.items():
        for key in (name, *cat.synonyms):
            index.setdefault(clean(key), name)
    _INDEXES[id(taxonomy)] = (taxonomy, index)
    return index


def _variants(text: str) -> list[str]:
    return [text, text.replace("-", " "), text.replace(" ", "-"), _singular(text)]


def normalise_category(label: object, taxonomy: Taxonomy | None = None) -> str:
    """The canonical category for a label such as "Blouse", "T-Shirts" or "trainers"."""
    taxonomy = taxonomy or load_taxonomy()
    index = _category_index(taxonomy)
    text = clean(label)
    for key in _variants(text):
        if key in index:
            return index[key]
    raise TaxonomyError(f"unknown category {label!r}; known: {', '.join(taxonomy.categories)}")


def normalise_attribute(label: object, category: str | None = None, taxonomy: Taxonomy | None = None) -> str:
    """The canonical attribute for a label; with a category, it must be one that category allows."""
    taxonomy = taxonomy or load_taxonomy()
    known = set(taxonomy.all_attributes())
    text = clean(label)
    found = None
    for key in _variants(text):
        key = _ATTRIBUTE_SYNONYMS.get(key, key)
        if key in known:
            found = key
            break
    if found is None:
        raise TaxonomyError(f"unknown attribute {label!r}")
    if category is not None:
        cat = normalise_category(category, taxonomy)
        if found not in taxonomy.categories[cat].attribute_names():
            raise TaxonomyError(f"attribute {found!r} is not allowed for category {cat!r}")
    return found
