"""The training purpose of Synth: several views of every product (the catalogue shot, a studio shot per style, a
street crop per style), from a product space disjoint from every evaluation release, written as `train` splits.

Disjoint ids and random streams do not keep designs apart: the same sampler draws the same garments. Given the query
labels of the evaluation releases it must stay clear of (`QueryDesigns`), the planner redraws every product that
shares a query's design (category and every non-colour attribute, in any colour) or would be a strict fine match
of a query. A category whose every label set is excluded (exhausted) is refused, or with `drop` left out of the
release and recorded."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import date, datetime

import numpy as np

from lookbench.datasets.synth.catalogue import BOTTOMS, GALLERY_CATEGORIES, ONE_PIECES, TOPS
from lookbench.datasets.synth.plan import CatalogueItem, ScenePlan, StudioQuery, _Planner, scene_rng
from lookbench.datasets.synth.products import Product, label_space, sample_product, strict_labels
from lookbench.datasets.synth.release import sample_time
from lookbench.datasets.synth.street import MIN_VISIBLE, scene_params, visible_items
from lookbench.datasets.synth.styles import Style
from lookbench.errors import SnapshotError
from lookbench.snapshot.schema import SUBSETS, TRAIN
from lookbench.taxonomy.designs import QueryDesigns

TRAIN_STREAM = 1000
"""The random streams of a training release are (seed, date, TRAIN_STREAM + n, ...): an evaluation release of any
seed and date uses streams 1 to 5, so no product, scene or shot of one is ever drawn for the other."""
SCENE_STREAMS: tuple[tuple[int, Style], ...] = ((1, "real"), (2, "aigen"))
STUDIO_STREAMS: tuple[tuple[int, Style], ...] = ((4, "real"), (5, "aigen"))
"""Offsets from TRAIN_STREAM of each style's street photos and studio shots (3: the catalogue shots)."""
MAX_REDRAWS = 2000
"""Draws per product before a design-disjoint planner gives up (a category whose every design is excluded)."""
EXHAUSTED_POLICIES = ("fail", "drop")
"""What a training release does with a category whose every design is excluded: refuse (the default) or leave it
out, recorded in the manifest."""
OUTFIT_GARMENTS: dict[str, tuple[str, ...]] = {"one-piece": ONE_PIECES, "top": TOPS, "bottom": BOTTOMS}
"""The garments a street outfit is built of: `drop` cannot leave out all of one kind."""
TRAIN_ID_PREFIX = "syntrain"
"""Training product ids are `syntrain<seed>-<YYYYMMDD>-<n>`; evaluation ones `syn<seed>-...`."""


@dataclass(frozen=True)
class TrainingPreset:
    """How many products a training release draws: street outfits (2 to 4 products each) and studio-only products."""

    outfits: int
    singles: int
    note: str = ""


TRAINING_SIZES: dict[str, TrainingPreset] = {
    "tiny": TrainingPreset(3, 2, "tests"),
    "mini": TrainingPreset(12, 6),
    "small": TrainingPreset(400, 200, "the CPU demo: about 1,300 products, 6,000 images"),
    "medium": TrainingPreset(1600, 800),
    "large": TrainingPreset(6400, 3200),
}


def training_preset(name: str) -> TrainingPreset:
    """The training preset called `name`; a clear error for an unknown one."""
    if name not in TRAINING_SIZES:
        raise SnapshotError(f"unknown synth training size {name!r}; known: {', '.join(TRAINING_SIZES)}")
    return TRAINING_SIZES[name]


@dataclass
class TrainingPlan:
    """Every view of a training release, by the subset whose `train` split holds it."""

    seed: int
    release: date
    size: str
    catalogue: list[CatalogueItem]
    studio: dict[Style, list[StudioQuery]]
    scenes: dict[Style, list[ScenePlan]]
    products: list[Product]
    redrawn: int = 0
    """Products redrawn because they shared an excluded design or matched an excluded query strictly."""
    dropped: tuple[str, ...] = ()
    """Categories left out because the exclusion holds every design of theirs (`--exhausted-categories drop`)."""

    def counts(self) -> dict[str, int]:
        """Rows per split, as the snapshot will hold them."""
        per_subset = {
            "real_studio_flat": len(self.catalogue) + len(self.studio["real"]),
            "aigen_studio": len(self.studio["aigen"]),
            "real_streetlook": sum(len(s.queried) for s in self.scenes["real"]),
            "aigen_streetlook": sum(len(s.queried) for s in self.scenes["aigen"]),
        }
        return {f"{subset}/{TRAIN}": per_subset[subset] for subset in SUBSETS}

    def total_images(self) -> int:
        """Images in all splits."""
        return sum(self.counts().values())


def exhausted_categories(exclude: QueryDesigns) -> tuple[str, ...]:
    """The categories a training release draws from of which `exclude` holds every label set the sampler can give."""
    return tuple(c for c in GALLERY_CATEGORIES if all(exclude.excludes((c, a)) for a in label_space(c)))


def categories_to_drop(exclude: QueryDesigns | None, policy: str) -> tuple[str, ...]:
    """The exhausted categories `policy` leaves out; a clear error when it is `fail` and one is exhausted, or when
    dropping would leave a street outfit without one kind of garment."""
    if policy not in EXHAUSTED_POLICIES:
        raise SnapshotError(f"--exhausted-categories must be one of {', '.join(EXHAUSTED_POLICIES)}, got {policy!r}")
    exhausted = exhausted_categories(exclude) if exclude is not None else ()
    if set(exhausted) == set(GALLERY_CATEGORIES):
        raise SnapshotError("--exclude-designs excludes every design of every category: nothing is left to train on")
    if exhausted and policy == "fail":
        raise SnapshotError(
            f"every design of {', '.join(exhausted)} is excluded by --exclude-designs (the queries' designs and "
            f"strict fine matches); pass --exhausted-categories drop to leave {', '.join(exhausted)} out of the "
            "training release, or exclude fewer releases"
        )
    for kind, categories in OUTFIT_GARMENTS.items():
        if set(categories) <= set(exhausted):
            raise SnapshotError(
                f"--exhausted-categories drop: every {kind} category ({', '.join(categories)}) is exhausted by "
                "--exclude-designs and a street outfit needs one; exclude fewer releases"
            )
    return exhausted


class _TrainingPlanner(_Planner):
    def __init__(self, seed: int, release: date, exclude: QueryDesigns | None, dropped: tuple[str, ...]) -> None:
        super().__init__(seed, release, "tiny")  # the evaluation preset it reads is not used here
        self.exclude = exclude
        self.dropped = dropped
        self.redrawn = 0

    def new_id(self) -> str:
        self.counter += 1
        return f"{TRAIN_ID_PREFIX}{self.seed}-{self.release:%Y%m%d}-{self.counter:06d}"

    def drawable(self, categories: tuple[str, ...]) -> bool:
        return not set(categories) <= set(self.dropped)

    def product(self, rng: np.random.Generator, categories: tuple[str, ...], when: datetime | None = None) -> Product:
        if self.exclude is None:
            return super().product(rng, categories, when)
        day = when or sample_time(rng, self.window)
        kept = tuple(c for c in categories if c not in self.dropped)
        for _ in range(MAX_REDRAWS):
            category = kept[int(rng.integers(len(kept)))]
            drawn = sample_product(rng, category, "", day)
            if not self.exclude.excludes(strict_labels(drawn)):
                return replace(drawn, product_id=self.new_id())
            self.redrawn += 1
        raise SnapshotError(
            f"no design of {', '.join(kept)} was drawn after excluding the evaluation queries' designs "
            f"({MAX_REDRAWS} draws); exclude fewer releases"
        )


def plan_training(
    seed: int, release: date, size: str, exclude: QueryDesigns | None = None, exhausted: str = "fail"
) -> TrainingPlan:
    """Plan a training release deterministically from (seed, release date, size), redrawing every product whose
    design or strict labels `exclude` holds; a category it wholly excludes is refused or, with `drop`, left out."""
    preset = training_preset(size)
    dropped = categories_to_drop(exclude, exhausted)
    planner = _TrainingPlanner(seed, release, exclude, dropped)
    rng = planner.rng(TRAIN_STREAM)
    products: list[Product] = []
    scenes: dict[Style, list[ScenePlan]] = {"real": [], "aigen": []}
    for number in range(preset.outfits):
        outfit = planner.outfit(rng, sample_time(rng, planner.window))
        products.extend(outfit)
        for stream, style in SCENE_STREAMS:
            key = planner.key(TRAIN_STREAM + stream, number)
            visibility = visible_items(outfit, scene_params(scene_rng(key, "geometry")))
            queried = tuple(i for i, seen in enumerate(visibility) if seen >= MIN_VISIBLE)
            outfit_id = f"outfit-{TRAIN_ID_PREFIX}{seed}-{release:%Y%m%d}-{stream}-{number + 1:05d}"
            scenes[style].append(ScenePlan(outfit_id, tuple(outfit), queried, tuple(visibility), key))
    products.extend(planner.product(rng, GALLERY_CATEGORIES) for _ in range(preset.singles))
    catalogue = [CatalogueItem(p, None, planner.key(TRAIN_STREAM + 3, i)) for i, p in enumerate(products)]
    studio: dict[Style, list[StudioQuery]] = {
        style: [StudioQuery(p, planner.key(TRAIN_STREAM + stream, i)) for i, p in enumerate(products)]
        for stream, style in STUDIO_STREAMS
    }
    return TrainingPlan(seed, release, size, catalogue, studio, scenes, products, planner.redrawn, dropped)
