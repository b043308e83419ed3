"""The tie rule: rows of equal score are ordered by a hash of their item id, never by source or corpus position."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from conftest import make_row, write_snapshot
from lookbench.cli.main import app
from lookbench.search import Corpus, ExactSearch, make_backend
from lookbench.search.candidates import CandidatePool, score_margin
from lookbench.search.ties import tie_keys

runner = CliRunner()


def _hash_key(side: str, item: str, occurrence: int = 0) -> int:
    """The documented key, computed with hashlib alone: blake2b-64 of `side NUL item_ID NUL occurrence`, big-endian."""
    text = f"{side}\0{item}\0{occurrence}"
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "big")


def _mixed(query_key: int, row_key: int) -> int:
    """The documented pair order in Python integers: splitmix64's finaliser of the XOR of the two keys."""
    mask = (1 << 64) - 1
    z = query_key ^ row_key
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & mask
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
    return z ^ (z >> 31)


def _keys(ids: list[str], side: str) -> list[int]:
    seen: dict[str, int] = {}
    keys = []
    for item in ids:
        keys.append(_hash_key(side, item, seen.get(item, 0)))
        seen[item] = seen.get(item, 0) + 1
    return keys


def _tied(rng: np.random.Generator, n: int, d: int = 16) -> np.ndarray:
    """Unit vectors with four entries of +-0.5: every dot product is a multiple of 1/4, so ties are everywhere."""
    x = np.zeros((n, d), dtype=np.float32)
    for row in x:
        row[rng.choice(d, 4, replace=False)] = rng.choice([-0.5, 0.5], 4)
    return x


def _by_hash_reference(q: np.ndarray, q_ids: list[str], c: np.ndarray, ids: list[str], k: int) -> np.ndarray:
    """Brute force: float64 products rounded to float32, sorted by (-score, mixed hashlib keys, row)."""
    scores = (q.astype(np.float64) @ c.astype(np.float64).T).astype(np.float32)
    q_keys, c_keys = _keys(q_ids, "query"), _keys(ids, "corpus")
    return np.array(
        [
            sorted(range(len(c)), key=lambda j: (-float(scores[i, j]), _mixed(q_keys[i], c_keys[j]), j))[:k]
            for i in range(len(q))
        ]
    )


def _constant_snapshot(root: Path, queries: int, gallery: int, noise: int) -> tuple[Path, Path]:
    """A feature as blind as image size on images of one size: every query and corpus row has the same vector."""
    spec = {
        "real_studio_flat": {
            # every query's own item is in the gallery: a rule that favoured it would leak the label
            "query": [make_row(f"g{i % gallery}", "dress", "red") for i in range(queries)],
            "gallery": [make_row(f"g{i}", "dress", "red") for i in range(gallery)],
        },
        "noise": {"gallery": [make_row(f"n{i}", "dress", "red") for i in range(noise)]},
    }
    snap = write_snapshot(root / "snap", spec)
    vectors = root / "vectors"
    for key, rows in (
        ("real_studio_flat/query", queries),
        ("real_studio_flat/gallery", gallery),
        ("noise/gallery", noise),
    ):
        (vectors / key).parent.mkdir(parents=True, exist_ok=True)
        np.save(vectors / f"{key}.npy", np.ones((rows, 4), dtype=np.float32))
    return snap, vectors


def test_a_constant_feature_ranks_distractors_first_about_as_often_as_they_fill_the_corpus(tmp_path: Path) -> None:
    queries, gallery, noise = 240, 20, 180
    snap, vectors = _constant_snapshot(tmp_path, queries, gallery, noise)
    out = tmp_path / "res.json"
    args = ["eval", "-s", str(snap), "-m", f"embeddings:{vectors}", "-o", str(out), "--resamples", "20"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    metrics = json.loads(out.read_text())["metrics"]["overall"]
    share = metrics["distractor_share@1"]["value"]
    # every row ties for every query: a source-blind rule picks a noise row with p = the noise share of the corpus
    p = noise / (gallery + noise)
    assert abs(share - p) < 4.5 * np.sqrt(p * (1 - p) / queries), share  # 4.5 binomial standard deviations
    # and the winners are exactly those of the hash rule, computed with hashlib
    g_keys, n_keys = (
        _keys([f"g{i}" for i in range(gallery)], "corpus"),
        _keys([f"n{i}" for i in range(noise)], "corpus"),
    )
    wins = 0
    for qk in _keys([f"g{i % gallery}" for i in range(queries)], "query"):
        wins += min(_mixed(qk, key) for key in n_keys) < min(_mixed(qk, key) for key in g_keys)
    assert share == pytest.approx(wins / queries)
    # the query's own item wins its tie about 1 time in 200 (expected 1.2 of 240 queries), not every time
    assert metrics["item_recall@1"]["value"] <= 8 / queries


def test_tie_winner_does_not_depend_on_row_order_or_on_which_source_comes_first() -> None:
    rng = np.random.default_rng(3)
    gallery, noise = _tied(rng, 150), _tied(rng, 300)
    g_ids, n_ids = [f"item-{i}" for i in range(150)], [f"noise-{i}" for i in range(300)]
    q, q_ties = _tied(rng, 40), tie_keys([f"query-{i}" for i in range(40)], "query")
    search = ExactSearch(query_block=16, corpus_block=64)

    def ranked_ids(parts: list[np.ndarray], ids: list[str]) -> tuple[list[list[str]], np.ndarray]:
        found = search.search(q, Corpus(parts, ties=tie_keys(ids, "corpus")), 20, query_ties=q_ties)
        return [[ids[r] for r in row] for row in found.indices], found.scores

    first, scores = ranked_ids([gallery, noise], g_ids + n_ids)
    swapped, swapped_scores = ranked_ids([noise, gallery], n_ids + g_ids)
    shuffle = rng.permutation(450)
    rows, ids = np.concatenate([gallery, noise]), g_ids + n_ids
    shuffled, shuffled_scores = ranked_ids([rows[shuffle]], [ids[i] for i in shuffle])
    assert first == swapped == shuffled
    np.testing.assert_array_equal(scores, swapped_scores)
    np.testing.assert_array_equal(scores, shuffled_scores)
    # the data really ties across sources: in some query's top 20 a gallery row and a noise row share a score
    groups = [
        {item.split("-")[0] for item, value in zip(row, row_scores, strict=True) if value == tied}
        for row, row_scores in zip(first, scores, strict=True)
        for tied in set(row_scores.tolist())
    ]
    assert {"item", "noise"} in groups


def test_tie_winner_is_the_lower_hash_of_the_ids() -> None:
    rng = np.random.default_rng(5)
    c = _tied(rng, 500)
    ids = [f"sku-{i % 400}" for i in range(500)]  # 100 ids held by two rows: the second gets occurrence 1
    q = np.concatenate([_tied(rng, 30), np.zeros((1, 16), dtype=np.float32)])  # the last query ties everything
    q_ids = [f"look-{i % 20}" for i in range(31)]  # queries sharing an id get occurrences too
    q_ties = tie_keys(q_ids, "query")
    corpus = Corpus([c[:200], c[200:]], ties=tie_keys(ids, "corpus"))
    expected = _by_hash_reference(q, q_ids, c, ids, 25)
    for backend in (ExactSearch(), ExactSearch(query_block=7, corpus_block=33, workers=3)):
        np.testing.assert_array_equal(backend.search(q, corpus, 25, query_ties=q_ties).indices, expected)
    # a pool crowded past its cap is cut to the same exact top
    pool = CandidatePool(q, q_ties, corpus, 25, score_margin(16, 1.0, 1.0), cap=40)
    for offset, block in corpus.blocks(50):
        pool.offer(q @ block.T, offset)
    np.testing.assert_array_equal(pool.result().indices, expected)
    keys = [_hash_key("corpus", item, 1 if i >= 400 else 0) for i, item in enumerate(ids)]
    last = _hash_key("query", "look-10", 1)
    assert expected[-1].tolist() == sorted(range(500), key=lambda j: _mixed(last, keys[j]))[:25]


def test_faiss_flat_merges_the_parts_by_the_tie_keys() -> None:
    pytest.importorskip("faiss")
    c = np.tile(np.array([[0.6, 0.8]], dtype=np.float32), (40, 1))
    ids = [f"row-{i}" for i in range(40)]
    q = np.array([[1.0, 0.0]], dtype=np.float32)
    # every row ties: within a part faiss keeps its own order, so with one row per part the merge alone decides
    corpus = Corpus([c[i : i + 1] for i in range(40)], ties=tie_keys(ids, "corpus"))
    found = make_backend("faiss").search(q, corpus, 5, query_ties=tie_keys(["look"], "query"))
    query = _hash_key("query", "look")
    assert found.indices[0].tolist() == sorted(range(40), key=lambda i: _mixed(query, _hash_key("corpus", ids[i])))[:5]


def test_without_ties_the_ranking_is_the_plain_score_order() -> None:
    rng = np.random.default_rng(11)
    c = rng.normal(size=(3000, 32)).astype(np.float32)
    c /= np.linalg.norm(c, axis=1, keepdims=True)
    q = rng.normal(size=(50, 32)).astype(np.float32)
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    scores = (q.astype(np.float64) @ c.astype(np.float64).T).astype(np.float32)
    # the authors' evaluator ranks by a descending argsort of the similarities: with no ties, one order
    expected = np.argsort(-scores, axis=1)[:, :100]
    top = np.take_along_axis(scores, np.argsort(-scores, axis=1)[:, :101], axis=1)
    assert (np.diff(top, axis=1) < 0).all()  # no exact ties within (or just past) any query's top 100
    ids = [f"x{i}" for i in range(3000)]
    q_ties = tie_keys([f"q{i}" for i in range(50)], "query")
    corpus = Corpus([c[:1000], c[1000:]], ties=tie_keys(ids, "corpus"))
    keyed = ExactSearch().search(q, corpus, 100, query_ties=q_ties)
    by_row = ExactSearch().search(q, c, 100)
    np.testing.assert_array_equal(keyed.indices, expected)
    np.testing.assert_array_equal(by_row.indices, expected)
    np.testing.assert_array_equal(keyed.scores, np.take_along_axis(scores, expected, axis=1))


def test_tie_keys_must_cover_every_row() -> None:
    c = np.zeros((5, 4), dtype=np.float32)
    with pytest.raises(ValueError, match="one key per row"):
        Corpus([c[:2], c[2:]], ties=tie_keys(["a", "b", "c"], "corpus"))
    with pytest.raises(ValueError, match="one key per query"):
        ExactSearch().search(c[:2], c, 1, query_ties=tie_keys(["a"], "query"))


@pytest.mark.torch
@pytest.mark.parametrize(("extra", "max_candidates"), [(32, 2048), (1, 8)])
def test_torch_search_breaks_ties_by_the_same_keys(extra: int, max_candidates: int) -> None:
    """Enough candidates, and the CPU fallback for queries with more ties than `max_candidates`."""
    pytest.importorskip("torch")
    from lookbench.search.torch_search import TorchSearch

    rng = np.random.default_rng(7)
    c = _tied(rng, 400)
    ids = [f"sku-{i}" for i in range(400)]
    q = np.concatenate([_tied(rng, 20), np.zeros((1, 16), dtype=np.float32)])
    q_ids = [f"look-{i}" for i in range(21)]
    backend = TorchSearch(query_block=8, corpus_block=128, extra=extra, max_candidates=max_candidates)
    corpus = Corpus([c[:150], c[150:]], ties=tie_keys(ids, "corpus"))
    found = backend.search(q, corpus, 20, query_ties=tie_keys(q_ids, "query"))
    np.testing.assert_array_equal(found.indices, _by_hash_reference(q, q_ids, c, ids, 20))
