"""The composed-query encoder contract, and the baselines that need no labels: image only, text only, their sum."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import numpy as np

from lookbench.errors import EmbeddingError
from lookbench.models.encoder import TextTower
from lookbench.snapshot.composed import Change
from lookbench.snapshot.labels import SplitLabels


@dataclass(frozen=True)
class ComposedBatch:
    """Composed queries to embed, row-aligned."""

    reference: np.ndarray
    """(n, dim) the reference images, embedded by the run's image model exactly as gallery rows are, L2-normalised."""
    texts: list[str]
    """The modification texts, e.g. "like this, but with short sleeves"."""
    changes: list[tuple[Change, ...]]
    """The structured changes each text expresses (group, from, to); empty where a query names explicit targets only."""
    labels: SplitLabels
    """The reference items' labels (category, main attribute, other attributes, item_ID)."""


@dataclass(frozen=True)
class LabelledItems:
    """Items a method may learn from: embeddings (any scale) with their labels, row-aligned.

    The runner passes labelled rows of the snapshot that are not items of the composed gallery (the distractor
    pool, the image subsets' galleries), so nothing is learnt from an item the queries may retrieve.
    """

    embeddings: np.ndarray
    labels: SplitLabels


@runtime_checkable
class ComposedQueryEncoder(Protocol):
    """Embeds composed queries (reference image, modification text, structured changes) into the gallery's space.

    The gallery is embedded by the run's image model; the vectors this returns are searched against it by cosine
    similarity. A method with one free parameter names it in `parameter` and lists the candidates in `grid`; the
    runner picks the value with the best Recall@10 on the subset's `validation` split (`default` without one).
    """

    method: str
    """Short name recorded in results, e.g. `image`, `text`, `sum`, `arithmetic`."""
    parameter: str | None
    """Name of the free parameter (e.g. `weight`), or None."""
    grid: tuple[float, ...]
    """Candidate parameter values tried on the validation split (empty when there is no parameter)."""
    default: float | None
    """The value used without a validation split."""
    learns_from_items: bool
    """True if `fit` must be called with labelled items before `embed_queries`."""

    def fit(self, items: LabelledItems) -> None:
        """Learn from labelled items (called once, before any `embed_queries`, when `learns_from_items`)."""
        ...

    def embed_queries(self, batch: ComposedBatch, value: float | None) -> np.ndarray:
        """Return (n, dim) query vectors in the gallery's space for `batch`, with the parameter set to `value`."""
        ...

    def describe(self) -> dict[str, Any]:
        """Metadata recorded in result files (method, parameter, anything that identifies what was learnt)."""
        ...


def normalised(vectors: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length (zero rows stay zero)."""
    array = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(array, axis=1, keepdims=True)
    return np.divide(array, norms, out=np.zeros_like(array), where=norms > 0)


def embed_texts_checked(tower: TextTower, texts: list[str], dim: int, name: str) -> np.ndarray:
    """The text tower's vectors for `texts`, checked to be finite (n, dim) floats in the image space."""
    array = np.asarray(tower.embed_texts(texts))
    if array.ndim != 2 or array.shape[0] != len(texts) or not np.issubdtype(array.dtype, np.floating):
        raise EmbeddingError(f"{name}: text tower returned {array.dtype} {array.shape}, expected ({len(texts)}, dim)")
    if array.shape[1] != dim:
        raise EmbeddingError(
            f"{name}: text embeddings have {array.shape[1]} dimensions, the images {dim}; "
            "a two-tower model must embed both in one space"
        )
    if not np.isfinite(array).all():
        raise EmbeddingError(f"{name}: text tower returned NaN or infinite values")
    return array.astype(np.float32, copy=False)


class ImageOnly:
    """The reference image's own embedding: retrieval that ignores the modification."""

    method = "image"
    parameter: str | None = None
    grid: tuple[float, ...] = ()
    default: float | None = None
    learns_from_items = False

    def fit(self, items: LabelledItems) -> None:
        """Nothing to learn."""

    def embed_queries(self, batch: ComposedBatch, value: float | None) -> np.ndarray:
        """The reference embeddings."""
        return np.asarray(batch.reference, dtype=np.float32)

    def describe(self) -> dict[str, Any]:
        """The method."""
        return {"method": self.method}


class WeightedSum:
    """`(1 - w) · image + w · text` of normalised embeddings from a two-tower model; w = 1 is text only."""

    parameter: str | None = "weight"
    learns_from_items = False

    def __init__(self, tower: TextTower, name: str, weight: float | None = None) -> None:
        self.tower = tower
        self.name = name
        self.fixed = weight
        self.method = "text" if weight == 1.0 else "sum"
        self.grid: tuple[float, ...] = () if weight is not None else tuple(round(0.1 * i, 1) for i in range(11))
        self.default: float | None = weight if weight is not None else 0.5
        self._texts: dict[str, np.ndarray] = {}

    def fit(self, items: LabelledItems) -> None:
        """Nothing to learn."""

    def _text_vectors(self, texts: list[str], dim: int) -> np.ndarray:
        todo = sorted({t for t in texts if t not in self._texts})
        if todo:
            for text, vector in zip(todo, embed_texts_checked(self.tower, todo, dim, self.name), strict=True):
                self._texts[text] = vector
        return np.stack([self._texts[t] for t in texts]) if texts else np.zeros((0, dim), np.float32)

    def embed_queries(self, batch: ComposedBatch, value: float | None) -> np.ndarray:
        """Normalise both, mix with the weight, return the mixture (the search normalises it again)."""
        weight = self.fixed if self.fixed is not None else (self.default if value is None else value)
        assert weight is not None
        image = normalised(batch.reference)
        text = normalised(self._text_vectors(batch.texts, image.shape[1]))
        return (1.0 - weight) * image + weight * text

    def describe(self) -> dict[str, Any]:
        """The method and the text tower."""
        return {"method": self.method, "text_tower": self.name}
