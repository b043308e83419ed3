"""The Protocol every source of embeddings implements, and the defaults of its optional capabilities."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING, Protocol, runtime_checkable

import numpy as np

from lookbench.models.meta import ModelMeta, ModelRun
from lookbench.snapshot.reader import Snapshot

if TYPE_CHECKING:  # the encoder's module loads PIL: only models that embed images need it
    from lookbench.models.encoder import TextTower

Skipped = Mapping[tuple[str, str], Mapping[int, str]]
"""`{(subset, split): {row: error message}}`: rows left out as undecodable (they hold zeros)."""


class PreparedRun(Protocol):
    """What embedding several splits ahead of time did (a sharded run)."""

    def summary(self) -> str:
        """One line for the progress log."""
        ...


@runtime_checkable
class EmbeddingProvider(Protocol):
    """Supplies one embedding per parquet row of a split, in row order."""

    spec: str

    @property
    def skipped(self) -> Skipped:
        """Rows skipped per split (``--on-bad-image skip``); the evaluator excludes them."""
        ...

    @property
    def embedded_images(self) -> int | None:
        """Images run through a model so far (cache hits excluded); None when nothing is embedded here."""
        ...

    @property
    def returns_new_arrays(self) -> bool:
        """Whether each `embed_split` call builds a new array the caller may modify in place."""
        ...

    @property
    def meta(self) -> ModelMeta | None:
        """Model-card facts (release date, training cutoff, training data...), which the contamination flags read."""
        ...

    def embed_split(self, snapshot: Snapshot, subset: str, split: str) -> np.ndarray:
        """Return a (rows, dim) float array for `subset/split` of `snapshot`."""
        ...

    def prepare(self, snapshot: Snapshot, splits: Sequence[tuple[str, str]]) -> PreparedRun | None:
        """Embed every split of `splits` at once (on shard workers); None when splits are embedded on demand."""
        ...

    def source_of(self, subset: str, split: str) -> str | None:
        """The file a split's vectors come from, named in errors about them; None when they are computed here."""
        ...

    def text_tower(self) -> TextTower | None:
        """The model's text tower (composed queries' modification texts), when it has one."""
        ...

    def describe(self) -> ModelRun:
        """The model record of result files: spec, name, revision, dimension, card and anything else that
        identifies it."""
        ...


class ProviderBase:
    """Defaults of the optional EmbeddingProvider capabilities: nothing skipped, counted, prepared or carried."""

    skipped: Skipped = MappingProxyType({})
    embedded_images: int | None = None
    returns_new_arrays = False
    meta: ModelMeta | None = None

    def prepare(self, snapshot: Snapshot, splits: Sequence[tuple[str, str]]) -> PreparedRun | None:
        """Splits are embedded when asked for."""
        return None

    def source_of(self, subset: str, split: str) -> str | None:
        """Computed here, not read from a file."""
        return None

    def text_tower(self) -> TextTower | None:
        """No text tower."""
        return None
