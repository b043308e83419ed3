"""Shared pieces of the torch-based adapters: lazy imports with install hints, and batched inference."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

import numpy as np

from lookbench.embeddings.encoder import InputKind
from lookbench.embeddings.mapper import Preprocess
from lookbench.errors import EmbeddingError


def require(module: str, extra: str) -> Any:
    """Import `module` or raise an error naming `pip install 'lookbench[extra]'`."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise EmbeddingError(f"this model needs {module}: pip install 'lookbench[{extra}]' ({exc})") from exc


def pick_device(torch: Any) -> str:
    """cuda when available, else cpu."""
    return "cuda" if torch.cuda.is_available() else "cpu"


class TorchEncoder:
    """Runs `forward` under inference mode on NCHW batches made by `preprocess`, or on RGB images when it is None."""

    input_kind: InputKind = "tensor"

    def __init__(
        self,
        forward: Callable[[Any], Any],
        preprocess: Preprocess | None,
        model_id: str,
        revision: str,
        device: str,
        extra: dict[str, Any],
    ) -> None:
        self.torch = require("torch", "torch")
        self.forward = forward
        self.preprocess: Preprocess | None = preprocess
        self.input_kind = "tensor" if preprocess is not None else "image"
        self.model_id = model_id
        self.revision = revision
        self.device = device
        self.extra = extra

    def encode(self, batch: np.ndarray) -> np.ndarray:
        """Forward one batch (an NCHW array, or a list of images) and return float32 vectors."""
        inputs = self.torch.from_numpy(batch).to(self.device) if self.input_kind == "tensor" else list(batch)
        with self.torch.inference_mode():
            out = self.forward(inputs)
        return out.float().cpu().numpy()

    def describe(self) -> dict[str, Any]:
        """Device plus adapter-specific facts."""
        return {"device": self.device, **self.extra}
