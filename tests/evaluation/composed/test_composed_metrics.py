"""Composed metrics against hand computation: mAP@K with several relevant items, recall, breakdowns."""

from __future__ import annotations

import numpy as np
import pytest

from lookbench.metrics.aggregate import SubsetValues
from lookbench.metrics.breakdown import breakdown
from lookbench.metrics.composed import average_precision_at, composed_metric_names, composed_values


def test_map_at_k_with_several_relevant_items_matches_a_hand_computation() -> None:
    # ranks 1, 3 and 5 are relevant; the corpus holds 4 relevant items (one never retrieved)
    flags = np.array([[1, 0, 1, 0, 1, 0]], dtype=bool)
    # AP@5 = (P@1 + P@3 + P@5) / min(4, 5) = (1 + 2/3 + 3/5) / 4
    assert average_precision_at(flags, np.array([4]), 5)[0] == pytest.approx((1 + 2 / 3 + 3 / 5) / 4)
    # AP@2 = P@1 / min(4, 2)
    assert average_precision_at(flags, np.array([4]), 2)[0] == pytest.approx(0.5)
    # AP@6 with all 3 relevant items retrieved: the denominator is min(3, 6) = 3
    assert average_precision_at(flags, np.array([3]), 6)[0] == pytest.approx((1 + 2 / 3 + 3 / 5) / 3)


def test_map_is_one_for_a_perfect_ranking_and_zero_without_relevant_items() -> None:
    flags = np.array([[1, 1, 0, 0], [0, 0, 0, 0], [0, 1, 1, 1]], dtype=bool)
    ap = average_precision_at(flags, np.array([2, 0, 5]), 4)
    # third query: P@2 = 1/2, P@3 = 2/3, P@4 = 3/4 over min(5, 4) = 4
    assert ap.tolist() == pytest.approx([1.0, 0.0, (1 / 2 + 2 / 3 + 3 / 4) / 4])


def test_map_counts_ranks_beyond_a_short_corpus_as_misses() -> None:
    flags = np.array([[0, 1]], dtype=bool)  # a corpus of two items searched at K = 5
    assert average_precision_at(flags, np.array([1]), 5)[0] == pytest.approx(0.5)


def test_composed_values_names_and_recall() -> None:
    relevant = np.array([[0, 0, 1], [1, 0, 0]], dtype=bool)
    hard = np.array([[1, 0, 0], [0, 0, 0]], dtype=bool)
    fine = np.array([[1, 1, 1], [1, 0, 0]], dtype=bool)
    coarse = np.ones((2, 3), dtype=bool)
    values = composed_values(relevant, hard, fine, coarse, np.array([1, 2]), (1, 3))
    assert list(values) == composed_metric_names((1, 3))
    assert values["recall@1"].tolist() == [0.0, 1.0]
    assert values["recall@3"].tolist() == [1.0, 1.0]
    assert values["map@3"].tolist() == pytest.approx([1 / 3, 1 / 2])
    assert values["hard_negative@1"].tolist() == [1.0, 0.0]
    assert values["fine_recall@1"].tolist() == [1.0, 1.0]


def test_breakdown_means_over_the_queries_holding_each_key() -> None:
    values = SubsetValues(
        name="composed",
        values={"recall@1": np.array([1.0, 0.0, 1.0, 1.0])},
        clusters=np.array([0, 0, 1, 2]),
        categories=["t-shirt"] * 4,
    )
    keys = [["colour"], ["colour", "sleeve length"], ["sleeve length"], []]
    found = breakdown(values, keys, resamples=200, seed=0)
    assert sorted(found) == ["colour", "sleeve length"]
    assert found["colour"]["recall@1"].value == pytest.approx(0.5)
    assert found["colour"]["recall@1"].n == 2
    assert found["sleeve length"]["recall@1"].value == pytest.approx(0.5)
    low, high = found["sleeve length"]["recall@1"].ci_low, found["sleeve length"]["recall@1"].ci_high
    assert 0.0 <= low <= 0.5 <= high <= 1.0
