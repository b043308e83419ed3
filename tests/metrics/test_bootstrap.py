"""Bootstrap intervals and the paired test: seeded, cluster-aware, and behaving at the extremes."""

from __future__ import annotations

import numpy as np
import pytest

from lookbench.metrics.aggregate import SubsetValues, summarise
from lookbench.metrics.bootstrap import ClusterSums, paired_bootstrap, ratio_interval, resample_counts


def test_resample_counts_draw_c_clusters() -> None:
    counts = resample_counts(np.random.default_rng(0), 50, 100)
    assert counts.shape == (100, 50)
    assert (counts.sum(axis=1) == 50).all()


def test_cluster_sums() -> None:
    sums = ClusterSums.of(np.array([[1.0], [2.0], [4.0]]), np.array([0, 0, 1]))
    assert sums.sums.ravel().tolist() == [3.0, 4.0]
    assert sums.sizes.tolist() == [2.0, 1.0]


def test_constant_values_have_zero_width_interval() -> None:
    v = SubsetValues("aigen_studio", {"m@1": np.ones(30)}, np.arange(30), ["x"] * 30)
    est = summarise([v], resamples=100)["aigen_studio"]["m@1"]
    assert (est.ci_low, est.value, est.ci_high) == (1.0, 1.0, 1.0)


def test_whole_clusters_widen_the_interval() -> None:
    values = np.repeat([1.0, 0.0] * 10, 10)  # 20 outfits of 10 identical queries
    per_query = SubsetValues("real_streetlook", {"m@1": values}, np.arange(200), ["x"] * 200)
    per_outfit = SubsetValues("real_streetlook", {"m@1": values}, np.repeat(np.arange(20), 10), ["x"] * 200)
    narrow = summarise([per_query], resamples=500)["real_streetlook"]["m@1"]
    wide = summarise([per_outfit], resamples=500)["real_streetlook"]["m@1"]
    assert (wide.ci_high - wide.ci_low) > 2 * (narrow.ci_high - narrow.ci_low)


def test_interval_is_seeded_and_subset_independent() -> None:
    rng = np.random.default_rng(0)
    a = SubsetValues("real_studio_flat", {"m@1": rng.random(40)}, np.arange(40), ["x"] * 40)
    b = SubsetValues("aigen_studio", {"m@1": rng.random(10)}, np.arange(10), ["x"] * 10)
    alone = summarise([a], resamples=300, seed=5)["real_studio_flat"]
    together = summarise([a, b], resamples=300, seed=5)["real_studio_flat"]
    assert alone == together
    assert summarise([a], resamples=300, seed=6)["real_studio_flat"] != alone


def test_paired_identical_runs() -> None:
    x = np.random.default_rng(1).integers(0, 2, 100).astype(float)
    t = paired_bootstrap(x, x, np.arange(100), "m")
    assert t.diff == 0 and t.p_value == 1.0


def test_paired_clear_difference() -> None:
    a = np.ones(200)
    b = np.r_[np.zeros(100), np.ones(100)]
    t = paired_bootstrap(a, b, np.arange(200), "m", resamples=1000)
    assert t.diff == pytest.approx(0.5)
    assert t.p_value < 0.01
    assert t.ci_low > 0.3


def test_ratio_interval_of_two_clusters_spans_the_three_possible_draws() -> None:
    # two clusters drawn twice: AA -> 2/2, AB -> 1/2, BB -> 0/2 with chances 1/4, 1/2, 1/4
    interval = ratio_interval(np.array([1.0, 0.0]), np.array([1.0, 1.0]), np.array([0, 1]), np.random.default_rng(0))
    assert interval == (0.0, 1.0)


def test_ratio_interval_drops_draws_without_a_denominator() -> None:
    # AA -> 2/2, AB -> 2/1, BB has no denominator hit and no ratio
    interval = ratio_interval(np.array([1.0, 1.0]), np.array([1.0, 0.0]), np.array([0, 1]), np.random.default_rng(0))
    assert interval == (1.0, 2.0)


def test_ratio_interval_is_paired() -> None:
    # the same per-query hits on both sides: every paired draw has ratio 1, however the hits fall
    hits = np.random.default_rng(2).integers(0, 2, 120).astype(float)
    clusters = np.arange(120) // 3
    assert ratio_interval(hits, hits, clusters, np.random.default_rng(0)) == (1.0, 1.0)
    # unpaired sides of the same size spread around their ratio
    other = np.random.default_rng(3).permutation(hits)
    low, high = ratio_interval(hits, other, clusters, np.random.default_rng(0)) or (1.0, 1.0)
    assert low < 1.0 < high


def test_ratio_interval_without_resamples_or_hits_is_none() -> None:
    ones = np.ones(4)
    assert ratio_interval(ones, ones, np.arange(4), np.random.default_rng(0), resamples=0) is None
    assert ratio_interval(ones, np.zeros(4), np.arange(4), np.random.default_rng(0)) is None
