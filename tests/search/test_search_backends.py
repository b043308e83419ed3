"""Search backends: exact scores on tie-heavy data, corpora in parts, torch = exact, faiss recall, selection."""

from __future__ import annotations

import numpy as np
import pytest

from lookbench.errors import LookBenchError
from lookbench.search import Corpus, ExactSearch, make_backend
from lookbench.search.backend import max_row_norm
from lookbench.search.candidates import CandidatePool, exact_scores, score_margin


def _unit(rng: np.random.Generator, n: int, d: int) -> np.ndarray:
    x = rng.normal(size=(n, d)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def _reference(
    q: np.ndarray, c: np.ndarray, k: int, exclude: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Brute force: float64 products rounded to float32, sorted by (-score, row)."""
    scores = (q.astype(np.float64) @ c.astype(np.float64).T).astype(np.float32)
    if exclude is not None:
        scores[:, exclude] = -np.inf
    indices = np.full((len(q), k), -1, dtype=np.int64)
    best = np.full((len(q), k), -np.inf, dtype=np.float32)
    for i in range(len(q)):
        order = [j for j in np.lexsort((np.arange(len(c)), -scores[i])) if np.isfinite(scores[i, j])][:k]
        indices[i, : len(order)] = order
        best[i, : len(order)] = scores[i, order]
    return indices, best


def _tied(rng: np.random.Generator, n: int, d: int = 16) -> np.ndarray:
    """Unit vectors with four entries of +-0.5: every dot product is a multiple of 1/4, so ties are everywhere."""
    x = np.zeros((n, d), dtype=np.float32)
    for row in x:
        row[rng.choice(d, 4, replace=False)] = rng.choice([-0.5, 0.5], 4)
    return x


def _tie_heavy(seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    corpus = np.concatenate([_tied(rng, 400), _unit(rng, 200, 16)])
    corpus[450:470] = corpus[3]  # exact duplicates of one row
    queries = np.concatenate([_tied(rng, 30), corpus[[3, 7, 450]], _unit(rng, 5, 16)])
    return queries, corpus


@pytest.mark.parametrize("blocks", [(7, 64), (1024, 4096), (1, 3)])
def test_exact_matches_reference_on_tie_heavy_data(blocks: tuple[int, int]) -> None:
    q, c = _tie_heavy()
    result = ExactSearch(*blocks).search(q, c, 25)
    indices, scores = _reference(q, c, 25)
    np.testing.assert_array_equal(result.indices, indices)
    np.testing.assert_array_equal(result.scores, scores)
    assert list(result.indices[30, :21]) == [3, *range(450, 470)]  # 21 identical rows: lower rows first


def test_corpus_in_parts_equals_concatenated_and_keeps_exclusions() -> None:
    q, c = _tie_heavy(1)
    exclude = np.zeros(len(c), dtype=bool)
    exclude[[3, 5, 451, 599]] = True
    exclude[100:180] = True
    whole = ExactSearch(corpus_block=50).search(q, c, 20, exclude=exclude)
    parts = ExactSearch(corpus_block=50).search(q, [c[:123], c[123:124], c[124:]], 20, exclude=exclude)
    np.testing.assert_array_equal(whole.indices, parts.indices)
    np.testing.assert_array_equal(whole.indices, _reference(q, c, 20, exclude)[0])
    assert not np.isin(whole.indices, np.flatnonzero(exclude)).any()


@pytest.mark.parametrize(("workers", "corpus_block"), [(1, 16), (2, 16), (3, 50), (5, 7), (8, 1000)])
def test_threaded_scan_equals_brute_force(workers: int, corpus_block: int) -> None:
    """Each worker pools every n-th corpus block; their union ranked together is the brute-force top K."""
    q, c = _tie_heavy(4)
    exclude = np.zeros(len(c), dtype=bool)
    exclude[[3, 452, 17]] = True
    search = ExactSearch(query_block=9, corpus_block=corpus_block, workers=workers)
    result = search.search(q, [c[:101], c[101:450], c[450:]], 25, exclude=exclude)
    indices, scores = _reference(q, c, 25, exclude)
    np.testing.assert_array_equal(result.indices, indices)
    np.testing.assert_array_equal(result.scores, scores)


def test_absorbing_a_pool_keeps_exactly_the_union_entries_within_the_margin_of_its_kth_best() -> None:
    rng = np.random.default_rng(6)
    q, c = _unit(rng, 12, 8), _unit(rng, 300, 8)
    corpus = Corpus(c)
    k, margin = 5, 0.05
    pools = [CandidatePool(q, np.zeros(len(q), np.uint64), corpus, k, margin) for _ in range(2)]
    for n, start in enumerate(range(0, 300, 50)):
        pools[n % 2].offer(q @ c[start : start + 50].T, start)
    union = [pools[0].entries(), pools[1].entries()]
    pools[0].absorb(pools[1])
    kept = pools[0].entries()
    for i in range(len(q)):
        values = {
            int(col): float(val)
            for rows, cols, vals in union
            for row, col, val in zip(rows, cols, vals, strict=True)
            if row == i
        }
        kth = sorted(values.values(), reverse=True)[k - 1]
        expected = {col for col, val in values.items() if val >= np.float32(kth) - np.float32(margin)}
        assert {int(col) for row, col in zip(kept[0], kept[1], strict=True) if row == i} == expected


def test_threaded_scan_leaves_blas_threads_as_they_were() -> None:
    from threadpoolctl import threadpool_info

    before = [pool["num_threads"] for pool in threadpool_info()]
    q, c = _tie_heavy(5)
    ExactSearch(corpus_block=32, workers=2).search(q, c, 5)
    assert [pool["num_threads"] for pool in threadpool_info()] == before


def test_unnormalised_vectors_stay_exact() -> None:
    q, c = _tie_heavy(2)
    c = c * np.float32(7.5)  # the rounding margin scales with the norms
    np.testing.assert_array_equal(ExactSearch(corpus_block=32).search(q, c, 10).indices, _reference(q, c, 10)[0])


def test_fewer_rows_than_k_pads() -> None:
    c = np.eye(3, dtype=np.float32)
    result = ExactSearch().search(c[:1], [c[:1], c[1:]], 5, exclude=np.array([False, True, False]))
    assert list(result.indices[0]) == [0, 2, -1, -1, -1]
    assert np.isneginf(result.scores[0, 2:]).all()


def test_exact_scores_do_not_depend_on_batching() -> None:
    rng = np.random.default_rng(3)
    q, c = _unit(rng, 40, 1000), _unit(rng, 60, 1000)
    corpus = Corpus([c[:10], c[10:]])
    q_rows, c_rows = rng.integers(0, 40, 500), rng.integers(0, 60, 500)
    together = exact_scores(q, q_rows, corpus, c_rows)
    one_by_one = np.array([exact_scores(q, q_rows[i : i + 1], corpus, c_rows[i : i + 1])[0] for i in range(500)])
    np.testing.assert_array_equal(together, one_by_one)
    assert np.allclose(together, np.einsum("ij,ij->i", q[q_rows], c[c_rows]), atol=1e-6)


def test_exact_scores_are_float64_sums_of_the_float32_products() -> None:
    """Over several reuses of the scoring buffers, each score is its pair's float64 products summed as one row."""
    rng = np.random.default_rng(4)
    q, c = rng.normal(size=(30, 1024)).astype(np.float32), rng.normal(size=(90, 1024)).astype(np.float32)
    q_rows, c_rows = rng.integers(0, 30, 1300), rng.integers(0, 90, 1300)
    got = exact_scores(q, q_rows, Corpus([c[:25], c[25:]]), c_rows)
    wide_q, wide_c = q.astype(np.float64), c.astype(np.float64)
    expected = [np.float32(np.sum(wide_q[i] * wide_c[j])) for i, j in zip(q_rows, c_rows, strict=True)]
    np.testing.assert_array_equal(got, np.array(expected, dtype=np.float32))


def test_pool_with_massive_ties_is_cut_to_the_exact_top() -> None:
    c = np.tile(np.array([[0.6, 0.8]], dtype=np.float32), (3000, 1))
    q = np.array([[1.0, 0.0], [0.0, 1.0]], dtype=np.float32)
    corpus = Corpus(c)
    pool = CandidatePool(q, np.zeros(len(q), np.uint64), corpus, 5, score_margin(2, 1.0, 1.0), cap=40)
    for offset, block in corpus.blocks(100):
        pool.offer(q @ block.T, offset)
        assert pool.vals.shape[1] <= 8 * 40 + 100  # bounded, though all 3000 rows tie
    np.testing.assert_array_equal(pool.result().indices, [[0, 1, 2, 3, 4]] * 2)


def test_max_row_norm_remembers_only_read_only_arrays() -> None:
    a = np.ones((4, 4), dtype=np.float32)
    assert max_row_norm(a) == pytest.approx(2.0)
    a *= 2  # writable: measured again
    assert max_row_norm(a) == pytest.approx(4.0)
    a.flags.writeable = False
    assert max_row_norm(a) == pytest.approx(4.0)
    view = np.ones((4, 4), dtype=np.float32)
    readonly = view.view()
    readonly.flags.writeable = False
    assert max_row_norm(readonly) == pytest.approx(2.0)
    view *= 3  # a read-only view of a writable array is not remembered
    assert max_row_norm(readonly) == pytest.approx(6.0)


def test_non_finite_inputs_are_refused() -> None:
    c = np.eye(4, dtype=np.float32)
    bad = c.copy()
    bad[2, 1] = np.nan
    huge = c.copy()
    huge[0, 0] = np.inf
    for queries, corpus in ((bad, c), (c, bad), (huge, c)):
        with pytest.raises(ValueError, match="NaN or infinite"):
            ExactSearch().search(queries, corpus, 2)


@pytest.mark.parametrize("name", ["exact", "faiss", "faiss:hnsw"])
def test_no_queries_or_an_empty_corpus(name: str) -> None:
    if name.startswith("faiss"):
        pytest.importorskip("faiss")
    backend = make_backend(name)
    c = np.eye(4, dtype=np.float32)
    empty = np.zeros((0, 4), dtype=np.float32)
    assert backend.search(empty, c, 3).indices.shape == (0, 3)
    assert backend.search(c, empty, 3).indices.tolist() == [[-1, -1, -1]] * 4
    assert backend.search(c, [empty, c], 2).indices[:, 0].tolist() == [0, 1, 2, 3]


def test_make_backend_names() -> None:
    assert make_backend("exact").name == "exact"
    with pytest.raises(LookBenchError, match="--search: expected one of"):
        make_backend("annoy")


def test_faiss_flat_agrees_and_approximate_indexes_recall() -> None:
    pytest.importorskip("faiss")
    rng = np.random.default_rng(5)
    noise, gallery = _unit(rng, 12_000, 32), _unit(rng, 300, 32)
    q = _unit(rng, 50, 32) * 0.3 + gallery[:50]
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    exclude = np.zeros(len(gallery) + len(noise), dtype=bool)
    exclude[[0, 1, 2, 400]] = True
    exact = ExactSearch().search(q, [gallery, noise], 10, exclude=exclude)
    flat = make_backend("faiss").search(q, [gallery, noise], 10, exclude=exclude)
    assert not flat.indices[:, 0].tolist().count(0) and not np.isin(flat.indices, [0, 1, 2, 400]).any()
    np.testing.assert_array_equal(flat.indices, exact.indices)  # no near-ties in random data
    assert np.allclose(flat.scores, exact.scores, atol=1e-5)
    for kind in ("faiss:ivf", "faiss:hnsw"):
        backend = make_backend(kind)
        assert backend.exact is False and backend.describe()["index"] == kind.split(":")[1]
        found = backend.search(q, [gallery, noise], 10, exclude=exclude)
        recall = np.mean([len(set(a) & set(b)) / 10 for a, b in zip(found.indices, exact.indices, strict=True)])
        assert recall > 0.5 and not np.isin(found.indices, [0, 1, 2, 400]).any()


@pytest.mark.torch
@pytest.mark.parametrize(("extra", "max_candidates"), [(32, 2048), (1, 100), (1, 8)])
def test_torch_search_returns_the_exact_rows(extra: int, max_candidates: int) -> None:
    """Every path: enough candidates, retries with more, and the CPU fallback for the most tied queries."""
    pytest.importorskip("torch")
    from lookbench.search.torch_search import TorchSearch

    q, c = _tie_heavy(4)
    exclude = np.zeros(len(c), dtype=bool)
    exclude[[3, 460]] = True
    backend = TorchSearch(device="cpu", query_block=16, corpus_block=128, extra=extra, max_candidates=max_candidates)
    empty = np.zeros((0, q.shape[1]), dtype=np.float32)
    assert backend.search(empty, c, 5).indices.shape == (0, 5)
    assert (backend.search(q, empty, 5).indices == -1).all()
    for k in (1, 20):
        found = backend.search(q, [c[:300], c[300:]], k, exclude=exclude)
        expected = ExactSearch().search(q, c, k, exclude=exclude)
        np.testing.assert_array_equal(found.indices, expected.indices)
        np.testing.assert_array_equal(found.scores, expected.scores)


@pytest.mark.torch
def test_torch_search_ignores_a_lower_matmul_precision() -> None:
    torch = pytest.importorskip("torch")
    from lookbench.search.torch_search import TorchSearch

    rng = np.random.default_rng(6)
    q, c = _unit(rng, 20, 64), _unit(rng, 500, 64)
    before = torch.get_float32_matmul_precision()
    torch.set_float32_matmul_precision("medium")
    try:
        found = TorchSearch(device="cpu").search(q, c, 10)
        assert torch.get_float32_matmul_precision() == "medium"
    finally:
        torch.set_float32_matmul_precision(before)
    np.testing.assert_array_equal(found.indices, ExactSearch().search(q, c, 10).indices)
