"""The 27 taxonomy categories the renderer draws: drawing kind, varied groups, fixed and optional attributes."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from lookbench.datasets.synth.palette import COLOURS

Kind = Literal[
    "top", "dress", "jumpsuit", "skirt", "pants", "bag", "backpack", "sneakers", "boots", "sandals", "heels", "hat"
]
ALL_COLOURS: tuple[str, ...] = tuple(COLOURS)
ALL_PATTERNS: tuple[str, ...] = ("solid", "striped", "checked", "polka dot", "floral")


@dataclass(frozen=True)
class CategorySpec:
    """How one category is rendered: its drawing kind, varied groups, fixed and optional attributes."""

    kind: Kind
    vary: dict[str, tuple[str, ...]]
    fixed: dict[str, str] = field(default_factory=dict)
    always_details: tuple[str, ...] = ()
    optional_details: tuple[str, ...] = ()
    optional_groups: tuple[str, ...] = ()
    """Varied groups a product may leave unrecorded (drawn in a plain form no label names)."""


def _spec(kind: Kind, vary: dict[str, tuple[str, ...]], **rest: object) -> CategorySpec:
    return CategorySpec(kind, {"colour": ALL_COLOURS, **vary}, **rest)  # type: ignore[arg-type]


SPECS: dict[str, CategorySpec] = {
    "blouse": _spec(
        "top",
        {
            "pattern": ALL_PATTERNS,
            "neckline": ("v-neck", "crew neck", "square neck", "boat neck"),
            "sleeve length": ("sleeveless", "short sleeve", "long sleeve"),
            "sleeve shape": ("puff sleeve", "bell sleeve"),
        },
        optional_details=("ruffles",),
        optional_groups=("sleeve shape",),
    ),
    "shirt": _spec(
        "top",
        {
            "pattern": ALL_PATTERNS,
            "collar": ("shirt collar", "mandarin collar"),
            "sleeve length": ("short sleeve", "long sleeve"),
            "fit": ("slim fit", "regular fit", "oversized"),
        },
        optional_details=("chest pocket", "epaulettes"),
    ),
    "t-shirt": _spec(
        "top",
        {
            "pattern": ALL_PATTERNS,
            "neckline": ("crew neck", "v-neck", "scoop neck"),
            "sleeve length": ("short sleeve", "long sleeve"),
            "length": ("cropped", "hip length"),
        },
        optional_details=("chest pocket",),
    ),
    "polo shirt": _spec(
        "top",
        {
            "pattern": ("solid", "striped"),
            "sleeve length": ("short sleeve", "long sleeve"),
            "fit": ("slim fit", "regular fit"),
            "style": ("casual", "sporty"),
        },
        fixed={"collar": "polo collar"},
        optional_details=("chest pocket",),
    ),
    "tank top": _spec(
        "top",
        {
            "pattern": ALL_PATTERNS,
            "neckline": ("scoop neck", "square neck", "halter neck", "v-neck"),
            "length": ("cropped", "hip length"),
            "fit": ("slim fit", "oversized"),
        },
    ),
    "sweatshirt": _spec(
        "top",
        {
            "pattern": ("solid", "striped"),
            "closure": ("pullover", "zip"),
            "length": ("cropped", "hip length"),
            "fit": ("regular fit", "oversized"),
        },
        fixed={"neckline": "crew neck"},
        optional_details=("kangaroo pocket", "ribbed cuffs"),
    ),
    "hoodie": _spec(
        "top",
        {
            "pattern": ("solid", "striped", "checked"),
            "closure": ("pullover", "zip"),
            "length": ("cropped", "hip length"),
            "fit": ("regular fit", "oversized"),
        },
        always_details=("hood",),
        optional_details=("kangaroo pocket", "ribbed cuffs"),
    ),
    "sweater": _spec(
        "top",
        {
            "pattern": ("solid", "striped", "checked"),
            "neckline": ("crew neck", "v-neck", "turtleneck"),
            "sleeve length": ("short sleeve", "long sleeve"),
            "length": ("cropped", "hip length"),
            "fit": ("regular fit", "oversized"),
        },
        optional_details=("ribbed cuffs",),
    ),
    "cardigan": _spec(
        "top",
        {
            "pattern": ("solid", "striped", "checked"),
            "neckline": ("v-neck", "crew neck"),
            "closure": ("buttons", "zip"),
            "sleeve length": ("three-quarter sleeve", "long sleeve"),
            "length": ("cropped", "hip length", "thigh length"),
        },
        optional_details=("patch pockets",),
    ),
    "jacket": _spec(
        "top",
        {
            "pattern": ("solid", "checked"),
            "material": ("denim", "leather", "cotton", "suede"),
            "closure": ("buttons", "zip"),
            "collar": ("shirt collar", "no collar"),
            "length": ("cropped", "hip length"),
        },
        optional_details=("hood", "patch pockets", "chest pocket"),
    ),
    "blazer": _spec(
        "top",
        {
            "pattern": ("solid", "striped", "checked"),
            "collar": ("notched lapel", "shawl collar"),
            "fit": ("slim fit", "regular fit", "oversized"),
            "style": ("formal", "casual"),
        },
        fixed={"closure": "buttons"},
        optional_details=("patch pockets", "chest pocket"),
    ),
    "coat": _spec(
        "top",
        {
            "pattern": ("solid", "checked"),
            "closure": ("buttons", "zip"),
            "collar": ("notched lapel", "shirt collar", "no collar"),
            "length": ("hip length", "thigh length", "knee length"),
        },
        optional_details=("hood", "belt", "patch pockets"),
    ),
    "vest": _spec(
        "top",
        {
            "pattern": ("solid", "checked"),
            "closure": ("buttons", "zip"),
            "neckline": ("v-neck", "crew neck"),
            "length": ("cropped", "hip length"),
        },
        optional_details=("hood", "patch pockets"),
    ),
    "dress": _spec(
        "dress",
        {
            "pattern": ("solid", "striped", "polka dot", "floral"),
            "neckline": ("v-neck", "crew neck"),
            "sleeve length": ("sleeveless", "short sleeve", "long sleeve"),
            "length": ("mini", "knee length", "midi", "maxi"),
            "fit": ("a-line", "bodycon"),
        },
    ),
    "jumpsuit": _spec(
        "jumpsuit",
        {
            "pattern": ALL_PATTERNS,
            "neckline": ("v-neck", "square neck", "halter neck"),
            "sleeve length": ("sleeveless", "short sleeve", "long sleeve"),
            "fit": ("wide leg", "straight leg"),
        },
        optional_details=("belt", "patch pockets"),
    ),
    "skirt": _spec(
        "skirt",
        {
            "pattern": ALL_PATTERNS,
            "length": ("mini", "knee length", "midi", "maxi"),
            "fit": ("a-line", "pencil"),
            "closure": ("zip", "wrap"),
        },
        optional_details=("pleats", "side slit"),
        optional_groups=("closure",),
    ),
    "pants": _spec(
        "pants",
        {
            "pattern": ("solid", "striped", "checked"),
            "length": ("full length", "ankle length", "cropped"),
            "fit": ("skinny", "straight leg", "wide leg", "flared"),
            "closure": ("drawstring",),
        },
        optional_details=("cargo pockets", "pleats"),
        optional_groups=("closure",),
    ),
    "jeans": CategorySpec(
        "pants",
        {
            "colour": ("blue", "black", "grey", "white"),
            "length": ("full length", "ankle length", "cropped"),
            "fit": ("skinny", "straight leg", "wide leg", "flared"),
            "style": ("casual", "vintage"),
        },
        fixed={"material": "denim"},
        optional_details=("ripped", "cargo pockets"),
    ),
    "shorts": _spec(
        "pants",
        {
            "pattern": ("solid", "striped", "checked", "floral"),
            "length": ("thigh length", "knee length"),
            "fit": ("slim fit", "regular fit"),
            "closure": ("drawstring",),
        },
        optional_details=("cargo pockets", "ripped"),
        optional_groups=("closure",),
    ),
    "leggings": _spec(
        "pants",
        {
            "pattern": ("solid", "striped", "floral"),
            "length": ("full length", "ankle length", "cropped"),
            "material": ("cotton", "mesh"),
            "style": ("sporty", "casual"),
        },
    ),
    "bag": _spec(
        "bag",
        {
            "pattern": ("solid", "checked"),
            "bag style": ("tote", "shoulder bag", "crossbody", "clutch", "bucket bag"),
            "material": ("leather", "canvas", "suede"),
        },
    ),
    "backpack": _spec(
        "backpack",
        {
            "pattern": ("solid", "checked", "striped"),
            "closure": ("zip", "drawstring", "buckle"),
            "material": ("canvas", "leather"),
        },
        fixed={"bag style": "backpack"},
        optional_details=("patch pockets",),
    ),
    "sneakers": _spec(
        "sneakers",
        {
            "shaft height": ("low top", "high top"),
            "closure": ("lace-up", "slip-on", "hook and loop"),
            "heel": ("flat", "platform"),
            "material": ("leather", "canvas", "mesh", "suede"),
            "style": ("sporty", "casual"),
        },
    ),
    "boots": _spec(
        "boots",
        {
            "shaft height": ("ankle boot", "mid-calf", "knee high"),
            "closure": ("zip", "lace-up", "slip-on"),
            "heel": ("flat", "block heel", "stiletto"),
            "toe": ("round toe", "pointed toe"),
            "material": ("leather", "suede"),
        },
    ),
    "sandals": _spec(
        "sandals",
        {
            "heel": ("flat", "block heel", "wedge", "platform"),
            "closure": ("buckle", "slip-on", "hook and loop"),
            "material": ("leather", "suede"),
        },
        fixed={"toe": "open toe"},
    ),
    "heels": _spec(
        "heels",
        {
            "heel": ("block heel", "stiletto", "platform"),
            "toe": ("pointed toe", "round toe", "open toe", "square toe"),
            "closure": ("slip-on", "buckle"),
            "material": ("leather", "suede", "satin"),
        },
    ),
    "hat": _spec(
        "hat",
        {
            "pattern": ("solid", "checked", "striped"),
            "hat style": ("baseball cap", "bucket hat", "beanie", "fedora", "sun hat"),
            "material": ("cotton", "wool", "knit"),
        },
    ),
}
"""All 27 taxonomy categories."""

BAG_STRAPS: dict[str, str] = {
    "tote": "top handles",
    "shoulder bag": "chain strap",
    "crossbody": "long strap",
    "clutch": "no strap",
    "bucket bag": "long strap",
}
"""The strap each bag style is drawn with; recorded as the `strap` attribute."""

NOISE_ONLY: tuple[str, ...] = ("leggings", "backpack", "sandals", "hat")
"""Categories only the distractor pool holds (as the real pool holds garments no gallery sells)."""

GALLERY_CATEGORIES: tuple[str, ...] = tuple(c for c in SPECS if c not in NOISE_ONLY)
TOPS: tuple[str, ...] = tuple(c for c in GALLERY_CATEGORIES if SPECS[c].kind == "top")
OUTER: tuple[str, ...] = ("jacket", "blazer", "coat", "cardigan", "vest")
BOTTOMS: tuple[str, ...] = tuple(c for c in GALLERY_CATEGORIES if SPECS[c].kind in ("skirt", "pants"))
ONE_PIECES: tuple[str, ...] = ("dress", "jumpsuit")
SHOES: tuple[str, ...] = tuple(c for c in GALLERY_CATEGORIES if SPECS[c].kind in ("sneakers", "boots", "heels"))
FOOTWEAR: tuple[str, ...] = tuple(c for c in SPECS if SPECS[c].kind in ("sneakers", "boots", "sandals", "heels"))
