"""Duplicate groups: connected components of accepted pairs, each kept as its first image by a total order; every
other image names the image kept and the pair that dropped it, whatever order the pairs come in."""

from __future__ import annotations

import random
from datetime import UTC, datetime

from lookbench.release.fingerprints.groups import Edge, resolve
from lookbench.release.records import Sample
from lookbench.release.stages.dedup import rank_of

A, B, C, D, E = range(5)


def test_a_transitive_chain_drops_the_far_end_through_the_middle_and_says_so() -> None:
    # A~B and B~C accepted, A and C kept apart: C is dropped as a duplicate of A, by its pair with B, two hops away.
    rank = {A: (0,), B: (1,), C: (2,)}
    found = resolve([Edge(C, B, "crop", 9.0), Edge(B, A, "perceptual", 12.0)], rank)
    assert [(r.node, r.representative, r.via, r.tier, r.distance, r.hops) for r in found] == [
        (B, A, A, "perceptual", 12.0, 1),
        (C, A, B, "crop", 9.0, 2),
    ]


def test_the_outcome_does_not_depend_on_the_order_or_orientation_of_the_pairs() -> None:
    rank = {n: (n,) for n in range(5)}
    edges = [Edge(B, A, "exact", 0.0), Edge(C, B, "crop", 3.0), Edge(D, A, "crop", 5.0), Edge(D, C, "exact", 0.0)]
    first = resolve(edges, rank)
    # D has a pair with A itself: one hop, through A, though its pair with C is also accepted.
    assert [(r.node, r.via, r.hops) for r in first] == [(B, A, 1), (C, B, 2), (D, A, 1)]
    for seed in range(5):
        shuffled = random.Random(seed).sample(edges, len(edges))
        flipped = [Edge(e.b, e.a, e.tier, e.distance) if seed % 2 else e for e in shuffled]
        assert resolve(flipped, rank) == first


def test_separate_groups_each_keep_their_own_first_image() -> None:
    rank = {A: (3,), B: (1,), C: (0,), D: (2,)}
    found = resolve([Edge(A, B, "exact", 0.0), Edge(C, D, "exact", 0.0)], rank)
    assert {(r.node, r.representative) for r in found} == {(A, B), (D, C)}


def sample(source: str, seen: int, sample_id: str) -> Sample:
    at = datetime(2026, 5, 1, seen, tzinfo=UTC)
    return Sample(source, "feed", sample_id, b"", at, "dress", "red", [], "cc0", sample_id=sample_id)


def test_the_first_image_is_the_earliest_seen_then_the_preferred_source_then_the_id() -> None:
    samples = [sample("zeta", 5, "z1"), sample("alpha", 5, "a1"), sample("beta", 5, "b1"), sample("beta", 4, "b0")]
    priority = ["beta", "zeta"]
    ranks = {row: rank_of(s, row, priority) for row, s in enumerate(samples)}
    order = sorted(ranks, key=ranks.__getitem__)
    assert [samples[row].sample_id for row in order] == ["b0", "b1", "z1", "a1"]
    # Without a priority list, ids break the tie among images seen at the same time.
    plain = {row: rank_of(s, row, []) for row, s in enumerate(samples)}
    assert [samples[row].sample_id for row in sorted(plain, key=plain.__getitem__)] == ["b0", "a1", "b1", "z1"]
    edges = [Edge(0, 1, "exact", 0.0), Edge(1, 2, "exact", 0.0), Edge(2, 3, "exact", 0.0)]
    assert {r.representative for r in resolve(edges, ranks)} == {3}
    # History images (rank 0 first) come before any batch image, however early it was seen.
    ranks[9] = (0, 42)
    assert {r.representative for r in resolve([*edges, Edge(0, 9, "crop", 4.0)], ranks)} == {9}
