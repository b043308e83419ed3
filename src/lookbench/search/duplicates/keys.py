"""Entry keys and the exact (sha256) tier's look-up: in memory for a batch, memory-mapped for a history."""

from __future__ import annotations

from typing import Protocol

import numpy as np
import pyarrow as pa


def sha_words(shas: list[str]) -> np.ndarray:
    """sha256 hex digests as (n, 4) big-endian uint64 words."""
    raw = b"".join(bytes.fromhex(sha) for sha in shas)
    return np.frombuffer(raw, dtype=">u8").astype(np.uint64).reshape(len(shas), 4)


class Keys(Protocol):
    """Entry keys by row number, and the first row holding a sha256."""

    def __getitem__(self, row: int) -> str:
        """The key of a row."""

    def __len__(self) -> int:
        """Rows held."""

    def row_of(self, sha: str) -> int | None:
        """The first row with this sha256 (hex), if any."""

    def extend(self, keys: list[str], shas: list[str]) -> None:
        """Append rows."""


class MemoryKeys:
    """Keys in a list and sha256 digests in a dict (a batch: entries added one at a time)."""

    def __init__(self) -> None:
        self._keys: list[str] = []
        self._rows: dict[str, int] = {}

    def __getitem__(self, row: int) -> str:
        return self._keys[row]

    def __len__(self) -> int:
        return len(self._keys)

    def row_of(self, sha: str) -> int | None:
        """The first row with this sha256."""
        return self._rows.get(sha)

    def extend(self, keys: list[str], shas: list[str]) -> None:
        """Append rows (a repeated sha256 keeps its first row)."""
        for offset, sha in enumerate(shas):
            self._rows.setdefault(sha, len(self._keys) + offset)
        self._keys.extend(keys)


class MappedKeys:
    """Keys as an Arrow string array and sha256 digests as a (memory-mapped) uint64 matrix, found through their
    sorted first words (16 B per row resident); rows appended later are held in memory after them."""

    def __init__(self, keys: pa.ChunkedArray | pa.Array, shas: np.ndarray) -> None:
        self._keys = keys
        self._shas = shas
        self._order = np.argsort(shas[:, 0], kind="stable")
        self._firsts = np.ascontiguousarray(shas[self._order, 0])
        self._later = MemoryKeys()

    def __getitem__(self, row: int) -> str:
        if row >= len(self._keys):
            return self._later[row - len(self._keys)]
        return str(self._keys[row].as_py())

    def __len__(self) -> int:
        return len(self._keys) + len(self._later)

    def row_of(self, sha: str) -> int | None:
        """The first row with this sha256: the mapped rows sharing its first word are compared whole."""
        words = sha_words([sha])[0]
        low, high = np.searchsorted(self._firsts, words[0], "left"), np.searchsorted(self._firsts, words[0], "right")
        for row in self._order[low:high].tolist():
            if np.array_equal(self._shas[row], words):
                return int(row)
        later = self._later.row_of(sha)
        return None if later is None else len(self._keys) + later

    def extend(self, keys: list[str], shas: list[str]) -> None:
        """Append rows in memory."""
        self._later.extend(keys, shas)
