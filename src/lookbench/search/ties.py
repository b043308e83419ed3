"""The tie rule: rows of equal exact score are ordered by a hash of item ids, never by source or corpus position.

Gallery rows come before the shared noise pool in every corpus, so "lower row wins" would hand every tie to the
gallery (a feature as blind as image size would then never rank a distractor first). Instead every corpus row and
every query gets a key: the 8-byte blake2b (`lookbench._util.hashing.order_key`) of its side (`corpus` or `query`),
NUL, its `item_ID`, NUL, and how many rows before it in its corpus (or query split) carry the same `item_ID`, read as
a big-endian integer. Among rows of equal score for a query, the row with the lower `mix(query key XOR row key)`
wins (`mix`: the splitmix64 finaliser), then the lower row. It depends on the ids alone, so a tie's winner is the
same whichever source a row comes from and however the rows are ordered; each query orders a tie group in its own
way, so a blind feature's top 1 is a noise row about as often as noise rows fill its tie groups; and the two sides
hash apart, so a query's own item (the same `item_ID`) gets no special key.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np

from lookbench._util.hashing import order_key


def tie_keys(item_ids: Sequence[str], side: Literal["corpus", "query"]) -> np.ndarray:
    """One uint64 tie key per row of a corpus or query split, from its item id and its place among the rows sharing
    that id."""
    seen: dict[str, int] = {}
    keys = bytearray()
    for item in item_ids:
        n = seen.get(item, 0)
        seen[item] = n + 1
        keys += order_key(f"{side}\0{item}\0{n}")
    return np.frombuffer(bytes(keys), dtype=">u8").astype(np.uint64)


def pair_order(query_keys: np.ndarray, row_keys: np.ndarray) -> np.ndarray:
    """The tie order of (query, row) pairs: splitmix64's finaliser of the XOR of their keys; lower wins."""
    z = np.bitwise_xor(query_keys, row_keys, dtype=np.uint64)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))
