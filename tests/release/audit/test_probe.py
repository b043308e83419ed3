"""The audit's AUC, bootstrap interval and stratified sampling against hand and brute-force values."""

from __future__ import annotations

import numpy as np

from lookbench.release.audit.probe import auc, bootstrap_auc, out_of_fold_scores
from lookbench.release.audit.sampling import allocate, stratified_rows


def test_auc_equals_the_share_of_ordered_pairs() -> None:
    rng = np.random.default_rng(3)
    scores = np.round(rng.normal(size=60), 1)  # rounded: plenty of ties
    positive = rng.random(60) < 0.4
    pos, neg = scores[positive], scores[~positive]
    pairs = (pos[:, None] > neg[None, :]).sum() + 0.5 * (pos[:, None] == neg[None, :]).sum()
    assert auc(scores, positive) == pairs / (len(pos) * len(neg))
    assert auc(np.array([0.1, 0.2, 0.9, 0.8]), np.array([False, False, True, True])) == 1.0


def test_separable_features_score_near_one_and_noise_near_half() -> None:
    rng = np.random.default_rng(0)
    noise = np.r_[np.zeros(100, bool), np.ones(100, bool)]
    apart = rng.normal(size=(200, 5)) + 3.0 * noise[:, None]
    alike = rng.normal(size=(200, 5))
    high = bootstrap_auc(out_of_fold_scores(apart, noise, 5, 0), noise, 200, 0)
    chance = bootstrap_auc(out_of_fold_scores(alike, noise, 5, 0), noise, 200, 0)
    assert high.auc > 0.99 and high.low > 0.97
    assert chance.low < 0.5 < chance.high


def test_allocation_is_proportional_and_covers_every_stratum() -> None:
    assert allocate([600, 300, 100], 100) == [60, 30, 10]
    assert allocate([1000, 1], 10) == [9, 1]  # the small stratum keeps one draw
    assert allocate([5, 3], 100) == [5, 3]  # fewer than asked: everything
    counts = allocate([7, 11, 13, 2], 17)
    assert sum(counts) == 17 and all(0 < c <= n for c, n in zip(counts, [7, 11, 13, 2], strict=True))


def test_stratified_rows_are_seeded_and_distinct() -> None:
    strata = ["a"] * 50 + ["b"] * 30 + ["c"] * 20
    first = stratified_rows(strata, 10, np.random.default_rng(1))
    assert np.array_equal(first, stratified_rows(strata, 10, np.random.default_rng(1)))
    assert len(set(first.tolist())) == 10
    assert [sum(strata[r] == s for r in first) for s in "abc"] == [5, 3, 2]
