"""The main attribute: the product's most visually salient distinguishing attribute, not a random draw.

Each attribute a category varies gets a salience: how much of the picture it changes and how far it stands out from
the category's plain form (a floral print or a knee-high shaft is salient, a crew neck or a flat heel is not). The
colour's salience is measured on the product's own shade: saturated colours stand out, neutrals do not. Fixed
attributes (every pair of jeans is denim) never distinguish a product and are never main. The main attribute is the
one with the highest salience; ties go to the earlier group in taxonomy order, so equal labels give equal mains."""

from __future__ import annotations

from collections.abc import Iterable

from lookbench.datasets.synth.palette import RGB, saturation

SALIENCE: dict[str, float] = {
    # pattern
    "floral": 0.95,
    "checked": 0.9,
    "striped": 0.86,
    "polka dot": 0.86,
    "solid": 0.0,
    # material
    "leather": 0.66,
    "satin": 0.68,
    "denim": 0.58,
    "mesh": 0.62,
    "suede": 0.5,
    "knit": 0.52,
    "wool": 0.46,
    "canvas": 0.4,
    "cotton": 0.18,
    # length
    "maxi": 0.7,
    "cropped": 0.6,
    "mini": 0.56,
    "midi": 0.46,
    "knee length": 0.42,
    "thigh length": 0.4,
    "ankle length": 0.3,
    "hip length": 0.22,
    "full length": 0.2,
    # sleeves
    "puff sleeve": 0.76,
    "bell sleeve": 0.76,
    "sleeveless": 0.5,
    "three-quarter sleeve": 0.34,
    "short sleeve": 0.3,
    "long sleeve": 0.28,
    # neckline and collar
    "turtleneck": 0.7,
    "halter neck": 0.7,
    "boat neck": 0.46,
    "square neck": 0.48,
    "v-neck": 0.44,
    "scoop neck": 0.4,
    "crew neck": 0.24,
    "notched lapel": 0.55,
    "shawl collar": 0.55,
    "mandarin collar": 0.5,
    "shirt collar": 0.45,
    "no collar": 0.2,
    # fit
    "wide leg": 0.64,
    "flared": 0.64,
    "oversized": 0.52,
    "skinny": 0.5,
    "bodycon": 0.5,
    "a-line": 0.46,
    "pencil": 0.46,
    "straight leg": 0.3,
    "slim fit": 0.3,
    "regular fit": 0.16,
    # closure
    "hook and loop": 0.56,
    "wrap": 0.52,
    "lace-up": 0.5,
    "buckle": 0.5,
    "zip": 0.45,
    "buttons": 0.45,
    "drawstring": 0.4,
    "slip-on": 0.3,
    "pullover": 0.2,
    # details
    "hood": 0.78,
    "ruffles": 0.72,
    "ripped": 0.72,
    "pleats": 0.6,
    "cargo pockets": 0.6,
    "belt": 0.6,
    "kangaroo pocket": 0.56,
    "side slit": 0.46,
    "patch pockets": 0.45,
    "epaulettes": 0.42,
    "chest pocket": 0.36,
    "ribbed cuffs": 0.35,
    # style
    "sporty": 0.66,
    "vintage": 0.56,
    "formal": 0.46,
    "casual": 0.14,
    # shoes
    "stiletto": 0.76,
    "platform": 0.66,
    "wedge": 0.66,
    "block heel": 0.5,
    "flat": 0.2,
    "knee high": 0.8,
    "high top": 0.6,
    "mid-calf": 0.6,
    "ankle boot": 0.3,
    "low top": 0.2,
    "open toe": 0.55,
    "pointed toe": 0.45,
    "square toe": 0.45,
    "round toe": 0.2,
    # bags and hats
    "bucket bag": 0.64,
    "clutch": 0.6,
    "tote": 0.56,
    "crossbody": 0.56,
    "shoulder bag": 0.52,
    "fedora": 0.72,
    "sun hat": 0.74,
    "baseball cap": 0.7,
    "bucket hat": 0.7,
    "beanie": 0.7,
}
"""Salience of each attribute that a category may vary (colour is computed from the shade)."""


def colour_salience(rgb: RGB) -> float:
    """0.34 for neutrals (black, white, grey) up to about 0.78 for a saturated red or orange."""
    return 0.34 + 0.45 * saturation(rgb)


def salience(attribute: str, group: str, rgb: RGB) -> float:
    """The salience of one attribute of a product of colour `rgb`."""
    return colour_salience(rgb) if group == "colour" else SALIENCE[attribute]


def pick_main(candidates: Iterable[tuple[str, str]], rgb: RGB) -> str:
    """The most salient of `(group, attribute)` candidates, earlier candidates winning ties."""
    best, best_score = "", -1.0
    for group, attribute in candidates:
        score = salience(attribute, group, rgb)
        if score > best_score + 1e-9:
            best, best_score = attribute, score
    return best
