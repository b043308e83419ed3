"""The plan of a Synth release: every product, label, id, date and scene, decided before any pixel is drawn.

Planning is cheap (labels, plus a small label-only composition of each street scene to decide which garments are
visible enough for a query), so the row counts and the label rules of a release, even the `real` one, can be checked
from the plan alone. Rendering then runs as independent, seeded tasks (`synth.tasks`) in any number of processes."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import date, datetime

import numpy as np

from lookbench.datasets.synth.catalogue import BOTTOMS, GALLERY_CATEGORIES, NOISE_ONLY, ONE_PIECES, SHOES, TOPS
from lookbench.datasets.synth.products import (
    LabelCover,
    Product,
    changeable_groups,
    main_group,
    near_miss,
    sample_product,
    variant,
)
from lookbench.datasets.synth.release import history_window, release_window, sample_time
from lookbench.datasets.synth.sizes import NEGATIVES_PER_PRODUCT, SizePreset, size_preset
from lookbench.datasets.synth.street import MIN_VISIBLE, scene_params, visible_items
from lookbench.datasets.synth.styles import Style
from lookbench.snapshot.schema import STREETLOOK_SUBSETS, SUBSETS

NOISE_STREAM = len(SUBSETS) + 1
NOISE_CHUNK = 64
"""Distractors per rendering task (and per parquet row group)."""
NOISE_SHARD = 8192
"""Distractors per noise parquet file."""
NEAR_MISS_SHARE = 0.2
"""Share of distractors that are hard near-misses of a query product: its category and labels with one or two groups
changed (half each), in another shop's look."""
NOISE_ONLY_SHARE = 0.1
"""Share of distractors from the categories no gallery holds; the rest follow the galleries' category mix."""

Seed = tuple[int, ...]


@dataclass(frozen=True)
class CatalogueItem:
    """A gallery row: the shop's catalogue shot of a product (a query's, a hard negative or another product)."""

    product: Product
    negative_of: str | None
    seed: Seed


@dataclass(frozen=True)
class StudioQuery:
    """A studio query: another shot of the product."""

    product: Product
    seed: Seed


@dataclass(frozen=True)
class ScenePlan:
    """A street photo: its outfit (all dated the photo's date), which garments get queries, and their visibility."""

    outfit_id: str
    products: tuple[Product, ...]
    queried: tuple[int, ...]
    visibility: tuple[float, ...]
    seed: Seed


@dataclass
class SubsetPlan:
    """One subset's queries (studio shots or street scenes) and its gallery in the order it is written."""

    subset: str
    style: Style
    studio: list[StudioQuery] = field(default_factory=list)
    scenes: list[ScenePlan] = field(default_factory=list)
    gallery: list[CatalogueItem] = field(default_factory=list)

    @property
    def street(self) -> bool:
        """True for a street-look subset."""
        return self.subset in STREETLOOK_SUBSETS

    def query_products(self) -> list[Product]:
        """The query products, in query-row order."""
        if self.street:
            return [scene.products[i] for scene in self.scenes for i in scene.queried]
        return [q.product for q in self.studio]


@dataclass(frozen=True)
class NoiseChunk:
    """A run of distractors rendered by one task: ids `first_id` onwards, products drawn from `seed`."""

    index: int
    first_id: int
    count: int
    seed: Seed


@dataclass(frozen=True)
class NoiseBasis:
    """What distractors are drawn against: the query products (no distractor carries one's full label set, and hard
    near-misses start from them) and the galleries' category mix (the other distractors follow it)."""

    cover: LabelCover = field(default_factory=LabelCover)
    queries: tuple[Product, ...] = ()
    categories: tuple[str, ...] = GALLERY_CATEGORIES
    weights: tuple[float, ...] = tuple(1 / len(GALLERY_CATEGORIES) for _ in GALLERY_CATEGORIES)


@dataclass(frozen=True)
class Distractor:
    """A distractor product and, for a hard near-miss, the query product it was derived from."""

    product: Product
    near_miss_of: str | None


@dataclass
class ReleasePlan:
    """Everything about a release but its pixels."""

    seed: int
    release: date
    size: str
    preset: SizePreset
    subsets: list[SubsetPlan]
    noise_first_id: int
    basis: NoiseBasis

    def product_id(self, number: int) -> str:
        """The id of the `number`-th product of the release."""
        return product_id(self.seed, self.release, number)

    def noise_chunks(self) -> list[NoiseChunk]:
        """The distractor tasks, in row order."""
        chunks = []
        for index, start in enumerate(range(0, self.preset.noise, NOISE_CHUNK)):
            count = min(NOISE_CHUNK, self.preset.noise - start)
            chunks.append(NoiseChunk(index, self.noise_first_id + start, count, self.key(NOISE_STREAM, 2, index)))
        return chunks

    def key(self, *parts: int) -> Seed:
        """A seed for one random stream of this release."""
        return release_key(self.seed, self.release, *parts)

    def counts(self) -> dict[str, int]:
        """Rows per split, as the snapshot will hold them."""
        out: dict[str, int] = {}
        for sub in self.subsets:
            out[f"{sub.subset}/query"] = len(sub.query_products())
            out[f"{sub.subset}/gallery"] = len(sub.gallery)
        out["noise/gallery"] = self.preset.noise
        return out


def release_key(seed: int, release: date, *parts: int) -> Seed:
    """The seed of one random stream of a release: (seed, YYYYMMDD, parts...)."""
    return (seed, int(f"{release:%Y%m%d}"), *parts)


def scene_rng(seed: Seed, part: str) -> np.random.Generator:
    """The random stream of a scene's geometry (shared by planning and rendering) or of its pixels."""
    return np.random.default_rng([*seed, 0 if part == "geometry" else 1])


def product_id(seed: int, release: date, number: int) -> str:
    """`syn<seed>-<YYYYMMDD>-<n>`: unique within a release, shared by a query and its gallery positive."""
    return f"syn{seed}-{release:%Y%m%d}-{number:06d}"


class _Planner:
    def __init__(self, seed: int, release: date, size: str) -> None:
        self.seed = seed
        self.release = release
        self.preset = size_preset(size)
        self.size = size
        self.window = release_window(release)
        self.counter = 0

    def rng(self, *parts: int) -> np.random.Generator:
        return np.random.default_rng(list(self.key(*parts)))

    def new_id(self) -> str:
        self.counter += 1
        return product_id(self.seed, self.release, self.counter)

    def product(self, rng: np.random.Generator, categories: tuple[str, ...], when: datetime | None = None) -> Product:
        category = categories[int(rng.integers(len(categories)))]
        return sample_product(rng, category, self.new_id(), when or sample_time(rng, self.window))

    def drawable(self, categories: tuple[str, ...]) -> bool:
        """Whether an outfit's accessory of these categories is drawn (a training release may leave some out)."""
        return True

    def negatives(self, product: Product, rng: np.random.Generator) -> list[Product]:
        """The first changes the group of the main attribute (coarse match, not fine); the rest change others."""
        groups = changeable_groups(product)
        first = main_group(product)
        order = [first] if first in groups else []
        rest = [g for g in groups if g not in order]
        rng.shuffle(rest)
        order += rest
        return [variant(product, g, rng, self.new_id()) for g in order[:NEGATIVES_PER_PRODUCT]]

    def gallery_for(self, product: Product, rng: np.random.Generator, stream: int, out: list[CatalogueItem]) -> None:
        out.append(CatalogueItem(product, None, self.key(stream, 1, len(out))))
        for neg in self.negatives(product, rng):
            out.append(CatalogueItem(neg, product.product_id, self.key(stream, 1, len(out))))

    def studio(self, subset: str, style: Style, stream: int) -> SubsetPlan:
        rng = self.rng(stream)
        plan = SubsetPlan(subset, style)
        for index in range(self.preset.queries[subset]):
            product = self.product(rng, GALLERY_CATEGORIES)
            plan.studio.append(StudioQuery(product, self.key(stream, 0, index)))
            self.gallery_for(product, rng, stream, plan.gallery)
        self.extras(subset, rng, stream, plan)
        return plan

    def outfit(self, rng: np.random.Generator, when: datetime) -> list[Product]:
        if rng.random() < 0.35:
            outfit = [self.product(rng, ONE_PIECES, when)]
            extras = [SHOES, ("bag",)] if rng.random() < 0.5 else [SHOES]
        else:
            outfit = [self.product(rng, TOPS, when), self.product(rng, BOTTOMS, when)]
            extras = [c for c in (SHOES, ("bag",)) if rng.random() < 0.5]
        return outfit + [self.product(rng, cats, when) for cats in extras if self.drawable(cats)]

    def street(self, subset: str, style: Style, stream: int) -> SubsetPlan:
        rng = self.rng(stream)
        plan = SubsetPlan(subset, style)
        wanted = self.preset.queries[subset]
        queries = 0
        while queries < wanted:
            number = len(plan.scenes)
            when = sample_time(rng, self.window)
            outfit = self.outfit(rng, when)
            seed = self.key(stream, 0, number)
            visibility = visible_items(outfit, scene_params(scene_rng(seed, "geometry")))
            queried = []
            for i, seen in enumerate(visibility):
                if seen >= MIN_VISIBLE and queries < wanted:
                    queried.append(i)
                    queries += 1
                    self.gallery_for(outfit[i], rng, stream, plan.gallery)
            outfit_id = f"outfit-{self.seed}-{self.release:%Y%m%d}-{stream}-{number + 1:05d}"
            plan.scenes.append(ScenePlan(outfit_id, tuple(outfit), tuple(queried), tuple(visibility), seed))
        self.extras(subset, rng, stream, plan)
        return plan

    def key(self, *parts: int) -> Seed:
        return release_key(self.seed, self.release, *parts)

    def extras(self, subset: str, rng: np.random.Generator, stream: int, plan: SubsetPlan) -> None:
        for _ in range(self.preset.extra_gallery(subset)):
            product = self.product(rng, GALLERY_CATEGORIES)
            plan.gallery.append(CatalogueItem(product, None, self.key(stream, 1, len(plan.gallery))))
        order = rng.permutation(len(plan.gallery))
        plan.gallery = [plan.gallery[int(i)] for i in order]


def plan_release(seed: int, release: date, size: str) -> ReleasePlan:
    """Plan a release deterministically from (seed, release date, size)."""
    planner = _Planner(seed, release, size)
    subsets = []
    for stream, subset in enumerate(SUBSETS, start=1):
        style: Style = "real" if subset.startswith("real") else "aigen"
        make = planner.street if subset in STREETLOOK_SUBSETS else planner.studio
        subsets.append(make(subset, style, stream))
    return ReleasePlan(seed, release, size, planner.preset, subsets, planner.counter + 1, noise_basis(subsets))


def noise_basis(subsets: list[SubsetPlan]) -> NoiseBasis:
    """The query products and the category mix of every gallery row of the release."""
    cover = LabelCover()
    queries = tuple(product for sub in subsets for product in sub.query_products())
    for product in queries:
        cover.add(product)
    counts = Counter(item.product.category for sub in subsets for item in sub.gallery)
    categories = tuple(c for c in GALLERY_CATEGORIES if counts[c])
    total = sum(counts.values())
    return NoiseBasis(cover, queries, categories, tuple(counts[c] / total for c in categories))


def noise_products(plan_seed: int, release: date, chunk: NoiseChunk, basis: NoiseBasis) -> list[Distractor]:
    """A chunk's distractors, dated in the year before the release window: hard near-misses of query products
    (NEAR_MISS_SHARE), products of the gallery-less categories (NOISE_ONLY_SHARE) and products following the
    galleries' category mix; each redrawn within its kind until no query product's labels are all among its own (the
    strict rule), so the shares hold exactly in expectation."""
    rng = np.random.default_rng(list(chunk.seed))
    window = history_window(release)
    out = []
    for k in range(chunk.count):
        number = product_id(plan_seed, release, chunk.first_id + k)
        draw = rng.random()
        while True:
            when = sample_time(rng, window)
            source = None
            if draw < NEAR_MISS_SHARE and basis.queries:
                query = basis.queries[int(rng.integers(len(basis.queries)))]
                candidate = near_miss(query, int(rng.integers(1, 3)), rng, number, when)
                source = query.product_id
            else:
                if draw < NEAR_MISS_SHARE + NOISE_ONLY_SHARE:
                    category = NOISE_ONLY[int(rng.integers(len(NOISE_ONLY)))]
                else:
                    category = basis.categories[int(rng.choice(len(basis.categories), p=basis.weights))]
                candidate = sample_product(rng, category, number, when)
            if not basis.cover.covers(candidate):
                break
        out.append(Distractor(candidate, source))
    return out
