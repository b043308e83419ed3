"""The Protocol every model adapter implements: a batch of inputs in, one vector per input out.

Optional capabilities are declared, never probed: `EncoderBase` gives each one its default (a CPU model outside
torch that encodes synchronously, with no card and no text tower), and adapters override what they have.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any, Literal, Protocol, runtime_checkable

import numpy as np

from lookbench.models.meta import ModelMeta
from lookbench.models.preprocess import Preprocess

InputKind = Literal["tensor", "image", "bytes"]
"""What `encode` receives: an NCHW float32 array made by `preprocess`, a list of RGB PIL images, or encoded bytes."""

Pending = Callable[[], np.ndarray]
"""A batch's vectors once they are ready (on CUDA the copy back to the host runs while later batches compute)."""


@runtime_checkable
class TextTower(Protocol):
    """Texts into the same space as a model's images (a two-tower model such as CLIP)."""

    def embed_texts(self, texts: list[str]) -> np.ndarray:
        """Return a (len(texts), dim) float array."""
        ...


@runtime_checkable
class Encoder(Protocol):
    """A loaded model. `model_id` + `revision` + the preprocessing fingerprint key the embedding cache."""

    model_id: str
    revision: str
    input_kind: InputKind
    preprocess: Preprocess | None

    @property
    def device(self) -> str | None:
        """The torch device the model runs on; None for models outside torch (onnxruntime, APIs, Python models)."""
        ...

    @property
    def precision(self) -> str | None:
        """The precision a torch model runs at (chosen at construction); None: the model's own."""
        ...

    @property
    def meta(self) -> ModelMeta | None:
        """Model-card facts the model carries itself (an exported `trained:` folder); None: see the shipped cards."""
        ...

    def encode(self, batch: Any) -> np.ndarray:
        """Return a (len(batch), dim) float array."""
        ...

    def submit(self, batch: Any) -> Pending:
        """Start encoding a batch; the returned getter gives its vectors."""
        ...

    def host_batch(self, rows: int) -> np.ndarray | None:
        """An input buffer of `rows` preprocessed images (pinned memory for CUDA models); None: any array will do."""
        ...

    def text_tower(self) -> TextTower | None:
        """The model's text tower, when it has one."""
        ...

    def describe(self) -> dict[str, Any]:
        """Metadata for result files (architecture, weights source, output used...)."""
        ...


class EncoderBase(ABC):
    """Defaults of the optional Encoder capabilities."""

    device: str | None = None
    precision: str | None = None
    meta: ModelMeta | None = None

    @abstractmethod
    def encode(self, batch: Any) -> np.ndarray:
        """Return a (len(batch), dim) float array."""

    def submit(self, batch: Any) -> Pending:
        """Encode right away."""
        vectors = self.encode(batch)
        return lambda: vectors

    def host_batch(self, rows: int) -> np.ndarray | None:
        """No buffer of its own."""
        return None

    def text_tower(self) -> TextTower | None:
        """No text tower."""
        return None

    def describe(self) -> dict[str, Any]:
        """Nothing beyond the identity."""
        return {}
