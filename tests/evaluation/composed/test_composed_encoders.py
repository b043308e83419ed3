"""The baselines' arithmetic and the reference-free search, on vectors whose answers are known."""

from __future__ import annotations

import numpy as np
import pytest
from composedkit import ADD_HOOD, BLUE, SLEEVES, labels

from lookbench.errors import EmbeddingError, LookBenchError
from lookbench.evaluation.composed.arithmetic import AttributeArithmetic, CentroidDirections
from lookbench.evaluation.composed.encoders import ComposedBatch, ImageOnly, LabelledItems, WeightedSum, normalised
from lookbench.evaluation.composed.task import search_without_reference
from lookbench.search.exact import MAX_K, ExactSearch


def _items() -> LabelledItems:
    rows = [
        ("a", "t-shirt", "red", ["long sleeve"]),
        ("b", "t-shirt", "red", ["long sleeve"]),
        ("c", "t-shirt", "red", ["long sleeve"]),
        ("d", "t-shirt", "red", ["short sleeve"]),
        ("e", "t-shirt", "red", ["short sleeve"]),
        ("f", "t-shirt", "red", ["short sleeve"]),
        ("g", "dress", "blue", ["long sleeve"]),
        ("h", "dress", "blue", ["long sleeve"]),
        ("i", "dress", "red", ["long sleeve"]),
    ]
    e = np.eye(4, dtype=np.float32)
    vectors = np.stack([e[0], e[0], e[0], e[1], e[1], e[1], e[2], e[2], e[3]]) * 3.0  # scale does not matter
    return LabelledItems(vectors, labels(rows))


def test_centroid_shift_is_within_the_category_when_both_ends_are_known_there() -> None:
    directions = CentroidDirections.learn(_items())
    assert np.allclose(directions.shift("t-shirt", SLEEVES), [-1, 1, 0, 0])
    # dresses have no short sleeves: the shift falls back to every category (long: a, b, c, g, h, i; short: d, e, f)
    assert np.allclose(directions.shift("dress", SLEEVES), [-0.5, 1.0, -1 / 3, -1 / 6])
    # red -> blue: only two blue items anywhere, fewer than MIN_ITEMS
    assert directions.shift("dress", BLUE) is None
    # adding a hood: no item has one, so its end is unknown
    assert directions.shift("t-shirt", ADD_HOOD) is None


def test_arithmetic_moves_the_reference_and_counts_what_it_cannot_place() -> None:
    method = AttributeArithmetic()
    with pytest.raises(LookBenchError, match="fit"):
        method.embed_queries(ComposedBatch(np.zeros((0, 4)), [], [], labels([])), 1.0)
    with pytest.raises(LookBenchError, match="labelled items outside the composed gallery"):
        method.fit(LabelledItems(np.zeros((0, 4), np.float32), labels([])))
    method.fit(_items())
    batch = ComposedBatch(
        reference=np.array([[2.0, 0, 0, 0], [2.0, 0, 0, 0]]),
        texts=["shorter sleeves", "add a hood"],
        changes=[(SLEEVES,), (ADD_HOOD,)],
        labels=labels([("q", "t-shirt", "red", ["long sleeve"]), ("q2", "t-shirt", "red", ["long sleeve"])]),
    )
    moved = method.embed_queries(batch, 0.5)
    assert np.allclose(moved, [[0.5, 0.5, 0, 0], [1, 0, 0, 0]])
    assert method.describe()["unknown_changes"] == {"details: - -> hood": 1}
    assert method.describe()["fit_items"] == 9


def test_image_only_and_weighted_sum() -> None:
    class Letters:
        def embed_texts(self, texts: list[str]) -> np.ndarray:
            return np.array([[0.0, 0.0, 5.0] if "blue" in t else [0.0, 4.0, 0.0] for t in texts])

    batch = ComposedBatch(np.array([[3.0, 0.0, 0.0]]), ["make it blue"], [(BLUE,)], labels([]))
    assert ImageOnly().embed_queries(batch, None).tolist() == [[3.0, 0.0, 0.0]]
    mixed = WeightedSum(Letters(), "letters").embed_queries(batch, 0.25)
    assert np.allclose(mixed, [[0.75, 0.0, 0.25]])
    assert np.allclose(WeightedSum(Letters(), "letters", weight=1.0).embed_queries(batch, 0.25), [[0, 0, 1]])

    class Wrong:
        def embed_texts(self, texts: list[str]) -> np.ndarray:
            return np.ones((len(texts), 5))

    with pytest.raises(EmbeddingError, match="text embeddings have 5 dimensions, the images 3"):
        WeightedSum(Wrong(), "wrong").embed_queries(batch, 0.5)


def test_search_removes_each_querys_reference_rows_also_beyond_the_backends_k() -> None:
    rng = np.random.default_rng(0)
    corpus = normalised(rng.normal(size=(150, 8)))
    queries = corpus[[0, 5]] + 0.01
    references = [np.array([0, 1]), np.array([5])]
    excluded = np.zeros(150, dtype=bool)
    excluded[2] = True
    exact = ExactSearch()
    for k in (3, MAX_K):  # MAX_K + 2 slots are more than the backend serves: searched per reference instead
        found = search_without_reference(exact, normalised(queries), corpus, k, excluded, references)
        full = exact.search(normalised(queries), corpus, MAX_K, exclude=excluded).indices
        for q, rows in enumerate(references):
            expected = [r for r in full[q] if r not in rows]
            got = found.indices[q][found.indices[q] >= 0].tolist()
            shown = min(k, len(expected))  # `full` stops at MAX_K rows, so fewer are known beyond the references
            assert got[:shown] == expected[:shown]
            assert not set(rows) & set(got) and 2 not in got
        assert found.indices.shape == (2, k)
