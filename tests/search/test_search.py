"""Exact search: agreement with a brute-force full sort, deterministic ties, exclusion and padding."""

from __future__ import annotations

import numpy as np
import pytest

from lookbench.search.exact import ExactSearch


def _unit(rng: np.random.Generator, n: int, d: int) -> np.ndarray:
    x = rng.normal(size=(n, d)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def _reference(q: np.ndarray, c: np.ndarray, k: int) -> np.ndarray:
    scores = q @ c.T
    return np.array([sorted(range(len(c)), key=lambda j: (-scores[i, j], j))[:k] for i in range(len(q))])


@pytest.mark.parametrize("blocks", [(7, 64), (512, 16384), (1, 1)])
def test_matches_full_sort_with_ties(blocks: tuple[int, int]) -> None:
    rng = np.random.default_rng(1)
    q, c = _unit(rng, 20, 6), _unit(rng, 300, 6)
    c[150] = c[7]
    c[299] = c[7]  # exact ties: the lower row must win
    q[3] = c[7]
    result = ExactSearch(*blocks).search(q, c, 10)
    np.testing.assert_array_equal(result.indices, _reference(q, c, 10))
    assert list(result.indices[3, :3]) == [7, 150, 299]
    assert np.all(np.diff(result.scores, axis=1) <= 0)


def test_all_equal_scores_rank_by_row() -> None:
    c = np.tile(np.array([[1.0, 0.0]], dtype=np.float32), (50, 1))
    q = np.array([[1.0, 0.0]], dtype=np.float32)
    assert list(ExactSearch(corpus_block=8).search(q, c, 5).indices[0]) == [0, 1, 2, 3, 4]


def test_exclude_and_padding() -> None:
    c = np.eye(3, dtype=np.float32)
    q = np.array([[1.0, 0.0, 0.0]], dtype=np.float32)
    exclude = np.array([True, False, False])
    result = ExactSearch().search(q, c, 5, exclude=exclude)
    assert list(result.indices[0]) == [1, 2, -1, -1, -1]
    assert np.isneginf(result.scores[0, 2:]).all()


def test_rejects_bad_k_and_shapes() -> None:
    c = np.eye(3, dtype=np.float32)
    with pytest.raises(ValueError, match="k must be"):
        ExactSearch().search(c, c, 0)
    with pytest.raises(ValueError, match="shape"):
        ExactSearch().search(c[:, :2], c, 1)


def test_exclusions_across_blocks_match_reference() -> None:
    rng = np.random.default_rng(4)
    q, c = _unit(rng, 9, 5), _unit(rng, 200, 5)
    exclude = np.zeros(200, dtype=bool)
    exclude[:45] = True  # the whole first block and part of the second are never returned
    exclude[120:130] = True
    result = ExactSearch(query_block=4, corpus_block=40).search(q, c, 12, exclude=exclude)
    keep = np.flatnonzero(~exclude)
    expected = keep[_reference(q, c[keep], 12)]
    np.testing.assert_array_equal(result.indices, expected)


@pytest.mark.parametrize("corpus_block", [7, 64, 1000])
def test_block_sizes_give_identical_rankings_and_scores(corpus_block: int) -> None:
    # coarse values make exact ties and near-ties, where a blocked float32 product could reorder rows
    rng = np.random.default_rng(3)
    q = np.round(rng.normal(size=(37, 24)), 1).astype(np.float32)
    c = np.round(rng.normal(size=(900, 24)), 1).astype(np.float32)
    c[500:520] = c[10]
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    c /= np.linalg.norm(c, axis=1, keepdims=True)
    reference = ExactSearch(query_block=37, corpus_block=900).search(q, c, 20)
    found = ExactSearch(query_block=8, corpus_block=corpus_block).search(q, [c[:300], c[300:]], 20)
    np.testing.assert_array_equal(found.indices, reference.indices)
    np.testing.assert_array_equal(found.scores, reference.scores)
