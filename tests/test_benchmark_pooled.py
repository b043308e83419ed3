"""benchmarks/synth.py pooled: fashion-blind features' hits over the model's, pooled over draws of a release."""

from __future__ import annotations

import pytest

from test_docs import benchmarks_module

Hits = dict[tuple[str, int], tuple[float, int]]


def _hits(subset: str, values: list[float], clusters: list[int]) -> Hits:
    return {(subset, row): (value, cluster) for row, (value, cluster) in enumerate(zip(values, clusters, strict=True))}


def test_pooled_ratio_is_the_sum_of_every_draws_hits_over_the_models() -> None:
    pooled_ratio = benchmarks_module("synth").pooled_ratio
    draws = [
        (_hits("real_streetlook", [1, 0, 1, 0], [0, 0, 1, 2]), _hits("real_streetlook", [1, 1, 1, 0], [0, 0, 1, 2])),
        (_hits("real_streetlook", [0, 0, 1], [0, 1, 2]), _hits("real_streetlook", [1, 1, 1], [0, 1, 2])),
    ]
    pooled = pooled_ratio(draws, "real_streetlook", 200)
    assert (pooled.feature_hits, pooled.model_hits, pooled.queries) == (3.0, 6.0, 7)
    assert pooled.ratio == pytest.approx(0.5)
    assert pooled_ratio(draws, "aigen_streetlook", 200).queries == 0


def test_overall_pools_every_subset_and_a_scope_only_its_own() -> None:
    pooled_ratio = benchmarks_module("synth").pooled_ratio
    feature = {**_hits("real_streetlook", [1, 1], [0, 1]), **_hits("aigen_studio", [0, 0, 0], [0, 1, 2])}
    model = {**_hits("real_streetlook", [1, 0], [0, 1]), **_hits("aigen_studio", [1, 1, 1], [0, 1, 2])}
    assert pooled_ratio([(feature, model)], "overall", 0).ratio == pytest.approx(2 / 4)
    assert pooled_ratio([(feature, model)], "real_streetlook", 0).ratio == pytest.approx(2 / 1)
    assert pooled_ratio([(feature, model)], "aigen_studio", 0).ratio == 0.0


def test_clusters_of_different_draws_are_resampled_apart() -> None:
    pooled_ratio = benchmarks_module("synth").pooled_ratio
    # cluster 0 of each draw: ratio 1 in the first, 0 in the second. Resampled apart, two clusters give the draws
    # AA (1), AB (1/2) and BB (0); merged into one cluster they would give 1/2 every time.
    first = (_hits("real_streetlook", [1], [0]), _hits("real_streetlook", [1], [0]))
    second = (_hits("real_streetlook", [0], [0]), _hits("real_streetlook", [1], [0]))
    pooled = pooled_ratio([first, second], "real_streetlook", 2000)
    assert pooled.ratio == pytest.approx(0.5)
    assert pooled.interval == (0.0, 1.0)
