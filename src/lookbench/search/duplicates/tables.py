"""Appendable tables of binary codes and their exact Hamming searches, one per dedup tier.

Each table keeps its codes in a growable uint64 matrix (amortised O(1) `add`, nothing rebuilt on the next look-up).
The `scan` tables search it in blocks (exact; transient memory bounded by `SCAN_BLOCK`, time linear in the
entries). Otherwise both tiers are searched by multi-index hashing over sorted numpy arrays (`multihash.py`): the
pHash tier exactly by pigeonhole, the window tier over the window pairs the crop-candidate rule counts, those with
a 16-bit quarter within `CROP_CANDIDATE_FLIPS` bits (`HashedWindows`). Under the rule that counts every pair
(`CROP_CANDIDATE_FLIPS = None`), the window tier is searched by faiss's exhaustive k-nearest search when faiss-cpu
is installed, whose answer is provably complete or else settled by the scan (`FaissWindows.nearest`).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Literal, Protocol

import numpy as np
from numba import njit

from lookbench.search.duplicates.crops import FULL, WINDOWS, CropPairs
from lookbench.search.duplicates.hashes import HASH_SIZE, hamming, popcount
from lookbench.search.duplicates.multihash import SCAN_SHARE, MultiHash, bit_count, within_radius

Backend = Literal["faiss", "numpy", "scan"]
"""`faiss` and `numpy`: both tiers by multi-index hashing (under the every-pair rule the window tier by faiss, or by
the scan without faiss); `scan`: both tiers by the scan (the reference the others are tested against)."""
CROP_CANDIDATE_FLIPS: int | None = 2
"""An image is a crop candidate when one of its window pairs within the radius has a 16-bit quarter that differs in
at most this many bits (None: any pair within the radius); candidates are then ranked by their nearest pair of
any kind. With 2, every pair within 11 bits counts (pigeonhole; 1 lost two-crop pairs whose nearest pair is 10-16
bits off, evenly spread), and the tables find the counted pairs by multi-index hashing, so the search grows with
the pairs that share a quarter, not with the whole history. Errors against counting every pair:
`benchmarks/results/dedup-errors*.json`."""
QUARTER = np.uint64(0xFFFF)
PHASH_WORDS = HASH_SIZE * HASH_SIZE // 64
SCAN_BLOCK = 1024
"""Entries compared per step of a scan: bounds its transient memory (~1.3 KB per entry of a block, ~1.4 MB)."""


def default_backend() -> Backend:
    """`faiss` when faiss-cpu is installed, else `numpy`."""
    try:
        import faiss  # noqa: F401
    except ImportError:
        return "numpy"
    return "faiss"


@contextmanager
def one_thread() -> Iterator[None]:
    """faiss on one thread for a single look-up: its OpenMP threads spin on shared cores (3-4x slower at load 20)."""
    import faiss

    threads = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(1)
    try:
        yield
    finally:
        faiss.omp_set_num_threads(threads)


class Codes:
    """An appendable (N, words) uint64 matrix: amortised O(1) appends, the live rows a view (never copied)."""

    def __init__(self, words: int, capacity: int = 1024) -> None:
        self._data = np.zeros((capacity, words), dtype=np.uint64)
        self._size = 0

    @classmethod
    def of(cls, matrix: np.ndarray) -> Codes:
        """Codes starting as `matrix` itself (a memory-mapped one stays on disk; the first add copies it)."""
        codes = cls(matrix.shape[1], capacity=0)
        codes._data, codes._size = matrix, len(matrix)
        return codes

    def add(self, rows: np.ndarray) -> None:
        """Append (n, words) rows."""
        rows = np.asarray(rows, dtype=np.uint64).reshape(-1, self._data.shape[1])
        end = self._size + len(rows)
        if end > len(self._data) or not self._data.flags.writeable:
            grown = np.zeros((max(end, 2 * len(self._data), 1024), self._data.shape[1]), dtype=np.uint64)
            grown[: self._size] = self._data[: self._size]
            self._data = grown
        self._data[self._size : end] = rows
        self._size = end

    @property
    def matrix(self) -> np.ndarray:
        """The rows added so far."""
        return self._data[: self._size]

    def __len__(self) -> int:
        return self._size


def as_bytes(words: np.ndarray) -> np.ndarray:
    """uint64 code words as faiss's uint8 codes (the same bits, so the same Hamming distances; a contiguous
    matrix is viewed, not copied)."""
    words = np.ascontiguousarray(words, dtype=np.uint64)
    return words.view(np.uint8).reshape(len(words), 8 * words.shape[1])


class PhashTable(Protocol):
    """The pHash tier's table: one 256-bit code per entry."""

    codes: Codes

    def add(self, words: np.ndarray) -> None:
        """Append entries' pHashes: (4,) uint64 words for one, (n, 4) for n."""

    def within(self, queries: np.ndarray, radius: int) -> np.ndarray:
        """Entry numbers, ascending, within `radius` bits of any of the (q, 4) query hashes."""


class WindowTable(Protocol):
    """The crop tier's table: each entry's window hashes (64 bits each), or none for an image too flat; `flips` is
    the crop-candidate rule its searches count pairs by (`CROP_CANDIDATE_FLIPS`)."""

    codes: Codes
    present: Codes
    flips: int | None

    def add(self, windows: np.ndarray, present: np.ndarray) -> None:
        """Append n entries' (n, W) window hashes; `present[i]` is False for an image too flat to have any."""

    def nearest(
        self, query: np.ndarray, radius: int, limit: int, pairs: CropPairs = "all"
    ) -> tuple[np.ndarray, np.ndarray]:
        """(entry numbers, their distances of all W x W window pairs) of the `limit` entries nearest by their
        nearest window pair among `pairs`, of those with a pair the table's rule counts within `radius` bits of the
        query's windows, nearest first (ties by entry number)."""

    def nearest_many(self, queries: np.ndarray, radius: int, limit: int, pairs: CropPairs = "all") -> list[np.ndarray]:
        """The entry numbers `nearest` gives for each of (q, W) queries (searched together where that is cheaper)."""


FRAME = WINDOWS.index(FULL)
"""The column of the full frame's window hash."""


def window_distances(query: np.ndarray, indexed: np.ndarray) -> np.ndarray:
    """(n, W * W) Hamming distances of every (query window, indexed window) pair; pair p is query window p % W
    against indexed window p // W."""
    pairs = popcount(indexed[:, :, None] ^ query[None, None, :], np.uint8)
    return pairs.reshape(len(indexed), len(query) * indexed.shape[1])


def quarter_distances(xor: np.ndarray) -> np.ndarray:
    """The smallest number of differing bits in any 16-bit quarter, per element of XORed uint64 codes."""
    quarters = [popcount((xor >> np.uint64(16 * q)) & QUARTER, np.uint8) for q in range(4)]
    return np.minimum(np.minimum(quarters[0], quarters[1]), np.minimum(quarters[2], quarters[3]))


def nearest_pairs(query: np.ndarray, indexed: np.ndarray, pairs: CropPairs, flips: int | None) -> np.ndarray:
    """(n,) distance of each indexed entry's nearest counted window pair (255 when none counts): among `pairs`,
    every pair or only those with the full frame on either side (the query's against every indexed window, every
    query window against the indexed full frame), and of those, with `flips`, only pairs with a quarter within
    `flips` bits."""
    xor = indexed[:, :, None] ^ query[None, None, :]  # (entry, its window, query window)
    distances = popcount(xor, np.uint8)
    counted = np.ones(distances.shape, dtype=bool)
    if pairs == "full-frame":
        indexed_window, query_window = np.indices((indexed.shape[1], len(query)))
        counted &= ((indexed_window == FRAME) | (query_window == FRAME))[None]
    if flips is not None:
        counted &= quarter_distances(xor) <= flips
    pair_count = indexed.shape[1] * len(query)
    return np.where(counted, distances, np.uint8(255)).reshape(len(indexed), pair_count).min(axis=1, initial=255)


def ranked(rows: np.ndarray, nearest: np.ndarray, radius: int, limit: int) -> np.ndarray:
    """The `limit` rows whose nearest pair is within `radius`, by (nearest, row)."""
    keep = nearest <= radius
    rows, nearest = rows[keep], nearest[keep]
    return rows[np.lexsort((rows, nearest))][:limit]


class ScanPhashes:
    """The pHash table searched by a blocked scan."""

    def __init__(self, codes: Codes | None = None) -> None:
        self.codes = Codes(PHASH_WORDS) if codes is None else codes

    def add(self, words: np.ndarray) -> None:
        """Append entries' pHashes."""
        self.codes.add(words)

    def within(self, queries: np.ndarray, radius: int) -> np.ndarray:
        """Entry numbers within `radius` bits of any query."""
        matrix = self.codes.matrix
        found = []
        for start in range(0, len(matrix), SCAN_BLOCK):
            distances = hamming(matrix[start : start + SCAN_BLOCK, None, :], queries[None, :, :])
            found.append(start + np.flatnonzero((distances <= radius).any(axis=1)))
        return np.concatenate(found) if found else np.zeros(0, dtype=np.int64)


class ScanWindows:
    """The window table searched by a blocked scan."""

    def __init__(self, codes: Codes | None = None, present: Codes | None = None, flips: int | None = None) -> None:
        self.codes = Codes(len(WINDOWS)) if codes is None else codes
        self.present = Codes(1) if present is None else present
        self.flips = flips

    def add(self, windows: np.ndarray, present: np.ndarray) -> None:
        """Append entries' window hashes (absent ones stored as zeros, marked absent)."""
        rows = np.where(present[:, None], np.asarray(windows, dtype=np.uint64).reshape(len(present), len(WINDOWS)), 0)
        self.codes.add(rows)
        self.present.add(present.astype(np.uint64))

    def nearest(
        self, query: np.ndarray, radius: int, limit: int, pairs: CropPairs = "all"
    ) -> tuple[np.ndarray, np.ndarray]:
        """The nearest entries by their nearest window pair, found by comparing the pairs of every entry."""
        matrix, present = self.codes.matrix, self.present.matrix[:, 0].astype(bool)
        rows, nearest = [], []
        for start in range(0, len(matrix), SCAN_BLOCK):
            block = matrix[start : start + SCAN_BLOCK]
            counted = nearest_pairs(query, block, pairs, self.flips)
            near = np.flatnonzero(present[start : start + SCAN_BLOCK] & (counted <= radius))
            rows.append(start + near)
            nearest.append(counted[near] if self.flips is None else nearest_pairs(query, block[near], pairs, None))
        if not rows:
            return np.zeros(0, dtype=np.int64), np.zeros((0, len(WINDOWS) ** 2), dtype=np.uint8)
        chosen = ranked(np.concatenate(rows), np.concatenate(nearest), radius, limit)
        return chosen, window_distances(query, matrix[chosen])

    def nearest_many(self, queries: np.ndarray, radius: int, limit: int, pairs: CropPairs = "all") -> list[np.ndarray]:
        """`nearest`'s entry numbers for each query, one after another."""
        return [self.nearest(query, radius, limit, pairs)[0] for query in queries]


class HashedPhashes(ScanPhashes):
    """The pHash table searched by multi-index hashing (`multihash.py`, numpy only): exact at any radius; the scan
    decides when the radius is too wide to probe or the candidates are over half the entries."""

    def __init__(self, codes: Codes | None = None) -> None:
        super().__init__(codes)
        self._hash = MultiHash()
        self._hash.catch_up(self.codes.matrix)
        self.scanned = 0
        """Look-ups the scan decided."""

    def add(self, words: np.ndarray) -> None:
        """Append entries' pHashes (indexed once `TAIL` are waiting)."""
        super().add(words)
        self._hash.catch_up(self.codes.matrix)

    def within(self, queries: np.ndarray, radius: int) -> np.ndarray:
        """Entry numbers within `radius` bits of any query."""
        matrix = self.codes.matrix
        if radius < 0:
            return np.zeros(0, dtype=np.int64)
        found = self._hash.candidates(queries, radius, len(matrix) // SCAN_SHARE)
        if found is None:
            self.scanned += 1
            return super().within(queries, radius)
        tail = np.arange(self._hash.indexed, len(matrix))
        return within_radius(matrix, np.concatenate([found, tail]), queries, radius)


class FaissWindows(ScanWindows):
    """The window table searched by faiss's exhaustive k-nearest search over window codes, read in place from the
    codes matrix (`faiss.knn_hamming`: no copy, so a memory-mapped matrix stays on disk).

    With `all` pairs, each query window's `limit * W` nearest codes cover at least `limit` entries. With
    `full-frame` pairs, the query's full frame's `limit * W` nearest among every window code, and each query
    window's `limit` nearest among the full frames' codes (a contiguous copy of that column, 8 B per entry, kept
    up to date on the next look-up). Either way every entry whose nearest allowed pair is below the smallest k-th
    distance T of these searches was returned with that pair; when the `limit`-th ranked entry (or, with fewer,
    the radius) is below T, the answer is exact. Otherwise (many entries tied near the query, or absent entries'
    zero codes among the nearest) the scan decides.
    """

    def __init__(self, codes: Codes | None = None, present: Codes | None = None) -> None:
        super().__init__(codes, present, flips=None)
        self._frames = Codes(1)
        self.scanned = 0
        """Look-ups the scan settled (the k-nearest answer could not be proven complete)."""

    def frames(self) -> np.ndarray:
        """(N, 1) the full frames' codes, contiguous (appended since the last call, so O(1) amortised per add)."""
        matrix = self.codes.matrix
        self._frames.add(matrix[len(self._frames) :, FRAME])
        return self._frames.matrix

    def nearest(
        self, query: np.ndarray, radius: int, limit: int, pairs: CropPairs = "all"
    ) -> tuple[np.ndarray, np.ndarray]:
        """The nearest entries by their nearest window pair."""
        matrix = self.codes.matrix
        if matrix.size == 0 or limit <= 0:
            return super().nearest(query, radius, limit, pairs)
        (chosen,) = self.nearest_many(query[None], radius, limit, pairs)
        return chosen, window_distances(query, matrix[chosen])

    def nearest_many(self, queries: np.ndarray, radius: int, limit: int, pairs: CropPairs = "all") -> list[np.ndarray]:
        """The nearest entries of each query, from one k-nearest search of all their windows (faiss blocks it)."""
        matrix = self.codes.matrix
        total, count = matrix.size, len(queries)
        if total == 0 or limit <= 0 or count == 0:
            return super().nearest_many(queries, radius, limit, pairs)
        k = min(limit * len(WINDOWS), total)
        if pairs == "all":
            ids, reached = knn_all(queries.reshape(-1), matrix, k)
            owners = (ids // len(WINDOWS)).reshape(count, -1)
            reached = reached.reshape(count, -1)
            bounds = np.full(count, np.inf) if k == total else reached_bounds(reached, len(WINDOWS), k)
        else:
            ids, reached = knn_all(queries[:, FRAME], matrix, k)
            frames = self.frames()
            k_frames = min(limit, len(frames))
            ids_of_frames, reached_frames = knn_all(queries.reshape(-1), frames, k_frames)
            bounds = np.minimum(
                np.full(count, np.inf) if k == total else reached[:, -1].astype(float),
                np.full(count, np.inf)
                if k_frames == len(frames)
                else reached_bounds(reached_frames.reshape(count, -1), len(WINDOWS), k_frames),
            )
            owners = np.concatenate([ids // len(WINDOWS), ids_of_frames.reshape(count, -1)], axis=1)
            reached = np.concatenate([reached, reached_frames.reshape(count, -1)], axis=1)
        found = []
        for query, own, near, bound in zip(queries, owners, reached, bounds, strict=True):
            chosen = self._settled(own, near, float(bound), radius, limit)
            if chosen is None:
                self.scanned += 1
                chosen = ScanWindows.nearest(self, query, radius, limit, pairs)[0]
            found.append(chosen)
        return found

    def _settled(
        self, owners: np.ndarray, reached: np.ndarray, bound: float, radius: int, limit: int
    ) -> np.ndarray | None:
        """The ranked entries of one query's k-nearest answer, or None when it cannot be proven complete."""
        keep = owners >= 0
        owners, reached = owners[keep], reached[keep]
        present = self.present.matrix[owners, 0].astype(bool)
        owners, reached = owners[present], reached[present]
        order = np.lexsort((reached, owners))
        rows, first = np.unique(owners[order], return_index=True)
        # An entry's nearest pair below the bound was returned, so its value here is exact.
        chosen = ranked(rows, reached[order][first], radius, limit)
        last = reached[order][first][np.searchsorted(rows, chosen[-1])] if len(chosen) == limit else radius
        return None if last >= bound else chosen


def knn_all(queries: np.ndarray, codes: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """(code numbers, distances), each (q, k), of the `k` nearest 64-bit codes to each of q queries (-1 where
    fewer)."""
    import faiss

    with one_thread():
        distances, ids = faiss.knn_hamming(as_bytes(queries.reshape(-1, 1)), as_bytes(codes.reshape(-1, 1)), k)
    return ids.astype(np.int64), distances.astype(np.int64)


def reached_bounds(reached: np.ndarray, windows: int, k: int) -> np.ndarray:
    """Per query, the smallest k-th distance over its `windows` searches (rows of `reached`, k per search)."""
    return reached.reshape(len(reached), windows, k)[:, :, -1].min(axis=1).astype(float)


class HashedWindows(ScanWindows):
    """The window table searched by multi-index hashing over every window code (`multihash.py`): the codes with a
    quarter within `flips` bits of a query window's are exactly those a probe of each quarter's keys within `flips`
    bits finds, so the answer is the scan's; the scan decides when the probes find more codes than the table holds
    (many entries near the query)."""

    def __init__(self, codes: Codes | None = None, present: Codes | None = None, flips: int = 2) -> None:
        super().__init__(codes, present, flips)
        self.visible = flips
        """`flips` as an int: this table always counts by quarters."""
        self._hash = MultiHash()
        self.scanned = 0
        """Queries the scan decided."""

    def add(self, windows: np.ndarray, present: np.ndarray) -> None:
        """Append entries' window hashes (indexed once `TAIL` codes are waiting)."""
        super().add(windows, present)
        self._hash.catch_up(self._flat())

    def _flat(self) -> np.ndarray:
        """Every window code as a (N * W, 1) matrix: code c is window c % W of entry c // W (a view, not a copy)."""
        return self.codes.matrix.reshape(-1, 1)

    def nearest(
        self, query: np.ndarray, radius: int, limit: int, pairs: CropPairs = "all"
    ) -> tuple[np.ndarray, np.ndarray]:
        """The nearest entries by their nearest counted window pair."""
        (chosen,) = self.nearest_many(query[None], radius, limit, pairs)
        return chosen, window_distances(query, self.codes.matrix[chosen])

    def nearest_many(self, queries: np.ndarray, radius: int, limit: int, pairs: CropPairs = "all") -> list[np.ndarray]:
        """The nearest entries of each query: the indexed codes probed, the newest (the tail) compared directly."""
        flat = self._flat()
        self._hash.catch_up(flat)
        found = []
        words = flat[:, 0]
        for query in queries:
            hits = self._hash.near(words, query, self.visible, radius, len(flat))
            if hits is None or limit <= 0:
                self.scanned += hits is None
                found.append(ScanWindows.nearest(self, query, radius, limit, pairs)[0])
                continue
            window, codes, distances = hits
            tail = np.arange(self._hash.indexed, len(flat))
            xor = words[tail][:, None] ^ query[None, :]
            near_tail = np.nonzero((quarter_distances(xor) <= self.visible) & (popcount(xor, np.uint8) <= radius))
            window = np.concatenate([window, near_tail[1]])
            codes = np.concatenate([codes, tail[near_tail[0]]])
            distances = np.concatenate([distances, popcount(xor[near_tail], np.int64)])
            keep = np.ones(len(codes), dtype=bool)
            if pairs == "full-frame":
                keep &= (window == FRAME) | (codes % len(WINDOWS) == FRAME)
            present = self.present.matrix[:, 0]
            entries = codes[keep] // len(WINDOWS)
            found.append(nearest_entries(entries, present, self.codes.matrix, query, pairs == "full-frame", limit))
        return found


@njit(cache=True, nogil=True)
def nearest_entries(
    entries: np.ndarray, present: np.ndarray, codes: np.ndarray, query: np.ndarray, full_frame: bool, limit: int
) -> np.ndarray:
    """The `limit` present ones of `entries` (repeats allowed) ranked by (their nearest window pair to the query's
    windows, entry): every pair, or with `full_frame` those with the full frame on either side."""
    seen = np.zeros(len(present), dtype=np.bool_)
    unique = []
    for entry in entries:
        if not seen[entry] and present[entry] != 0:
            seen[entry] = True
            unique.append(entry)
    nearest = np.empty(len(unique), dtype=np.int64)
    for n in range(len(unique)):
        best = 65
        for a in range(codes.shape[1]):
            for b in range(len(query)):
                if full_frame and a != FRAME and b != FRAME:
                    continue
                best = min(best, bit_count(codes[unique[n], a] ^ query[b]))
        nearest[n] = best
    order = np.argsort(nearest * (len(present) + 1) + np.array(unique, dtype=np.int64), kind="mergesort")
    chosen = np.empty(min(limit, len(unique)), dtype=np.int64)
    for n in range(len(chosen)):
        chosen[n] = unique[order[n]]
    return chosen


def phash_table(backend: Backend, codes: Codes | None = None) -> PhashTable:
    """A pHash table searched by `backend` (multi-index hashing unless `scan`), empty or holding `codes`."""
    return ScanPhashes(codes) if backend == "scan" else HashedPhashes(codes)


def window_table(backend: Backend, codes: Codes | None = None, present: Codes | None = None) -> WindowTable:
    """A window table searched by `backend` under the crop-candidate rule `CROP_CANDIDATE_FLIPS`, empty or holding
    `codes` (and which rows have them, `present`)."""
    flips = CROP_CANDIDATE_FLIPS
    if backend == "scan":
        return ScanWindows(codes, present, flips)
    if flips is not None:
        return HashedWindows(codes, present, flips)
    return FaissWindows(codes, present) if backend == "faiss" else ScanWindows(codes, present)
