"""Which taxonomy categories the renderer draws, and which of their attributes it varies."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from lookbench.synth.palette import COLOURS

Kind = Literal["top", "dress", "skirt", "pants", "bag", "sneakers", "boots"]
ALL_COLOURS: tuple[str, ...] = tuple(COLOURS)


@dataclass(frozen=True)
class CategorySpec:
    """How one category is rendered: its drawing kind, varied groups, fixed and optional attributes."""

    kind: Kind
    vary: dict[str, tuple[str, ...]]
    fixed: dict[str, str] = field(default_factory=dict)
    always_details: tuple[str, ...] = ()
    optional_details: tuple[str, ...] = ()


SPECS: dict[str, CategorySpec] = {
    "t-shirt": CategorySpec(
        "top",
        {
            "colour": ALL_COLOURS,
            "pattern": ("solid", "striped", "checked", "polka dot", "floral"),
            "neckline": ("crew neck", "v-neck", "scoop neck"),
            "sleeve length": ("short sleeve", "long sleeve"),
            "length": ("cropped", "hip length"),
        },
        optional_details=("chest pocket",),
    ),
    "blouse": CategorySpec(
        "top",
        {
            "colour": ALL_COLOURS,
            "pattern": ("solid", "striped", "checked", "polka dot", "floral"),
            "neckline": ("v-neck", "crew neck", "square neck"),
            "sleeve length": ("sleeveless", "short sleeve", "long sleeve"),
        },
    ),
    "sweater": CategorySpec(
        "top",
        {
            "colour": ALL_COLOURS,
            "pattern": ("solid", "striped", "checked"),
            "neckline": ("crew neck", "v-neck", "turtleneck"),
            "sleeve length": ("short sleeve", "long sleeve"),
            "length": ("cropped", "hip length"),
        },
    ),
    "hoodie": CategorySpec(
        "top",
        {"colour": ALL_COLOURS, "pattern": ("solid", "striped", "checked"), "closure": ("pullover", "zip")},
        always_details=("hood",),
        optional_details=("kangaroo pocket",),
    ),
    "cardigan": CategorySpec(
        "top",
        {
            "colour": ALL_COLOURS,
            "pattern": ("solid", "striped", "checked"),
            "closure": ("buttons", "zip"),
            "sleeve length": ("three-quarter sleeve", "long sleeve"),
            "length": ("cropped", "hip length", "thigh length"),
        },
        fixed={"neckline": "v-neck"},
        optional_details=("patch pockets",),
    ),
    "jacket": CategorySpec(
        "top",
        {
            "colour": ALL_COLOURS,
            "pattern": ("solid", "checked"),
            "closure": ("buttons", "zip"),
            "collar": ("shirt collar", "no collar"),
            "length": ("cropped", "hip length"),
        },
        optional_details=("hood", "patch pockets", "chest pocket"),
    ),
    "coat": CategorySpec(
        "top",
        {
            "colour": ALL_COLOURS,
            "pattern": ("solid", "checked"),
            "closure": ("buttons", "zip"),
            "collar": ("notched lapel", "shirt collar", "no collar"),
            "length": ("hip length", "thigh length", "knee length"),
        },
        optional_details=("belt", "patch pockets"),
    ),
    "vest": CategorySpec(
        "top",
        {
            "colour": ALL_COLOURS,
            "pattern": ("solid", "checked"),
            "closure": ("buttons", "zip"),
            "neckline": ("v-neck", "crew neck"),
        },
        optional_details=("patch pockets",),
    ),
    "dress": CategorySpec(
        "dress",
        {
            "colour": ALL_COLOURS,
            "pattern": ("solid", "striped", "polka dot", "floral"),
            "neckline": ("v-neck", "crew neck"),
            "sleeve length": ("sleeveless", "short sleeve", "long sleeve"),
            "length": ("mini", "knee length", "midi", "maxi"),
            "fit": ("a-line", "bodycon"),
        },
    ),
    "skirt": CategorySpec(
        "skirt",
        {
            "colour": ALL_COLOURS,
            "pattern": ("solid", "striped", "checked", "polka dot", "floral"),
            "length": ("mini", "knee length", "midi", "maxi"),
            "fit": ("a-line", "pencil"),
        },
        optional_details=("pleats",),
    ),
    "pants": CategorySpec(
        "pants",
        {
            "colour": ALL_COLOURS,
            "pattern": ("solid", "striped", "checked"),
            "length": ("full length", "ankle length", "cropped"),
            "fit": ("skinny", "straight leg", "wide leg", "flared"),
        },
        optional_details=("cargo pockets",),
    ),
    "jeans": CategorySpec(
        "pants",
        {
            "colour": ("blue", "black", "grey", "white"),
            "length": ("full length", "ankle length", "cropped"),
            "fit": ("skinny", "straight leg", "wide leg", "flared"),
        },
        fixed={"material": "denim"},
        optional_details=("ripped",),
    ),
    "shorts": CategorySpec(
        "pants",
        {
            "colour": ALL_COLOURS,
            "pattern": ("solid", "striped", "checked", "floral"),
            "length": ("thigh length", "knee length"),
        },
        optional_details=("cargo pockets",),
    ),
    "bag": CategorySpec(
        "bag",
        {
            "colour": ALL_COLOURS,
            "pattern": ("solid", "checked"),
            "bag style": ("tote", "shoulder bag", "crossbody", "clutch", "bucket bag"),
        },
    ),
    "sneakers": CategorySpec(
        "sneakers",
        {
            "colour": ALL_COLOURS,
            "shaft height": ("low top", "high top"),
            "closure": ("lace-up", "slip-on", "hook and loop"),
        },
    ),
    "boots": CategorySpec(
        "boots",
        {
            "colour": ALL_COLOURS,
            "shaft height": ("ankle boot", "mid-calf", "knee high"),
            "heel": ("flat", "block heel", "stiletto"),
            "toe": ("round toe", "pointed toe"),
        },
        fixed={"closure": "zip"},
    ),
}
"""The 16 rendered categories (of the taxonomy's 27)."""

BAG_STRAPS: dict[str, str] = {
    "tote": "top handles",
    "shoulder bag": "chain strap",
    "crossbody": "long strap",
    "clutch": "no strap",
    "bucket bag": "long strap",
}
"""The strap each bag style is drawn with; recorded as the `strap` attribute."""

TOPS: tuple[str, ...] = tuple(c for c, s in SPECS.items() if s.kind == "top")
BOTTOMS: tuple[str, ...] = tuple(c for c, s in SPECS.items() if s.kind in ("skirt", "pants"))
SHOES: tuple[str, ...] = ("sneakers", "boots")
