"""The plan of a release: the `real` preset's counts and the noise-label rule at real scale, without rendering."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import replace
from datetime import date, datetime, timezone
from pathlib import Path

import numpy as np
import pytest

from lookbench.datasets.synth.catalogue import GALLERY_CATEGORIES, NOISE_ONLY, SPECS
from lookbench.datasets.synth.generate import file_jobs, generate_snapshot
from lookbench.datasets.synth.plan import NOISE_ONLY_SHARE, ReleasePlan, noise_products, plan_release
from lookbench.datasets.synth.products import LabelCover, Product, sample_product, strict_labels
from lookbench.datasets.synth.sizes import SIZES, size_preset
from lookbench.snapshot import synth_manifest
from lookbench.snapshot.reader import open_snapshot
from lookbench.snapshot.schema import NOISE, STREETLOOK_SUBSETS, SUBSETS

RELEASE = date(2026, 6, 1)
RELEASED = {
    "real_studio_flat/query": 1011,
    "aigen_studio/query": 193,
    "real_streetlook/query": 981,
    "aigen_streetlook/query": 160,
    "real_studio_flat/gallery": 3951,
    "aigen_studio/gallery": 979,
    "real_streetlook/gallery": 3278,
    "aigen_streetlook/gallery": 571,
    "noise/gallery": 58275,
}


def test_the_manifest_readers_know_the_catalogues_gallery_categories() -> None:
    assert synth_manifest.GALLERY_CATEGORIES == GALLERY_CATEGORIES


@pytest.fixture(scope="module")
def real() -> ReleasePlan:
    return plan_release(0, RELEASE, "real")


def _strict_carriers(plan: ReleasePlan, products: list[Product]) -> int:
    """Distractors that carry some query product's full label set (same category, A_q within A_i), brute force."""
    queries: dict[str, list[frozenset[str]]] = defaultdict(list)
    for sub in plan.subsets:
        for product in sub.query_products():
            queries[product.category].append(frozenset(product.all_attributes()))
    carried = 0
    for product in products:
        labels = frozenset(product.all_attributes())
        carried += any(q <= labels for q in queries[product.category])
    return carried


@pytest.mark.slow
def test_real_preset_has_the_released_counts_from_the_plan_alone(real: ReleasePlan) -> None:
    assert real.counts() == RELEASED
    assert SIZES["real"].total_images() == sum(RELEASED.values())
    for sub in real.subsets:
        products = sub.query_products()
        assert len({p.product_id for p in products}) == len(products)
        assert {p.category for p in products} <= set(GALLERY_CATEGORIES)
        if sub.subset in STREETLOOK_SUBSETS:
            assert all(scene.visibility[i] >= 0.45 for scene in sub.scenes for i in scene.queried)
            assert all(len({p.first_seen_at for p in scene.products}) == 1 for scene in sub.scenes)
    jobs = file_jobs(real)
    assert sum(job.rows for job in jobs) == sum(RELEASED.values())
    noise = [job for job in jobs if job.path.startswith("noise/")]
    assert len(noise) == 8 and all(job.rows == 8192 for job in noise[:-1])


@pytest.mark.slow
def test_no_real_scale_distractor_carries_a_query_products_full_labels(real: ReleasePlan) -> None:
    drawn = [d for chunk in real.noise_chunks() for d in noise_products(real.seed, real.release, chunk, real.basis)]
    products = [d.product for d in drawn]
    assert len(products) == 58275
    assert _strict_carriers(real, products) == 0
    categories = {p.category for p in products}
    assert categories == set(SPECS)
    share = sum(p.category in NOISE_ONLY for p in products) / len(products)
    assert abs(share - NOISE_ONLY_SHARE) < 0.01
    ids = {p.product_id for p in products}
    gallery_ids = {i.product.product_id for sub in real.subsets for i in sub.gallery}
    assert len(ids) == len(products) and not ids & gallery_ids


def test_without_the_rule_distractors_would_carry_query_labels() -> None:
    """The rule does work: sampled without it (near-misses included), distractors carry query label sets."""
    plan = plan_release(0, RELEASE, "small")
    unruled = replace(plan.basis, cover=LabelCover())
    chunks = plan.noise_chunks()
    products = [d.product for chunk in chunks for d in noise_products(0, RELEASE, chunk, unruled)]
    assert _strict_carriers(plan, products) > 0
    kept = [d.product for chunk in chunks for d in noise_products(0, RELEASE, chunk, plan.basis)]
    assert len(kept) == 1000 and _strict_carriers(plan, kept) == 0


def test_a_rendered_release_has_the_planned_counts(tmp_path: Path) -> None:
    plan = plan_release(2, RELEASE, "tiny")
    snap = open_snapshot(generate_snapshot(tmp_path, RELEASE, "tiny", seed=2, workers=1))
    for subset in SUBSETS:
        for split in ("query", "gallery"):
            assert snap.num_rows(subset, split) == plan.counts()[f"{subset}/{split}"]
    assert snap.num_rows(NOISE, "gallery") == plan.counts()["noise/gallery"] == 12


def test_every_preset_is_consistent_and_large_is_not_real_scale() -> None:
    for name in SIZES:
        preset = size_preset(name)
        assert all(preset.extra_gallery(s) >= 0 for s in SUBSETS)
    assert SIZES["large"].queries == SIZES["real"].queries
    assert SIZES["large"].noise < SIZES["real"].noise and "not real scale" in SIZES["large"].note


@pytest.mark.parametrize("remembered", [3, 400])  # scanned one by one; looked up subset by subset
def test_a_label_cover_answers_as_the_brute_force_rule(remembered: int) -> None:
    rng = np.random.default_rng(remembered)
    when = datetime(2026, 5, 1, tzinfo=timezone.utc)
    cover = LabelCover()
    queries = [sample_product(rng, "dress", f"q{n}", when) for n in range(remembered)]
    for product in queries:
        cover.add(product)
    others = [sample_product(rng, category, f"d{n}", when) for n in range(300) for category in ("dress", "skirt")]
    expected = [
        any(strict_labels(q)[1] <= strict_labels(p)[1] for q in queries if q.category == p.category)
        for p in [*queries, *others]
    ]
    assert [cover.covers(p) for p in [*queries, *others]] == expected
    assert all(expected[:remembered]) and not all(expected) and len(cover) == remembered
