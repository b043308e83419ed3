"""Embeddings computed elsewhere: `DIR/<subset>/{query,gallery}.npy` and `DIR/noise/gallery.npy`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from lookbench.embeddings.provider import ProviderBase
from lookbench.errors import EmbeddingError
from lookbench.snapshot.reader import Snapshot


class PrecomputedEmbeddings(ProviderBase):
    """An EmbeddingProvider reading `.npy` files row-aligned with the snapshot's parquet rows.

    Each split is read into a new array (not memory-mapped), which the caller normalises where it is: a float32 file
    then costs one copy of its vectors, where a mapping's resident pages plus the normalised copy cost two.
    """

    returns_new_arrays = True

    def __init__(self, root: Path | str) -> None:
        self.root = Path(root)
        if not self.root.is_dir():
            raise EmbeddingError(f"embeddings folder not found: {self.root}")
        self.spec = f"embeddings:{self.root}"

    def path(self, subset: str, split: str) -> Path:
        """Where the embeddings of one split live."""
        return self.root / subset / f"{split}.npy"

    def source_of(self, subset: str, split: str) -> str | None:
        """The `.npy` file of the split."""
        return str(self.path(subset, split))

    def embed_split(self, snapshot: Snapshot, subset: str, split: str) -> np.ndarray:
        """Load the split's embeddings; row alignment is checked by the caller."""
        path = self.path(subset, split)
        if not path.is_file():
            raise EmbeddingError(f"missing embeddings file {path} for {subset}/{split}")
        try:
            return np.load(path, allow_pickle=False)
        except Exception as exc:
            raise EmbeddingError(f"{path}: not a readable .npy file ({exc})") from exc

    def describe(self) -> dict[str, Any]:
        """Metadata for result files."""
        meta: dict[str, Any] = {"spec": self.spec, "kind": "embeddings", "name": self.root.resolve().name}
        card = self.root / "model.json"
        if card.is_file():
            try:
                facts = json.loads(card.read_text(encoding="utf-8"))
            except (OSError, ValueError) as exc:  # ValueError covers bad JSON and non-UTF-8 bytes
                raise EmbeddingError(f"{card}: not valid JSON ({exc})") from exc
            if not isinstance(facts, dict):
                raise EmbeddingError(f"{card}: expected a JSON object of model-card facts")
            meta["card"] = facts
            if facts.get("name"):
                meta["name"] = str(facts["name"])
        return meta
