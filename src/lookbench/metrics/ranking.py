"""Per-query ranking metrics computed from (Q, K) match flags and gains."""

from __future__ import annotations

import numpy as np


def recall_at(flags: np.ndarray, k: int) -> np.ndarray:
    """1 where some item in the top k matches, else 0."""
    return np.asarray(flags[:, :k].any(axis=1), dtype=np.float64)


def mrr_at(flags: np.ndarray, k: int) -> np.ndarray:
    """1/r for the first match at rank r <= k, else 0."""
    top = flags[:, :k]
    first = top.argmax(axis=1)
    hit = top.any(axis=1)
    return np.where(hit, 1.0 / (first + 1), 0.0)


def _discounts(k: int) -> np.ndarray:
    return 1.0 / np.log2(np.arange(2, k + 2, dtype=np.float64))


def dcg_at(gains: np.ndarray, k: int) -> np.ndarray:
    """Σ_{r=1..k} gain_r / log2(r + 1)."""
    top = gains[:, :k]
    return top @ _discounts(top.shape[1])


def ndcg_at(gains: np.ndarray, ideal: np.ndarray, k: int) -> np.ndarray:
    """DCG@k / IDCG@k, 0 where IDCG@k is 0."""
    dcg = dcg_at(gains, k)
    idcg = dcg_at(ideal, k)
    return np.divide(dcg, idcg, out=np.zeros_like(dcg), where=idcg > 0)
