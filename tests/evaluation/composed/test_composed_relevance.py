"""The composed relevance rule on hand-built pairs: changed vs kept attributes, the reference, hard negatives."""

from __future__ import annotations

import numpy as np
import pytest
from composedkit import ADD_HOOD, BLUE, NO_POCKET, SLEEVES, labels, queries

from lookbench.evaluation.composed.relevance import ComposedRelevance, kept_attributes, target_attributes, target_labels
from lookbench.metrics.definitions import FineRule
from lookbench.snapshot.composed import Change

REFERENCE = ("r", "t-shirt", "red", ["long sleeve", "crew neck"])
GALLERY = [
    ("r", "t-shirt", "red", ["long sleeve", "crew neck"]),  # 0: the reference item itself
    ("t1", "t-shirt", "red", ["short sleeve", "crew neck"]),  # 1: relevant
    ("t2", "t-shirt", "red", ["short sleeve", "crew neck", "chest pocket"]),  # 2: relevant (an extra detail)
    ("h1", "t-shirt", "red", ["long sleeve", "crew neck"]),  # 3: hard negative (the look, not the change)
    ("h2", "t-shirt", "red", ["three-quarter sleeve", "crew neck"]),  # 4: hard negative (another sleeve)
    ("k1", "t-shirt", "blue", ["short sleeve", "crew neck"]),  # 5: the change but not the kept colour
    ("c1", "blouse", "red", ["short sleeve", "crew neck"]),  # 6: another category
    ("k2", "t-shirt", "red", ["short sleeve", "v-neck"]),  # 7: a kept attribute lost
]
NOISE = [("n1", "t-shirt", "red", ["short sleeve", "crew neck"])]  # 8: would match, but noise never does
CORPUS = labels(GALLERY + NOISE)


def _relevance(q: object, excluded: np.ndarray | None = None) -> ComposedRelevance:
    return ComposedRelevance.build(q, CORPUS, gallery_rows=len(GALLERY), excluded=excluded)  # type: ignore[arg-type]


def _everything(n: int, rows: int = len(GALLERY) + len(NOISE)) -> np.ndarray:
    return np.tile(np.arange(rows), (n, 1))


def test_changed_attribute_must_take_the_target_value_and_kept_ones_stay() -> None:
    relevance = _relevance(queries([REFERENCE], [(SLEEVES,)]))
    relevant, hard = relevance.flags(_everything(1))
    assert np.flatnonzero(relevant[0]).tolist() == [1, 2]
    assert np.flatnonzero(hard[0]).tolist() == [3, 4]
    assert relevance.relevant_counts().tolist() == [2]


def test_reference_item_is_never_relevant_nor_a_hard_negative_and_is_removed_from_the_ranking() -> None:
    relevance = _relevance(queries([REFERENCE], [(SLEEVES,)]))
    relevant, hard = relevance.flags(np.array([[0, 3]]))
    assert not relevant[0, 0] and not hard[0, 0] and hard[0, 1]
    assert [r.tolist() for r in relevance.reference_rows()] == [[0]]


def test_removing_a_detail_forbids_it_and_adding_one_requires_it() -> None:
    pocket = ("p", "t-shirt", "red", ["short sleeve", "crew neck", "chest pocket"])
    relevance = _relevance(queries([pocket, REFERENCE], [(NO_POCKET,), (ADD_HOOD,)]))
    relevant, hard = relevance.flags(_everything(2))
    assert np.flatnonzero(relevant[0]).tolist() == [1]  # t1: red short crew, no pocket
    assert np.flatnonzero(hard[0]).tolist() == [2]  # t2 still has the pocket
    assert not relevant[1].any()  # no t-shirt has a hood
    assert np.flatnonzero(hard[1]).tolist() == [3]  # h1 keeps every attribute of the reference


def test_two_changes_need_both() -> None:
    relevance = _relevance(queries([REFERENCE], [(BLUE, SLEEVES)]))
    relevant, hard = relevance.flags(_everything(1))
    assert np.flatnonzero(relevant[0]).tolist() == [5]
    assert np.flatnonzero(hard[0]).tolist() == [1, 2, 3, 4]  # only the crew neck is kept


def test_explicit_targets_are_relevant_whatever_their_labels_and_add_to_the_label_rule() -> None:
    relevance = _relevance(queries([REFERENCE, REFERENCE], [(), (SLEEVES,)], [("c1",), ("k2",)]))
    relevant, hard = relevance.flags(_everything(2))
    assert np.flatnonzero(relevant[0]).tolist() == [6]
    assert not hard[0].any()  # without changes there is no kept set to match
    assert np.flatnonzero(relevant[1]).tolist() == [1, 2, 7]
    assert relevance.relevant_counts().tolist() == [1, 3]
    assert np.flatnonzero(relevance.explicit(_everything(2))[1]).tolist() == [7]


def test_noise_and_excluded_rows_never_count() -> None:
    excluded = np.zeros(len(GALLERY) + len(NOISE), dtype=bool)
    excluded[2] = True  # t2's image could not be embedded
    relevance = _relevance(queries([REFERENCE], [(SLEEVES,)]), excluded)
    relevant, _ = relevance.flags(_everything(1))
    assert np.flatnonzero(relevant[0]).tolist() == [1]
    assert relevance.relevant_counts().tolist() == [1]
    relevant, _ = relevance.flags(np.array([[-1, 8, 1]]))  # an empty slot, a noise row, a relevant row
    assert relevant.tolist() == [[False, False, True]]


def test_target_labels_follow_the_changes_for_fine_recall() -> None:
    q = queries([REFERENCE, ("p", "t-shirt", "chest pocket", ["red"])], [(BLUE,), (NO_POCKET,)])
    wanted = target_labels(q)
    assert wanted.main_attribute == ["blue", ""]  # the main attribute follows its change; a removed one is empty
    assert wanted.attribute_set(0) == {"blue", "long sleeve", "crew neck"}
    assert wanted.attribute_set(1) == {"red"}
    relevance = _relevance(queries([REFERENCE, REFERENCE], [(SLEEVES,), (BLUE,)]))
    fine = relevance.target.fine(_everything(2), FineRule.MAIN)
    assert np.flatnonzero(fine[0]).tolist() == [0, 1, 2, 3, 4, 7]  # red t-shirts (row 0 is never ranked)
    assert np.flatnonzero(fine[1]).tolist() == [5]  # the blue t-shirt
    strict = relevance.target.fine(_everything(2), FineRule.STRICT)
    assert np.flatnonzero(strict[0]).tolist() == [1, 2]
    assert not strict[1].any()  # no blue long-sleeved t-shirt


@pytest.mark.parametrize(
    ("change", "kept", "wanted"),
    [
        (SLEEVES, {"red", "crew neck"}, {"red", "crew neck", "short sleeve"}),
        (Change("details", "", "chest pocket"), {"red", "long sleeve", "crew neck"}, None),
    ],
)
def test_kept_and_target_sets(change: Change, kept: set[str], wanted: set[str] | None) -> None:
    reference = frozenset({"red", "long sleeve", "crew neck"})
    assert kept_attributes(reference, (change,)) == kept
    assert target_attributes(reference, (change,)) == (wanted or reference | {"chest pocket"})
