"""Shop photos: gallery and distractor images come from one mixture of conventions; hard near-misses as documented."""

from __future__ import annotations

import io
from collections import Counter
from collections.abc import Iterator
from datetime import date
from typing import Any

import numpy as np
import pytest
from PIL import Image

from lookbench.datasets.synth.plan import NEAR_MISS_SHARE, ReleasePlan, noise_products, plan_release
from lookbench.datasets.synth.shots import CONVENTIONS, FRAME_WEIGHTS, FRAMES, JPEG_QUALITIES, WEIGHTS, shop_photo
from lookbench.datasets.synth.tasks import RenderTask, run_task, set_noise_basis

RELEASE = date(2026, 6, 1)
PER_SIDE = 128
CHI2_CRITICAL_0001 = {1: 10.83, 2: 13.82, 3: 16.27, 4: 18.47, 5: 20.52}
"""Upper 0.1 % points of the chi-square distribution by degrees of freedom (statistical tables)."""
KS_FACTOR_0001 = 1.949
"""c(0.001) of the two-sample Kolmogorov-Smirnov test: reject when D > c * sqrt((n + m) / (n m))."""

Rows = list[dict[str, Any]]


@pytest.fixture(scope="module")
def small() -> ReleasePlan:
    return plan_release(0, RELEASE, "small")


@pytest.fixture(scope="module")
def rendered(small: ReleasePlan) -> Iterator[tuple[Rows, Rows]]:
    """128 gallery rows (32 per subset, in gallery order) and the first 128 distractors of the default release."""
    items = tuple(item for sub in small.subsets for item in sub.gallery[: PER_SIDE // 4])
    gallery = run_task(RenderTask("catalogue", "real", items, small.seed, small.release)).to_pylist()
    set_noise_basis(small.basis)
    try:
        noise = [
            row
            for chunk in small.noise_chunks()[:2]
            for row in run_task(RenderTask("noise", "real", (chunk,), small.seed, small.release)).to_pylist()
        ]
    finally:
        set_noise_basis(type(small.basis)())
    assert len(gallery) == len(noise) == PER_SIDE
    yield gallery, noise


def _chi2_homogeneity(a: list[Any], b: list[Any]) -> tuple[float, int]:
    """Pearson's chi-square statistic that two samples come from one categorical distribution, and its dof."""
    values = sorted(set(a) | set(b), key=str)
    table = np.array([[Counter(a)[v] for v in values], [Counter(b)[v] for v in values]], dtype=float)
    expected = table.sum(axis=1, keepdims=True) * table.sum(axis=0, keepdims=True) / table.sum()
    return float(((table - expected) ** 2 / expected).sum()), len(values) - 1


def _chi2_fit(sample: list[Any], values: tuple[Any, ...], weights: tuple[float, ...]) -> float:
    counts = Counter(sample)
    observed = np.array([counts[v] for v in values], dtype=float)
    expected = np.asarray(weights) * len(sample)
    assert observed.sum() == len(sample), "a value outside the documented set"
    return float(((observed - expected) ** 2 / expected).sum())


def _ks_same(a: list[float], b: list[float]) -> bool:
    grid = np.sort(np.concatenate([a, b]))
    fa = np.searchsorted(np.sort(a), grid, side="right") / len(a)
    fb = np.searchsorted(np.sort(b), grid, side="right") / len(b)
    n, m = len(a), len(b)
    return float(np.abs(fa - fb).max()) <= KS_FACTOR_0001 * np.sqrt((n + m) / (n * m))


def _decoded(row: dict[str, Any]) -> Image.Image:
    return Image.open(io.BytesIO(row["image"]["bytes"]))


def _border(image: Image.Image) -> tuple[float, float]:
    """Mean brightness and saturation (max - min channel) of the outer 8-pixel ring."""
    array = np.asarray(image.convert("RGB"), dtype=np.float32)
    ring = np.concatenate([array[:8].reshape(-1, 3), array[-8:].reshape(-1, 3)])
    ring = np.concatenate([ring, array[:, :8].reshape(-1, 3), array[:, -8:].reshape(-1, 3)])
    return float(ring.mean()), float((ring.max(axis=1) - ring.min(axis=1)).mean())


def test_gallery_and_noise_draw_conventions_from_one_documented_mixture(rendered: tuple[Rows, Rows]) -> None:
    gallery, noise = rendered
    statistic, dof = _chi2_homogeneity([r["shot"] for r in gallery], [r["shot"] for r in noise])
    assert statistic < CHI2_CRITICAL_0001[dof]
    for rows in (gallery, noise):
        assert _chi2_fit([r["shot"] for r in rows], CONVENTIONS, WEIGHTS) < CHI2_CRITICAL_0001[len(CONVENTIONS) - 1]


def test_frames_and_jpeg_quantisation_read_back_from_the_files_match(rendered: tuple[Rows, Rows]) -> None:
    """Counted from the decoded JPEGs (frame size, luminance quantisation table), not from what the generator says."""
    gallery, noise = rendered
    frames = [[_decoded(r).size for r in rows] for rows in rendered]
    quantisation = [[sum(_decoded(r).quantization[0]) for r in rows] for rows in rendered]  # type: ignore[attr-defined]
    for a, b in (frames, quantisation):
        statistic, dof = _chi2_homogeneity(a, b)
        assert statistic < CHI2_CRITICAL_0001[dof]
    assert len(set(quantisation[0]) | set(quantisation[1])) == len(JPEG_QUALITIES)
    for sample in frames:
        assert _chi2_fit(sample, FRAMES, FRAME_WEIGHTS) < CHI2_CRITICAL_0001[len(FRAMES) - 1]
    assert len(gallery) == len(noise)


def test_border_brightness_and_saturation_do_not_tell_noise_from_gallery(rendered: tuple[Rows, Rows]) -> None:
    """The old renderer's source signature (a bright paper border on every gallery shot) is gone: a two-sample KS
    test at the 0.1 % level keeps both border statistics; the studio queries' paper border is told apart (it bites)."""
    gallery, noise = rendered
    g = [_border(_decoded(r)) for r in gallery]
    n = [_border(_decoded(r)) for r in noise]
    for k in range(2):
        assert _ks_same([s[k] for s in g], [s[k] for s in n]), ("brightness", "saturation")[k]
    paper = [(245.0 - 3 * (i % 5), 2.0) for i in range(PER_SIDE)]
    assert not _ks_same([s[0] for s in paper], [s[0] for s in n])


def test_hard_near_misses_have_the_documented_share_and_stay_near(small: ReleasePlan) -> None:
    drawn = [d for chunk in small.noise_chunks() for d in noise_products(small.seed, RELEASE, chunk, small.basis)]
    queries = {p.product_id: p for sub in small.subsets for p in sub.query_products()}
    near = [d for d in drawn if d.near_miss_of is not None]
    share = len(near) / len(drawn)
    assert abs(share - NEAR_MISS_SHARE) < 4 * np.sqrt(NEAR_MISS_SHARE * (1 - NEAR_MISS_SHARE) / len(drawn))
    missing_counts = Counter()
    for d in near:
        query = queries[str(d.near_miss_of)]
        assert d.product.category == query.category
        labels, own = set(d.product.all_attributes()), set(query.all_attributes())
        assert 1 <= len(own - labels) <= 2 and len(labels - own) <= 2, (own, labels)
        assert d.product.variation != query.variation  # another shop's product, not the query's own
        missing_counts[len(own - labels)] += 1
    assert missing_counts[1] and missing_counts[2]


def test_rendered_near_miss_rows_name_a_query_and_differ_in_one_or_two_labels(
    small: ReleasePlan, rendered: tuple[Rows, Rows]
) -> None:
    _, noise = rendered
    queries = {p.product_id: p for sub in small.subsets for p in sub.query_products()}
    near = [r for r in noise if r["near_miss_of"]]
    assert near
    for row in near:
        query = queries[row["near_miss_of"]]
        labels = {row["main_attribute"], *row["other_attributes"]}
        own = set(query.all_attributes())
        assert row["category"] == query.category and 1 <= len(own - labels) <= 2


def test_shop_photos_are_deterministic_by_seed(small: ReleasePlan) -> None:
    product = small.subsets[0].gallery[0].product

    def photo(seed: int) -> bytes:
        shot = shop_photo(product, np.random.default_rng(seed))
        return shot.image.tobytes() + f"{shot.convention}{shot.quality}".encode()

    assert photo(3) == photo(3)
    assert photo(3) != photo(4)
