"""The pHash tier's multi-index hashing: exactly the entries within the radius (codes at the radius and one bit
beyond, flips spread to the pigeonhole's limit), levels merged like levels built at once, the scan only when the
radius is too wide or the candidates too many."""

from __future__ import annotations

import numpy as np
import pytest

from lookbench.search.duplicates.multihash import SUBSTRING_BITS, SUBSTRINGS, TAIL, Level
from lookbench.search.duplicates.tables import HashedPhashes

RADII = (0, 1, 8, 15, 16, 17, 23, 24, 25, 31, 32, 33, 47, 48, 63)


def _distances(codes: np.ndarray, query: np.ndarray) -> np.ndarray:
    """Hamming distances counted bit by bit (independent of the popcount the tables use)."""
    bits = np.unpackbits(np.ascontiguousarray(codes, dtype=np.uint64).view(np.uint8), axis=-1)
    return (bits != np.unpackbits(query.astype(np.uint64).view(np.uint8))[None]).sum(axis=1)


def _at_distance(rng: np.random.Generator, query: np.ndarray, distance: int, spread: bool) -> np.ndarray:
    """A code `distance` bits from `query`: with `spread`, as many 16-bit substrings as possible each differ by
    radius // 16 + 1 bits (the fewest substrings left within the probed flips), else random bits."""
    code = query.copy()
    flips = distance // SUBSTRING_BITS + 1
    if spread:
        order = rng.permutation(SUBSTRINGS)
        chosen: list[int] = []
        left = distance
        for substring in order:
            take = min(flips, left)
            bits = rng.choice(SUBSTRING_BITS, take, replace=False)
            chosen.extend(int(substring) * SUBSTRING_BITS + int(b) for b in bits)
            left -= take
            if left == 0:
                break
    else:
        chosen = [int(b) for b in rng.choice(64 * len(code), distance, replace=False)]
    for bit in chosen:
        code[bit // 64] ^= np.uint64(1) << np.uint64(bit % 64)
    return code


def _table(rng: np.random.Generator, queries: np.ndarray, spread: bool) -> tuple[HashedPhashes, np.ndarray]:
    """Random codes plus, for every query and radius, codes at the radius and one bit beyond; added in bulk and one
    by one so that several levels and a tail hold them."""
    near = [_at_distance(rng, q, d + extra, spread) for q in queries for d in RADII for extra in (0, 1)]
    codes = np.concatenate([rng.integers(0, 2**64, (5 * TAIL, 4), dtype=np.uint64, endpoint=False), np.stack(near)])
    codes = codes[rng.permutation(len(codes))]
    table = HashedPhashes()
    bulk = 7 * TAIL // 2
    table.add(codes[:bulk])
    for start in range(bulk, len(codes) - 5, 700):
        table.add(codes[start : min(start + 700, len(codes) - 5)])
    for row in codes[len(codes) - 5 :]:
        table.add(row)
    return table, codes


@pytest.mark.parametrize(("seed", "spread"), [(0, True), (1, True), (2, False), (3, False)])
def test_hashed_search_returns_exactly_the_entries_within_the_radius(seed: int, spread: bool) -> None:
    rng = np.random.default_rng(seed)
    queries = rng.integers(0, 2**64, (2, 4), dtype=np.uint64, endpoint=False)
    table, codes = _table(rng, queries, spread)
    assert len(table._hash.levels) >= 2 and table._hash.indexed < len(codes)
    distances = np.minimum(_distances(codes, queries[0]), _distances(codes, queries[1]))
    for radius in RADII:
        expected = np.flatnonzero(distances <= radius)
        assert np.any(distances == radius) and np.any(distances == radius + 1)
        assert table.within(queries, radius).tolist() == expected.tolist(), radius
        assert (
            table.within(queries[1:], radius).tolist()
            == np.flatnonzero(_distances(codes, queries[1]) <= radius).tolist()
        )
    assert table.scanned == 0


def test_a_radius_too_wide_to_probe_and_a_crowd_of_near_copies_are_scanned_with_the_same_answer() -> None:
    rng = np.random.default_rng(5)
    base = rng.integers(0, 2**64, 4, dtype=np.uint64, endpoint=False)
    crowd = np.stack([_at_distance(rng, base, int(d), False) for d in rng.integers(0, 6, 3 * TAIL)])
    table = HashedPhashes()
    table.add(crowd)
    found = table.within(base[None], 4)
    assert found.tolist() == np.flatnonzero(_distances(crowd, base) <= 4).tolist() and table.scanned == 1
    wide = table.within(base[None] ^ np.uint64(0xFFFF), 70)
    assert wide.tolist() == np.flatnonzero(_distances(crowd, base ^ np.uint64(0xFFFF)) <= 70).tolist()
    assert table.scanned == 2
    assert table.within(base[None], -1).tolist() == []


def test_merged_levels_group_entries_like_a_level_built_at_once() -> None:
    rng = np.random.default_rng(9)
    codes = rng.integers(0, 2**64, (3000, 4), dtype=np.uint64, endpoint=False)
    codes[1000:1100] = codes[0]
    once = Level.of(codes, 0)
    merged = Level.of(codes[:1200], 0).merged(Level.of(codes[1200:], 1200))
    assert np.array_equal(once.offsets, merged.offsets) and np.array_equal(once.ids, merged.ids)
    assert len(merged) == 3000
    key = int(codes[0].view(np.uint16)[3]) | 3 << SUBSTRING_BITS
    holders = merged.ids[merged.offsets[key] : merged.offsets[key + 1]]
    sharing = np.flatnonzero(codes.view(np.uint16)[:, 3] == codes[0].view(np.uint16)[3])
    assert holders.tolist() == sharing.tolist() and {0, *range(1000, 1100)} <= set(sharing.tolist())
