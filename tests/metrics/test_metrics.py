"""Every metric on hand-computed rankings: noise rows, ties, no relevant item, empty attributes, outfits."""

from __future__ import annotations

import math

import numpy as np
import pytest

from lookbench.metrics.aggregate import SubsetValues, per_category, summarise
from lookbench.metrics.definitions import FineRule
from lookbench.metrics.outfits import cluster_ids, outfit_recall
from lookbench.metrics.relevance import Relevance
from lookbench.metrics.scoring import score_task
from lookbench.snapshot.labels import SplitLabels


def labels(rows: list[tuple[str, str, list[str], str]], outfits: list[str | None] | None = None) -> SplitLabels:
    return SplitLabels(
        category=[r[0] for r in rows],
        main_attribute=[r[1] for r in rows],
        other_attributes=[r[2] for r in rows],
        item_id=[r[3] for r in rows],
        outfit_key=outfits or [None] * len(rows),
    )


QUERIES = labels(
    [
        ("dress", "red", ["v-neck", "long sleeve"], "p1"),  # q0
        ("coat", "black", [], "p9"),  # q1: nothing relevant anywhere
        ("skirt", "", [], "p7"),  # q2: empty attribute set
    ]
)
CORPUS = labels(
    [
        ("dress", "blue", ["v-neck"], "p2"),  # g0
        ("dress", "red", ["long sleeve"], "p3"),  # g1
        ("skirt", "red", ["v-neck", "long sleeve"], "p4"),  # g2
        ("dress", "red", ["v-neck", "long sleeve", "pleated"], "p1"),  # g3: the query's own product
        ("dress", "red", ["v-neck", "long sleeve"], "p1"),  # n0: noise with perfect labels, never relevant
        ("skirt", "", [], "p7"),  # n1: noise
    ]
)
TOPK = np.array(
    [
        [4, 0, 2, 1, 3],
        [0, 1, 2, 3, 4],
        [5, 0, 2, 1, 3],
    ]
)
KS = (1, 3, 5)


@pytest.fixture
def relevance() -> Relevance:
    return Relevance.build(QUERIES, CORPUS, gallery_rows=4)


def test_flags(relevance: Relevance) -> None:
    assert relevance.coarse(TOPK)[0].tolist() == [False, True, False, True, True]
    assert relevance.fine(TOPK, FineRule.MAIN)[0].tolist() == [False, False, False, True, True]
    assert relevance.fine(TOPK, FineRule.STRICT)[0].tolist() == [False, False, False, False, True]
    assert relevance.item(TOPK)[0].tolist() == [False, False, False, False, True]
    assert not relevance.coarse(TOPK)[1].any()
    # q2: empty A_q, main "" matches no item under the main rule, but every same-category item under strict
    assert relevance.fine(TOPK, FineRule.MAIN)[2].tolist() == [False] * 5
    assert relevance.fine(TOPK, FineRule.STRICT)[2].tolist() == [False, False, True, False, False]


def test_recall_mrr_main_rule(relevance: Relevance) -> None:
    v = score_task(relevance, TOPK, KS, FineRule.MAIN).values
    assert v["coarse_recall@1"].tolist() == [0, 0, 0]
    assert v["coarse_recall@3"].tolist() == [1, 0, 1]
    assert v["fine_recall@3"].tolist() == [0, 0, 0]
    assert v["fine_recall@5"].tolist() == [1, 0, 0]
    assert v["item_recall@3"].tolist() == [0, 0, 0]
    assert v["item_recall@5"].tolist() == [1, 0, 0]
    assert v["mrr@5"].tolist() == [0.25, 0, 0]
    assert v["mrr@3"].tolist() == [0, 0, 0]


def test_mrr_strict_rule(relevance: Relevance) -> None:
    v = score_task(relevance, TOPK, KS, FineRule.STRICT).values
    assert v["mrr@5"].tolist() == [0.2, 0, 1 / 3]
    assert v["fine_recall@3"].tolist() == [0, 0, 1]


def test_ndcg_hand_computed(relevance: Relevance) -> None:
    v = score_task(relevance, TOPK, KS, FineRule.MAIN).values
    dcg5 = (1 / 3) / math.log2(3) + (2 / 3) / math.log2(5) + 1 / math.log2(6)
    idcg5 = 1 / math.log2(2) + (2 / 3) / math.log2(3) + (1 / 3) / math.log2(4)
    assert v["ndcg@5"][0] == pytest.approx(dcg5 / idcg5)
    dcg3 = (1 / 3) / math.log2(3)
    idcg3 = idcg5
    assert v["ndcg@3"][0] == pytest.approx(dcg3 / idcg3)
    assert v["ndcg@1"][0] == 0.0
    assert v["ndcg@5"][1] == 0.0  # IDCG = 0: defined as 0
    # q2: A_q empty -> gain 1 for the one same-category gallery item (g2, rank 3); ideal puts it first
    assert v["ndcg@5"][2] == pytest.approx(1 / math.log2(4))


def test_gains_of_noise_are_zero(relevance: Relevance) -> None:
    assert relevance.gains(TOPK)[0].tolist() == pytest.approx([0, 1 / 3, 0, 2 / 3, 1])
    ideal = relevance.ideal_gains(5)
    assert ideal[0].tolist() == pytest.approx([1, 2 / 3, 1 / 3, 0, 0])


@pytest.mark.parametrize(("vocabulary", "k"), [(6, 4), (70, 20), (300, 30)])
def test_ideal_gains_are_the_best_gains_of_the_gallery(vocabulary: int, k: int) -> None:
    """Against gains worked out with Python sets: empty A_q, other categories, noise, more rows than K and fewer,
    and vocabularies of one to five 64-bit words (intersections past 255)."""
    rng = np.random.default_rng(vocabulary)
    names = [f"a{i}" for i in range(vocabulary)]

    def rows(n: int, prefix: str) -> list[tuple[str, str, list[str], str]]:
        out = []
        for i in range(n):
            attrs = [str(a) for a in rng.choice(names, int(rng.integers(0, vocabulary + 1)), replace=False)]
            main = attrs[0] if attrs and rng.random() < 0.7 else ""
            out.append((str(rng.choice(["dress", "coat", "skirt"])), main, attrs[1:], f"{prefix}{i}"))
        return out

    queries, corpus, gallery = labels(rows(40, "q")), labels(rows(30, "g")), 25
    relevance = Relevance.build(queries, corpus, gallery_rows=gallery)
    for q in range(len(queries)):
        wanted = queries.attribute_set(q)
        gains = [
            (len(wanted & corpus.attribute_set(i)) / len(wanted) if wanted else 1.0)
            if corpus.category[i] == queries.category[q]
            else 0.0
            for i in range(gallery)
        ]
        best = sorted(gains, reverse=True)[:k]
        assert relevance.ideal_gains(k)[q].tolist() == best + [0.0] * (k - len(best))


def test_excluded_rows_are_never_relevant() -> None:
    excluded = np.array([False, False, False, True, False, False])
    rel = Relevance.build(QUERIES, CORPUS, gallery_rows=4, excluded=excluded)
    assert not rel.item(TOPK).any()
    assert rel.ideal_gains(2)[0].tolist() == pytest.approx([2 / 3, 1 / 3])


def test_labels_are_case_and_space_insensitive_via_reader_normalisation() -> None:
    from lookbench._util.labels import normalise_label

    assert normalise_label("  Blouse ") == "blouse"
    assert normalise_label(None) == ""


def test_outfit_recall() -> None:
    clusters = cluster_ids(["a", "a", "b", None, None])
    assert clusters.tolist() == [0, 0, 1, 2, 3]
    assert outfit_recall(np.array([1.0, 0.0, 1.0, 1.0, 0.0]), clusters).tolist() == [0, 1, 1, 0]


def test_summarise_overall_is_query_weighted() -> None:
    a = SubsetValues("real_studio_flat", {"m@1": np.array([1.0])}, np.array([0]), ["dress"])
    b = SubsetValues("real_streetlook", {"m@1": np.array([0.0, 0.0, 1.0])}, np.array([0, 0, 1]), ["a", "a", "b"])
    b = SubsetValues(b.name, b.values, b.clusters, b.categories, outfit_values=np.array([0.0, 1.0]))
    out = summarise([a, b], resamples=200, seed=3)
    assert out["overall"]["m@1"].value == pytest.approx(0.5)
    assert out["overall"]["m@1"].n == 4
    assert out["real_streetlook"]["outfit_recall@1"].value == 0.5
    assert out["real_streetlook"]["outfit_recall@1"].n == 2
    for scope in out.values():
        for est in scope.values():
            assert est.ci_low <= est.value <= est.ci_high
    assert summarise([a, b], resamples=200, seed=3) == out


def test_per_category() -> None:
    v = SubsetValues("aigen_studio", {"m@1": np.array([1.0, 0.0, 1.0])}, np.arange(3), ["x", "y", "x"])
    assert per_category(v) == {"x": {"m@1": (1.0, 2)}, "y": {"m@1": (0.0, 1)}}
