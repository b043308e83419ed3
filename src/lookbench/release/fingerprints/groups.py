"""Duplicate groups: connected components of the accepted pairs (union-find), each kept as its first image.

The outcome is a property of the set of accepted pairs and of a total order of the images (`Node.rank`), so it is
the same whatever order the pairs were found or decided in. Every other image of a group is dropped and names its
group's representative and the accepted pair that dropped it: its edge towards the representative on a shortest
path of accepted pairs (breadth-first from the representative, neighbours in rank order). An image dropped
without an accepted pair of its own with the representative (A~B, B~C, A!~C drops C through B) is a transitive
chain (`hops` above 1).
"""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

Rank = tuple[Any, ...]


@dataclass(frozen=True)
class Edge:
    """An accepted pair of nodes (node numbers), by which tier and at what distance."""

    a: int
    b: int
    tier: str
    distance: float


@dataclass(frozen=True)
class Resolved:
    """A node that is not its group's representative: the representative, the neighbour and pair that dropped it,
    and how many accepted pairs away from the representative it is."""

    node: int
    representative: int
    via: int
    tier: str
    distance: float
    hops: int


class UnionFind:
    """Disjoint sets of node numbers (path halving, union by size)."""

    def __init__(self) -> None:
        self.parent: dict[int, int] = {}
        self.size: dict[int, int] = {}

    def find(self, node: int) -> int:
        """The root of a node's set."""
        self.parent.setdefault(node, node)
        self.size.setdefault(node, 1)
        while self.parent[node] != node:
            self.parent[node] = self.parent[self.parent[node]]
            node = self.parent[node]
        return node

    def union(self, a: int, b: int) -> None:
        """Join two nodes' sets."""
        ra, rb = self.find(a), self.find(b)
        if ra == rb:
            return
        if self.size[ra] < self.size[rb]:
            ra, rb = rb, ra
        self.parent[rb] = ra
        self.size[ra] += self.size[rb]


def resolve(edges: Iterable[Edge], rank: dict[int, Rank]) -> list[Resolved]:
    """Every node of an accepted pair that is not the first (by `rank`) of its group, in rank order."""
    sets = UnionFind()
    neighbours: dict[int, list[tuple[Rank, int, Edge]]] = defaultdict(list)
    for edge in edges:
        sets.union(edge.a, edge.b)
        neighbours[edge.a].append((rank[edge.b], edge.b, edge))
        neighbours[edge.b].append((rank[edge.a], edge.a, edge))
    groups: dict[int, list[int]] = defaultdict(list)
    for node in neighbours:
        groups[sets.find(node)].append(node)
    resolved: list[Resolved] = []
    for members in groups.values():
        first = min(members, key=rank.__getitem__)
        hops, queue = {first: 0}, deque([first])
        while queue:
            node = queue.popleft()
            for _, other, edge in sorted(neighbours[node], key=lambda found: found[0]):
                if other not in hops:
                    hops[other] = hops[node] + 1
                    queue.append(other)
                    resolved.append(Resolved(other, first, node, edge.tier, edge.distance, hops[other]))
    return sorted(resolved, key=lambda r: rank[r.node])
