"""Composed pairs re-rendered by Synth: every query product's design drawn again with two attribute groups changed.

A release's gallery already holds each query product with one group changed (its hard negatives); this adds, per
query product, the same design (shape, shade, print look) with two other groups changed, rendered as the shop's
catalogue shot. The query photo (studio or street, real or AI-generated look) is the reference, so a composed
query set built on these pairs has exact targets in every photographic style of the release."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from lookbench._util.dates import parse_day
from lookbench.datasets.synth.parallel import ordered_map
from lookbench.datasets.synth.plan import NOISE_STREAM, CatalogueItem, ReleasePlan, plan_release
from lookbench.datasets.synth.products import LINKED_GROUPS, Product, changeable_groups, variant
from lookbench.datasets.synth.tasks import GENERATOR_VERSION, RenderTask, run_task
from lookbench.errors import SnapshotError
from lookbench.snapshot.synth_manifest import MANIFEST, read_manifest

PAIR_STREAM = NOISE_STREAM + 1
"""The random stream of the re-rendered designs (after every stream the release itself uses)."""
PAIR_CHUNK = 64


@dataclass(frozen=True)
class PairTarget:
    """A query product (the reference's design) and its catalogue item with two groups changed."""

    subset: str
    reference: Product
    target: CatalogueItem
    groups: tuple[str, str]


def read_synth_plan(root: Path) -> ReleasePlan:
    """Re-plan the Synth release in `root` from its `synth_manifest.json` (seed, release, size)."""
    path = root / MANIFEST
    manifest = read_manifest(root)
    if manifest is None:
        raise SnapshotError(f"{root} has no {MANIFEST}; re-rendered pairs need a LookBench-Synth release")
    if manifest.get("generator") != GENERATOR_VERSION:
        raise SnapshotError(f"{path}: generator {manifest.get('generator')!r} is not {GENERATOR_VERSION}")
    try:
        return plan_release(int(manifest["seed"]), parse_day(manifest["release"]), str(manifest["size"]))
    except (ValueError, KeyError, TypeError) as exc:
        raise SnapshotError(f"{path}: not a readable Synth manifest ({exc})") from exc


def pair_targets(plan: ReleasePlan) -> list[PairTarget]:
    """Per query product with two freely changeable groups, its design with two of them changed (ids after the
    release's distractors, seeded by the plan alone)."""
    next_id = plan.noise_first_id + plan.preset.noise
    out: list[PairTarget] = []
    queries = [(sub.subset, product) for sub in plan.subsets for product in sub.query_products()]
    for index, (subset, product) in enumerate(queries):
        rng = np.random.default_rng(list(plan.key(PAIR_STREAM, 0, index)))
        groups = [g for g in changeable_groups(product) if g not in LINKED_GROUPS]
        if len(groups) < 2:
            continue
        first, second = (groups[int(i)] for i in rng.choice(len(groups), size=2, replace=False))
        once = variant(product, first, rng, product.product_id)
        if second not in changeable_groups(once):
            continue
        twice = variant(once, second, rng, plan.product_id(next_id))
        item = CatalogueItem(twice, None, plan.key(PAIR_STREAM, 1, index))
        out.append(PairTarget(subset, product, item, (first, second)))
        next_id += 1
    return out


def render_pair_targets(plan: ReleasePlan, targets: list[PairTarget], workers: int = 1) -> list[dict[str, Any]]:
    """The targets' catalogue shots as gallery rows (the release's gallery schema), in `targets` order."""
    items = [t.target for t in targets]
    tasks = [
        RenderTask("catalogue", "real", tuple(items[i : i + PAIR_CHUNK]), plan.seed, plan.release)
        for i in range(0, len(items), PAIR_CHUNK)
    ]
    rows: list[dict[str, Any]] = []
    for table in ordered_map(run_task, tasks, workers):
        rows += table.to_pylist()
    return rows
