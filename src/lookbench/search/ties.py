"""The tie rule: corpus rows of equal exact score are ordered by a hash of their item id, never by where they sit.

Gallery rows come before the shared noise pool in every corpus, so "lower row wins" would hand every tie to the
gallery (a feature as blind as image size would then never rank a distractor first). The key of a row is the
8-byte blake2b (`lookbench._util.hashing.order_key`) of `item_ID`, NUL, and how many rows before it in the corpus
carry the same `item_ID` (photos of one product, or noise rows without an id), read as a big-endian integer: the
lower key wins, then the lower row. It depends on the ids alone, so a tie's winner is the same whichever source a
row comes from and however the sources are ordered or concatenated.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from lookbench._util.hashing import order_key


def tie_keys(item_ids: Sequence[str]) -> np.ndarray:
    """One uint64 tie key per corpus row, from its item id and its place among the rows sharing that id."""
    seen: dict[str, int] = {}
    keys = bytearray()
    for item in item_ids:
        n = seen.get(item, 0)
        seen[item] = n + 1
        keys += order_key(f"{item}\0{n}")
    return np.frombuffer(bytes(keys), dtype=">u8").astype(np.uint64)
