"""The dedup tables: faiss and scan searches give the brute-force answer on randomised codes (clusters of near
copies, ties, absent windows, every radius), and add() grows storage without rebuilding anything."""

from __future__ import annotations

import numpy as np
import pytest

from lookbench.release.fingerprints.crops import WINDOWS
from lookbench.release.fingerprints.tables import (
    SCAN_BLOCK,
    Backend,
    Codes,
    FaissWindows,
    phash_table,
    window_table,
)

BACKENDS: tuple[Backend, ...] = ("faiss", "scan")
W = len(WINDOWS)


def _bits(words: np.ndarray) -> np.ndarray:
    """Every bit of uint64 words as a 0/1 array (an independent route to Hamming distances)."""
    return np.unpackbits(np.ascontiguousarray(words, dtype=np.uint64).view(np.uint8), axis=-1)


def _near_copies(rng: np.random.Generator, base: np.ndarray, count: int, max_flips: int) -> np.ndarray:
    """`count` copies of `base` words, each with up to `max_flips` random bits flipped."""
    out = np.repeat(base[None], count, axis=0)
    bits = 64 * base.shape[-1]
    for row in out.reshape(count, -1):
        for bit in rng.choice(bits, rng.integers(0, max_flips + 1), replace=False):
            row[bit // 64] ^= np.uint64(1) << np.uint64(bit % 64)
    return out


def _phashes(rng: np.random.Generator, n: int) -> np.ndarray:
    """Random 256-bit hashes, a third of them near copies of a few originals (distances around any radius)."""
    codes = rng.integers(0, 2**63, size=(n, 4), dtype=np.uint64) * np.uint64(2) + rng.integers(0, 2, (n, 4)).astype(
        np.uint64
    )
    originals = codes[:3]
    for i in range(n // 3):
        codes[3 + i] = _near_copies(rng, originals[i % 3], 1, 60)[0]
    return codes


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("seed", range(6))
def test_phash_search_finds_exactly_the_entries_within_the_radius(backend: Backend, seed: int) -> None:
    rng = np.random.default_rng(seed)
    codes = _phashes(rng, 1500)
    table = phash_table(backend)
    for row in codes:
        table.add(row)
    queries = np.stack([_near_copies(rng, codes[rng.integers(0, 3)], 1, 40)[0], codes[rng.integers(0, len(codes))]])
    for radius in (0, 8, 15, 16, 24, 31, 40, 47, 48, 64):
        distances = np.abs(_bits(codes)[:, None, :].astype(int) - _bits(queries)[None].astype(int)).sum(axis=-1)
        expected = np.flatnonzero((distances <= radius).any(axis=1))
        assert np.array_equal(table.within(queries, radius), expected), radius


def _brute_force_nearest(
    query: np.ndarray, codes: np.ndarray, present: np.ndarray, radius: int, limit: int
) -> tuple[list[int], np.ndarray]:
    """The rows and pair distances the crop tier compared before the tables (every pair of every entry)."""
    qbits, cbits = _bits(query[:, None]), _bits(codes[:, :, None])
    pairs = (cbits[:, :, None, :] != qbits[None, None, :, :]).sum(axis=-1).reshape(len(codes), -1)
    nearest = np.where(present, pairs.min(axis=1), radius + 1)
    rows = [r for r in sorted(range(len(codes)), key=lambda r: (nearest[r], r)) if nearest[r] <= radius][:limit]
    return rows, pairs[rows]


def _windows(rng: np.random.Generator, n: int, tied: bool) -> tuple[np.ndarray, np.ndarray]:
    """Window codes of `n` entries: random, or (`tied`) mostly near copies of one entry; a tenth absent."""
    codes = rng.integers(0, 2**63, size=(n, W), dtype=np.uint64)
    if tied:
        codes[: n * 3 // 4] = _near_copies(rng, codes[0], n * 3 // 4, 6)
    return codes, rng.random(n) > 0.1


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(("seed", "tied"), [(0, False), (1, False), (2, True), (3, True)])
def test_window_search_ranks_entries_like_comparing_every_pair(backend: Backend, seed: int, tied: bool) -> None:
    rng = np.random.default_rng(seed)
    codes, present = _windows(rng, 400, tied)
    table = window_table(backend)
    for row, has in zip(codes, present, strict=True):
        table.add(row if has else None)
    for query in (_near_copies(rng, codes[0], 1, 10)[0], _near_copies(rng, codes[5], 1, 14)[0], codes[1] ^ codes[2]):
        for radius, limit in ((16, 16), (24, 16), (20, 3), (40, 64), (0, 16)):
            rows, pairs = table.nearest(query, radius, limit)
            expected_rows, expected_pairs = _brute_force_nearest(query, codes, present, radius, limit)
            assert rows.tolist() == expected_rows, (radius, limit)
            assert np.array_equal(pairs, expected_pairs)


def test_faiss_window_search_falls_back_to_the_scan_only_when_its_answer_is_not_provably_complete() -> None:
    rng = np.random.default_rng(7)
    table = FaissWindows()
    spread, _ = _windows(rng, 3000, tied=False)
    for row in spread:
        table.add(row)
    table.nearest(spread[10], 16, 16)
    assert table.scanned == 0
    tied = FaissWindows()
    same = np.full(W, spread[0, 0])
    for _ in range(40):
        tied.add(same)
    rows, _ = tied.nearest(same, 16, 16)
    assert rows.tolist() == list(range(16)) and tied.scanned == 1


def test_codes_grow_by_appending_and_keep_every_row() -> None:
    codes = Codes(3, capacity=2)
    rows = np.arange(3 * (SCAN_BLOCK + 5), dtype=np.uint64).reshape(-1, 3)
    for row in rows:
        codes.add(row)
    assert len(codes) == len(rows) and np.array_equal(codes.matrix, rows)


@pytest.mark.parametrize("backend", BACKENDS)
def test_empty_tables_find_nothing(backend: Backend) -> None:
    assert phash_table(backend).within(np.zeros((2, 4), np.uint64), 24).tolist() == []
    windows = window_table(backend)
    windows.add(None)
    rows, pairs = windows.nearest(np.zeros(W, np.uint64), 16, 16)
    assert rows.tolist() == [] and pairs.shape == (0, W * W)
