"""The dedup tables: multi-index hashing, faiss and scan searches give the brute-force answer on randomised codes
(clusters of near copies, ties, absent windows, every radius) under both crop-candidate rules, and add() grows
storage without rebuilding anything."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from lookbench.search.duplicates import tables
from lookbench.search.duplicates.crops import FULL, GREY_BYTES, WINDOWS, CropPairs
from lookbench.search.duplicates.hashes import to_words
from lookbench.search.duplicates.history import FINGERPRINT_SCHEMA, stored_codes, table_codes
from lookbench.search.duplicates.tables import (
    SCAN_BLOCK,
    Backend,
    Codes,
    FaissWindows,
    HashedWindows,
    phash_table,
    window_table,
)

BACKENDS: tuple[Backend, ...] = ("faiss", "numpy", "scan")
W = len(WINDOWS)


@pytest.fixture(params=[None, 1], ids=["every-pair", "quarter-within-1"])
def flips(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> int | None:
    """The crop-candidate rule the window tables are built under (`tables.CROP_CANDIDATE_FLIPS`)."""
    monkeypatch.setattr(tables, "CROP_CANDIDATE_FLIPS", request.param)
    return request.param


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
    query: np.ndarray,
    codes: np.ndarray,
    present: np.ndarray,
    radius: int,
    limit: int,
    allowed: CropPairs = "all",
    flips: int | None = None,
) -> tuple[list[int], np.ndarray]:
    """The rows and pair distances the crop tier compares (every pair of every entry): the entries with a counted
    pair within the radius, ranked by their nearest allowed pair. Allowed: with `full-frame`, pairs whose query or
    indexed window is the full frame; counted: of those, with `flips`, pairs with a 16-bit quarter (two bytes of
    the little-endian word) within `flips` differing bits."""
    qbits, cbits = _bits(query[:, None]), _bits(codes[:, :, None])
    differ = cbits[:, :, None, :] != qbits[None, None, :, :]  # (entry, its window, query window, bit)
    pairs = differ.sum(axis=-1)
    frame = WINDOWS.index(FULL)
    indexed_window, query_window = np.indices((W, W))
    counted = (indexed_window == frame) | (query_window == frame) if allowed == "full-frame" else True
    allowed_pairs = np.broadcast_to(counted, pairs.shape)
    if flips is not None:
        counted = counted & (differ.reshape(*pairs.shape, 4, 16).sum(axis=-1).min(axis=-1) <= flips)
    candidate = np.where(counted, pairs, 65).reshape(len(codes), -1).min(axis=1) <= radius
    ranked_by = np.where(allowed_pairs, pairs, 65).reshape(len(codes), -1)
    pairs = pairs.reshape(len(codes), -1)
    nearest = np.where(present & candidate, ranked_by.min(axis=1), radius + 1)
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
def test_window_search_ranks_entries_like_comparing_every_counted_pair(
    backend: Backend, seed: int, tied: bool, flips: int | None
) -> None:
    rng = np.random.default_rng(seed)
    codes, present = _windows(rng, 400, tied)
    table = window_table(backend)
    for row, has in zip(codes, present, strict=True):
        table.add(row[None], np.array([has]))
    for query in (_near_copies(rng, codes[0], 1, 10)[0], _near_copies(rng, codes[5], 1, 14)[0], codes[1] ^ codes[2]):
        for radius, limit in ((16, 16), (24, 16), (20, 3), (40, 64), (0, 16)):
            rows, pairs = table.nearest(query, radius, limit)
            expected_rows, expected_pairs = _brute_force_nearest(query, codes, present, radius, limit, "all", flips)
            assert rows.tolist() == expected_rows, (radius, limit)
            assert np.array_equal(pairs, expected_pairs)


def _crossed_windows(rng: np.random.Generator, query: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Random window codes of `n` entries, most with one window a near copy of one of the query's windows (the
    full frame on either side, on both, or on neither: a crop of the entry, of the query, a copy, or two crops of
    one photo); a tenth absent."""
    codes, present = _windows(rng, n, tied=False)
    for row in codes[: n * 3 // 4]:
        mine, theirs = rng.integers(0, W, 2)
        row[mine] = _near_copies(rng, query[theirs : theirs + 1], 1, 20)[0, 0]
    return codes, present


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("allowed", ["all", "full-frame"])
@pytest.mark.parametrize("seed", range(4))
def test_window_search_over_a_pair_set_ranks_entries_like_comparing_those_pairs(
    backend: Backend, allowed: CropPairs, seed: int, flips: int | None
) -> None:
    rng = np.random.default_rng(100 + seed)
    query = rng.integers(0, 2**63, size=W, dtype=np.uint64)
    codes, present = _crossed_windows(rng, query, 700)
    table = window_table(backend)
    table.add(codes[:350], present[:350])
    for row, has in zip(codes[350:], present[350:], strict=True):
        table.add(row[None], np.array([has]))
    for radius, limit in ((16, 16), (12, 16), (20, 3), (40, 64), (0, 16), (64, 700)):
        rows, pairs = table.nearest(query, radius, limit, allowed)
        expected_rows, expected_pairs = _brute_force_nearest(query, codes, present, radius, limit, allowed, flips)
        assert rows.tolist() == expected_rows, (radius, limit)
        assert np.array_equal(pairs, expected_pairs)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("allowed", ["all", "full-frame"])
def test_searching_many_queries_together_ranks_each_like_comparing_its_pairs(
    backend: Backend, allowed: CropPairs, flips: int | None
) -> None:
    rng = np.random.default_rng(11)
    query = rng.integers(0, 2**63, size=W, dtype=np.uint64)
    codes, present = _crossed_windows(rng, query, 600)
    table = window_table(backend)
    table.add(codes, present)
    queries = np.stack([query, codes[3], _near_copies(rng, codes[7], 1, 12)[0], codes[1] ^ codes[2], codes[9]])
    for radius, limit in ((16, 16), (12, 4), (40, 64), (0, 16)):
        found = table.nearest_many(queries, radius, limit, allowed)
        expected = [_brute_force_nearest(q, codes, present, radius, limit, allowed, flips)[0] for q in queries]
        assert [rows.tolist() for rows in found] == expected, (radius, limit)


@pytest.mark.parametrize("backend", BACKENDS)
def test_full_frame_pairs_find_crops_either_way_but_not_two_crops_of_one_photo(
    backend: Backend, flips: int | None
) -> None:
    rng = np.random.default_rng(5)
    query = rng.integers(0, 2**63, size=W, dtype=np.uint64)
    codes = rng.integers(0, 2**63, size=(4, W), dtype=np.uint64)
    frame = WINDOWS.index(FULL)
    other = (frame + 3) % W
    codes[1, other] = query[frame]  # the query is a crop of entry 1
    codes[2, frame] = query[other]  # entry 2 is a crop of the query
    codes[3, other] = query[(other + 1) % W]  # entry 3 and the query are two crops of one photo
    table = window_table(backend)
    table.add(codes, np.ones(4, bool))
    assert table.nearest(query, 16, 16, "all")[0].tolist() == [1, 2, 3]
    assert table.nearest(query, 16, 16, "full-frame")[0].tolist() == [1, 2]


def _spread(code: np.uint64, per_quarter: tuple[int, int, int, int]) -> np.uint64:
    """`code` with the lowest `per_quarter[q]` bits of its 16-bit quarter q flipped."""
    mask = sum(((1 << bits) - 1) << (16 * q) for q, bits in enumerate(per_quarter))
    return code ^ np.uint64(mask)


@pytest.mark.parametrize("backend", ["faiss", "numpy"])
def test_the_quarter_rule_counts_every_pair_within_seven_bits_and_no_pair_spread_wider(
    backend: Backend, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tables, "CROP_CANDIDATE_FLIPS", 1)
    rng = np.random.default_rng(9)
    query = rng.integers(0, 2**63, size=W, dtype=np.uint64)
    codes = rng.integers(0, 2**63, size=(3000, W), dtype=np.uint64)
    # Entry 1: seven bits off, spread as evenly as the quarters allow (one quarter keeps a single flip); entry 2:
    # three bits off; entry 3: eight bits off, two per quarter (no quarter within one flip).
    codes[1, 4] = _spread(query[2], (2, 2, 2, 1))
    codes[2, 0] = _spread(query[0], (0, 3, 0, 0))
    codes[3, 7] = _spread(query[5], (2, 2, 2, 2))
    table = window_table(backend)
    table.add(codes, np.ones(len(codes), bool))
    rows = table.nearest(query, 8, 16)[0].tolist()
    assert 1 in rows and 2 in rows and 3 not in rows
    assert rows == _brute_force_nearest(query, codes, np.ones(len(codes), bool), 8, 16, "all", 1)[0]


def test_hashed_window_search_falls_back_to_the_scan_only_when_the_probes_find_more_pairs_than_codes() -> None:
    rng = np.random.default_rng(7)
    spread, _ = _windows(rng, 3000, tied=False)
    table = HashedWindows()
    table.add(spread, np.ones(len(spread), bool))
    table.nearest_many(spread[:20], 16, 16)
    assert table.scanned == 0
    tied = HashedWindows()
    same = np.full(W, spread[0, 0])
    tied.add(np.repeat(same[None], 400, axis=0), np.ones(400, bool))
    rows, _ = tied.nearest(same, 16, 16)
    assert rows.tolist() == list(range(16)) and tied.scanned == 1


@pytest.mark.parametrize("allowed", ["all", "full-frame"])
def test_faiss_window_search_falls_back_to_the_scan_only_when_its_answer_is_not_provably_complete(
    allowed: CropPairs,
) -> None:
    rng = np.random.default_rng(7)
    table = FaissWindows()
    spread, _ = _windows(rng, 3000, tied=False)
    table.add(spread, np.ones(len(spread), bool))
    table.nearest(spread[10], 16, 16, allowed)
    assert table.scanned == 0
    tied = FaissWindows()
    same = np.full(W, spread[0, 0])
    for _ in range(40):
        tied.add(same[None], np.array([True]))
    rows, _ = tied.nearest(same, 16, 16, allowed)
    assert rows.tolist() == list(range(16)) and tied.scanned == 1
    # Searched with a spread query, the tied one still falls back alone.
    many = tied.nearest_many(np.stack([spread[5], same]), 16, 16, allowed)
    assert many[1].tolist() == list(range(16)) and tied.scanned == 2


def test_codes_grow_by_appending_and_keep_every_row() -> None:
    codes = Codes(3, capacity=2)
    rows = np.arange(3 * (SCAN_BLOCK + 5), dtype=np.uint64).reshape(-1, 3)
    for row in rows:
        codes.add(row)
    assert len(codes) == len(rows) and np.array_equal(codes.matrix, rows)


@pytest.mark.parametrize("backend", BACKENDS)
def test_empty_tables_find_nothing(backend: Backend, flips: int | None) -> None:
    assert phash_table(backend).within(np.zeros((2, 4), np.uint64), 24).tolist() == []
    windows = window_table(backend)
    windows.add(np.ones((1, W), np.uint64), np.array([False]))
    rows, pairs = windows.nearest(np.zeros(W, np.uint64), 16, 16)
    assert rows.tolist() == [] and pairs.shape == (0, W * W)


@pytest.mark.parametrize("backend", BACKENDS)
def test_adding_entries_in_bulk_answers_like_adding_them_one_by_one(backend: Backend, flips: int | None) -> None:
    rng = np.random.default_rng(11)
    codes, _ = _windows(rng, 300, tied=True)
    phashes = _phashes(rng, 300)
    one_by_one, bulk = window_table(backend), window_table(backend)
    single_phashes, bulk_phashes = phash_table(backend), phash_table(backend)
    absent = np.array([False])
    one_by_one.add(np.ones((1, W), np.uint64), absent)
    bulk.add(np.ones((1, W), np.uint64), absent)
    for row, words in zip(codes, phashes, strict=True):
        one_by_one.add(row[None], np.array([True]))
        single_phashes.add(words)
    bulk.add(codes, np.ones(len(codes), bool))
    bulk_phashes.add(phashes)
    for query in codes[:20]:
        rows, pairs = bulk.nearest(query, 16, 16)
        expected_rows, expected_pairs = one_by_one.nearest(query, 16, 16)
        assert rows.tolist() == expected_rows.tolist() and np.array_equal(pairs, expected_pairs)
        shifted = [r + 1 for r in _brute_force_nearest(query, codes, np.ones(300, bool), 16, 16, "all", flips)[0]]
        assert rows.tolist() == shifted
    for query in phashes[:20]:
        assert np.array_equal(bulk_phashes.within(query[None], 24), single_phashes.within(query[None], 24))


def test_cache_columns_convert_to_the_codes_each_row_holds() -> None:
    rng = np.random.default_rng(3)
    phashes = [bytes(rng.integers(0, 256, 32, dtype=np.uint8)).hex() for _ in range(5)]
    windows = [None if i == 2 else bytes(rng.integers(0, 256, 8 * W, dtype=np.uint8)) for i in range(5)]
    greys = [None if i == 2 else bytes(rng.integers(0, 256, GREY_BYTES, dtype=np.uint8)) for i in range(5)]
    aspects = rng.uniform(0.01, 30, 5).tolist()
    columns = {"key": list("abcde"), "sha256": ["0" * 64] * 5, "phash": phashes, "windows": windows}
    table = pa.Table.from_pydict({**columns, "grey": greys, "aspect": aspects}, schema=FINGERPRINT_SCHEMA).slice(1)
    words, codes, present = table_codes(table)
    assert np.array_equal(words, to_words(phashes[1:]))
    assert present.tolist() == [True, False, True, True]
    for got, raw in zip(codes, windows[1:], strict=True):
        expected = np.zeros(W, np.uint64) if raw is None else np.frombuffer(raw, ">u8").astype(np.uint64)
        assert np.array_equal(got, expected)
    stored = stored_codes(table)
    assert stored.grey.shape == (4, GREY_BYTES) and stored.aspect.tolist() == [[a] for a in aspects[1:]]
    for got, grey in zip(stored.grey, greys[1:], strict=True):
        assert bytes(got) == (bytes(GREY_BYTES) if grey is None else grey)
