"""Exact top-K with the matrix products and candidate selection on a torch device (a GPU where there is one)."""

from __future__ import annotations

import contextlib
import warnings
import weakref
from collections.abc import Iterator
from typing import Any

import numpy as np

from lookbench.search.backend import CheckedSearch, Corpus, SearchResult, is_immutable, max_row_norm
from lookbench.search.candidates import finish, score_margin
from lookbench.search.exact import ExactSearch


@contextlib.contextmanager
def ieee_float32(torch: Any) -> Iterator[None]:
    """Full float32 matrix products (no TF32 or bf16 shortcuts), whatever the encoder's precision set before."""
    before = torch.get_float32_matmul_precision()
    torch.set_float32_matmul_precision("highest")
    try:
        yield
    finally:
        torch.set_float32_matmul_precision(before)


class TorchSearch(CheckedSearch):
    """Row for row the result of `ExactSearch`, with the O(queries x corpus) work on the device.

    The device keeps each query's `k + extra` best float32 scores; the CPU then checks that every row the rounding
    margin allows into the exact top K is among them (`lookbench.search.candidates`) and ranks those by exact score,
    ties by the corpus's tie keys. A query with more near-ties than that is searched again with 4x the candidates, up to
    `max_candidates`, then by `ExactSearch`. Corpus parts that cannot change (read-only arrays, such as the shared
    noise pool) are copied to the device once.
    """

    name = "torch"
    exact = True

    def __init__(
        self,
        device: str | None = None,
        query_block: int = 4096,
        corpus_block: int | None = None,
        extra: int = 32,
        max_candidates: int = 2048,
    ) -> None:
        from lookbench._util.optional import require

        self.torch = require("torch", "torch", "--search torch")
        self.device = device or ("cuda" if self.torch.cuda.is_available() else "cpu")
        self.query_block = query_block
        self.corpus_block = corpus_block or (65536 if self.device.startswith("cuda") else 8192)
        self.extra = extra
        self.max_candidates = max_candidates
        self._resident: dict[int, tuple[weakref.ref[np.ndarray], Any]] = {}

    def describe(self) -> dict[str, Any]:
        """Backend name and device (results equal `exact` on every device)."""
        return {"backend": self.name, "device": self.device}

    def _search(
        self, q: np.ndarray, rows: Corpus, k: int, exclude: np.ndarray | None, q_ties: np.ndarray
    ) -> SearchResult:
        margin = score_margin(rows.dim, max_row_norm(q), rows.max_norm())
        parts = [self._on_device(part) for part in rows.parts]
        blocked = None if exclude is None else self.torch.from_numpy(np.asarray(exclude, dtype=bool)).to(self.device)
        q_found: list[np.ndarray] = []
        c_found: list[np.ndarray] = []
        todo = np.arange(len(q))
        width = k + self.extra
        with ieee_float32(self.torch), self.torch.inference_mode():
            while len(todo) and width <= max(self.max_candidates, k + self.extra):
                done = np.zeros(len(todo), dtype=bool)
                for start in range(0, len(todo), self.query_block):
                    chunk = todo[start : start + self.query_block]
                    vals, idx = self._top(q[chunk], rows, parts, blocked, min(width, len(rows)))
                    complete, q_rows, c_rows = _candidates(vals, idx, k, margin, width >= len(rows))
                    q_found.append(chunk[q_rows])
                    c_found.append(c_rows)
                    done[start : start + len(chunk)] = complete
                todo = todo[~done]
                width *= 4
        result = finish(q, rows, k, np.concatenate(q_found), np.concatenate(c_found), q_ties)
        if len(todo):  # more near-ties than max_candidates: the CPU pool finds the same rows
            rest = ExactSearch().search(q[todo], rows, k, exclude, q_ties[todo])
            result.indices[todo] = rest.indices
            result.scores[todo] = rest.scores
        return result

    def _on_device(self, part: np.ndarray) -> Any:
        key = id(part)
        cached = self._resident.get(key)
        if cached is not None and cached[0]() is part:
            return cached[1]
        with warnings.catch_warnings():  # read-only arrays are only read
            warnings.simplefilter("ignore", UserWarning)
            tensor = self.torch.from_numpy(np.ascontiguousarray(part, dtype=np.float32)).to(self.device)
        if is_immutable(part):
            self._resident = {k: v for k, v in self._resident.items() if v[0]() is not None}
            self._resident[key] = (weakref.ref(part), tensor)
        return tensor

    def _top(self, q: np.ndarray, corpus: Corpus, parts: list[Any], blocked: Any, width: int) -> tuple[Any, Any]:
        """The `width` best float32 scores of each query and their corpus rows, as numpy arrays."""
        torch = self.torch
        qd = torch.from_numpy(q).to(self.device)
        best_vals = best_idx = None
        for offset, part in zip(corpus.offsets, parts, strict=False):
            for start in range(0, part.shape[0], self.corpus_block):
                block = part[start : start + self.corpus_block]
                scores = qd @ block.T
                first = int(offset) + start
                if blocked is not None:
                    scores.masked_fill_(blocked[first : first + block.shape[0]][None, :], float("-inf"))
                vals, idx = torch.topk(scores, min(width, scores.shape[1]), dim=1)
                idx += first
                if best_vals is not None:
                    vals, pick = torch.topk(
                        torch.cat([best_vals, vals], dim=1), min(width, best_vals.shape[1] + vals.shape[1]), dim=1
                    )
                    idx = torch.gather(torch.cat([best_idx, idx], dim=1), 1, pick)
                best_vals, best_idx = vals, idx
        assert best_vals is not None and best_idx is not None
        return best_vals.cpu().numpy(), best_idx.cpu().numpy()


def _candidates(
    vals: np.ndarray, idx: np.ndarray, k: int, margin: float, everything: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Which queries' candidate lists are complete, and their (query, corpus row) candidates within the margin.

    `vals` (Q, W) are each query's W best approximate scores, descending. A list is complete when its last score
    lies below the K-th best minus the margin (no row left out can reach the exact top K), or it holds every row.
    """
    width = vals.shape[1]
    kth = vals[:, min(k, width) - 1].astype(np.float64)
    threshold = np.where(np.isfinite(kth), kth - margin, -np.inf)
    last = vals[:, -1].astype(np.float64)
    complete = everything | np.isneginf(last) | (last < threshold)
    keep = np.isfinite(vals) & (vals >= threshold[:, None]) & complete[:, None]
    q_rows, slots = np.nonzero(keep)
    return complete, q_rows, idx[q_rows, slots].astype(np.int64)
