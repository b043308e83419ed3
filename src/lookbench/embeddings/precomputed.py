"""Embeddings computed elsewhere: `DIR/<subset>/{query,gallery}.npy` and `DIR/noise/gallery.npy`."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from pydantic import ValidationError

from lookbench.embeddings.checks import load_npy
from lookbench.embeddings.provider import ProviderBase
from lookbench.errors import EmbeddingError, first_problem
from lookbench.models.meta import ModelMeta, ModelRun
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
        self.meta = self._read_card()

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
        return load_npy(path)

    def _read_card(self) -> ModelMeta | None:
        """The folder's fact sheet, `model.json` (see `ModelMeta`), when there is one."""
        path = self.root / "model.json"
        if not path.is_file():
            return None
        try:
            return ModelMeta.model_validate_json(path.read_bytes())
        except OSError as exc:
            raise EmbeddingError(f"{path}: cannot read the model card ({exc})") from exc
        except ValidationError as exc:
            raise EmbeddingError(f"{path}: field {first_problem(exc, 'model.json')}") from exc

    def describe(self) -> ModelRun:
        """The folder's model record: its name is the card's, else the folder's."""
        meta = self.meta or ModelMeta()
        name = meta.name or self.root.resolve().name
        return meta.merged(spec=self.spec, kind="embeddings").result_record(name)
