"""Multi-index hashing of binary codes over numpy arrays: an exact Hamming range search whose time grows with the
entries that share a substring with the query, not with all entries.

Each code is cut into 16-bit substrings (16 of a 256-bit pHash, 4 of a 64-bit window hash; the radius search below
is the pHash tier's, `probe` the window tier's). A code within r bits of the query differs from it in at most
r // 16 bits in at least one substring (pigeonhole: otherwise every substring differs in more, r + 16 bits in all),
so probing, in every substring's table, each key within r // 16 flips of the query's substring finds every such
code. At most r // (r // 16 + 1) substrings can differ by more than the flips probed, so an entry is compared on
all 256 bits only when it turns up in at least 16 - r // (r // 16 + 1) tables (4 at 24 bits). The tables are
levels, each the entry numbers grouped by key `substring number << 16 | substring` (64 B per entry and 4 MB of
offsets per level), merged like a size-tiered log (amortised O(log n) per add, nothing rebuilt before a look-up);
the newest entries, fewer than `TAIL`, are compared directly.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import numpy as np
from numba import njit

from lookbench.search.duplicates.hashes import popcount

SUBSTRINGS = 16
"""Of a 256-bit pHash."""
SUBSTRING_BITS = 16
TAIL = 2048
"""Entries compared directly before they are indexed (a fixed cost per look-up)."""
MAX_FLIPS = 3
"""Flips probed per substring at most (697 keys); a wider radius (64 bits and more) is scanned."""
SCAN_SHARE = 2
"""More candidates than entries / SCAN_SHARE (many entries near the query) and the scan is cheaper: it decides."""


@cache
def flip_masks(flips: int) -> np.ndarray:
    """Every 16-bit mask with at most `flips` bits set."""
    masks = np.arange(1 << SUBSTRING_BITS, dtype=np.int64)
    return masks[popcount(masks) <= flips]


def substrings(words: np.ndarray) -> np.ndarray:
    """(n, 4 * words) 16-bit substrings of (n, words) uint64 codes."""
    words = np.ascontiguousarray(words, dtype=np.uint64)
    return words.view(np.uint16).reshape(len(words), 4 * words.shape[1])


def substring_keys(words: np.ndarray) -> np.ndarray:
    """(n, 4 * words) keys `substring number << 16 | substring` of (n, words) uint64 codes."""
    parts = substrings(words)
    return parts.astype(np.int64) | (np.arange(parts.shape[1], dtype=np.int64) << SUBSTRING_BITS)


def expand(starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """Every position of the half-open ranges [starts, ends), range after range."""
    lengths = ends - starts
    before = np.cumsum(lengths) - lengths
    return np.repeat(starts - before, lengths) + np.arange(int(lengths.sum()))


@dataclass(frozen=True)
class Level:
    """Entry numbers grouped by key: those with key k are `ids[offsets[k]:offsets[k + 1]]`, ascending."""

    offsets: np.ndarray
    ids: np.ndarray

    @classmethod
    def of(cls, words: np.ndarray, first: int) -> Level:
        """The level of codes numbered from `first`."""
        parts = substrings(words)
        count = parts.shape[1]
        ids = np.empty(count * len(words), dtype=np.uint32)
        counts = np.empty(count << SUBSTRING_BITS, dtype=np.int64)
        for t in range(count):
            # Per substring the keys are 16-bit, which numpy's stable argsort sorts by radix in linear time.
            ids[t * len(words) : (t + 1) * len(words)] = np.argsort(parts[:, t], kind="stable") + first
            counts[t << SUBSTRING_BITS : (t + 1) << SUBSTRING_BITS] = np.bincount(
                parts[:, t], minlength=1 << SUBSTRING_BITS
            )
        offsets = np.zeros(len(counts) + 1, dtype=np.uint32)
        np.cumsum(counts, out=offsets[1:])
        return cls(offsets, ids)

    @property
    def substrings(self) -> int:
        """Substrings per code."""
        return (len(self.offsets) - 1) >> SUBSTRING_BITS

    def merged(self, later: Level) -> Level:
        """One level holding this one's entries and a later one's (linear in both: no sort)."""
        counts, later_counts = np.diff(self.offsets.astype(np.int64)), np.diff(later.offsets.astype(np.int64))
        offsets = np.zeros(len(self.offsets), dtype=np.int64)
        np.cumsum(counts + later_counts, out=offsets[1:])
        ids = np.empty(len(self.ids) + len(later.ids), dtype=np.uint32)
        ids[expand(offsets[:-1], offsets[:-1] + counts)] = self.ids
        ids[expand(offsets[:-1] + counts, offsets[1:])] = later.ids
        return Level(offsets.astype(np.uint32), ids)

    def __len__(self) -> int:
        return len(self.ids) // self.substrings


class MultiHash:
    """Levels of substring keys over codes held elsewhere: `candidates` are the entries a radius needs compared."""

    def __init__(self) -> None:
        self.levels: list[Level] = []
        self.indexed = 0
        """Entries in the levels (the first `indexed` codes); the rest are the tail."""

    def catch_up(self, matrix: np.ndarray) -> None:
        """Index the codes beyond the levels once they are `TAIL` or more, merging levels of similar size."""
        if len(matrix) - self.indexed < TAIL:
            return
        if len(matrix) * 4 * matrix.shape[1] >= 1 << 32:
            raise OverflowError("multi-index hashing counts its keys in 32 bits (268M pHashes, 1G window hashes)")
        level = Level.of(matrix[self.indexed :], self.indexed)
        self.indexed = len(matrix)
        while self.levels and len(self.levels[-1]) <= 2 * len(level):
            level = self.levels.pop().merged(level)
        self.levels.append(level)

    def candidates(self, queries: np.ndarray, radius: int, limit: int) -> np.ndarray | None:
        """Indexed entries, ascending, that share with a query enough substrings within `radius // 16` flips to be
        within `radius` bits of it; None when the keys probed hold more than `limit` entries or the radius is too
        wide to probe."""
        flips = radius // SUBSTRING_BITS
        if flips > MAX_FLIPS:
            return None
        if not self.levels:
            return np.zeros(0, dtype=np.int64)
        # Of the substrings of an entry within `radius`, at most radius // (flips + 1) differ by more than `flips`.
        needed = SUBSTRINGS - radius // (flips + 1)
        probes = substring_keys(queries)[:, :, None] ^ flip_masks(flips)
        spans = [
            (level.ids, level.offsets[probes].astype(np.int64), level.offsets[probes + 1].astype(np.int64))
            for level in self.levels
        ]
        if sum(int((ends - starts).sum()) for _, starts, ends in spans) > limit:
            return None
        found = [np.zeros(0, dtype=np.uint32)]
        for query in range(len(queries)):
            hits = np.sort(np.concatenate([ids[expand(s[query].ravel(), e[query].ravel())] for ids, s, e in spans]))
            if needed > 1 and len(hits):
                firsts = np.flatnonzero(np.concatenate([[True], hits[1:] != hits[:-1]]))
                hits = hits[firsts[np.diff(firsts, append=len(hits)) >= needed]]
            found.append(hits)
        return np.unique(np.concatenate(found)).astype(np.int64)

    def near(self, codes: np.ndarray, queries: np.ndarray, flips: int, radius: int, limit: int) -> Near | None:
        """(query numbers, code numbers, distances) of the indexed 64-bit `codes` within `radius` bits of one of
        the (q,) query codes and with a 16-bit substring within `flips` bits of that query's (a code found through
        two substrings is listed twice); None when the probed keys hold more than `limit` codes."""
        none = np.zeros(0, dtype=np.int64)
        if not self.levels or not len(queries):
            return none, none, none
        probes = (substring_keys(queries[:, None])[:, :, None] ^ flip_masks(flips)).reshape(len(queries), -1)
        owners = np.repeat(np.arange(len(queries)), probes.shape[1])
        spans = [(level.ids, level.offsets[probes].ravel(), level.offsets[probes + 1].ravel()) for level in self.levels]
        if sum(int((ends.astype(np.int64) - starts).sum()) for _, starts, ends in spans) > limit:
            return None
        found = [near_codes(ids, starts, ends, owners, codes, queries, radius) for ids, starts, ends in spans]
        return (
            np.concatenate([part[0] for part in found]),
            np.concatenate([part[1] for part in found]),
            np.concatenate([part[2] for part in found]),
        )


Near = tuple[np.ndarray, np.ndarray, np.ndarray]
"""(query numbers, code numbers, distances) of codes near queries."""


@njit(cache=True, nogil=True)
def bit_count(bits: np.uint64) -> int:
    """Set bits of one uint64, counted by halves, nibbles and bytes (the count numpy's bitwise_count gives)."""
    bits = bits - ((bits >> 1) & 0x5555555555555555)
    bits = (bits & 0x3333333333333333) + ((bits >> 2) & 0x3333333333333333)
    bits = (bits + (bits >> 4)) & 0x0F0F0F0F0F0F0F0F
    return int((bits * 0x0101010101010101) >> 56)


@njit(cache=True, nogil=True)
def near_codes(
    ids: np.ndarray,
    starts: np.ndarray,
    ends: np.ndarray,
    owners: np.ndarray,
    codes: np.ndarray,
    queries: np.ndarray,
    radius: int,
) -> Near:
    """The codes listed in `ids[starts[s]:ends[s]]` within `radius` bits of query `owners[s]`, span by span:
    (query numbers, code numbers, distances)."""
    total = 0
    for s in range(len(starts)):
        total += ends[s] - starts[s]
    owner = np.empty(total, dtype=np.int64)
    found = np.empty(total, dtype=np.int64)
    distance = np.empty(total, dtype=np.int64)
    n = 0
    for s in range(len(starts)):
        query = queries[owners[s]]
        for j in range(starts[s], ends[s]):
            code = ids[j]
            count = bit_count(codes[code] ^ query)
            if count <= radius:
                owner[n], found[n], distance[n] = owners[s], code, count
                n += 1
    return owner[:n], found[:n], distance[:n]


def within_radius(matrix: np.ndarray, rows: np.ndarray, queries: np.ndarray, radius: int) -> np.ndarray:
    """The `rows` of `matrix` within `radius` bits of any query, in their order."""
    columns = np.take(matrix, rows, axis=0).T
    near = np.zeros(len(rows), dtype=bool)
    for query in queries:
        distances = popcount(columns[0] ^ query[0], np.uint16)
        for word in range(1, len(query)):
            distances += popcount(columns[word] ^ query[word], np.uint16)
        near |= distances <= radius
    return rows[near]
