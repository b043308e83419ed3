"""Options that control how a model embeds a snapshot (ignored by precomputed embeddings)."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict


class EmbedOptions(BaseModel):
    """Knobs the CLI passes to model-backed providers."""

    model_config = ConfigDict(extra="forbid")

    cache_dir: Path | None = None
    batch_size: int = 32
    workers: int = 2
    on_bad_image: Literal["stop", "skip"] = "stop"
    storage_dtype: Literal["float16", "float32"] = "float32"
    progress: bool = True
    jpeg_draft: bool = False
    """Decode large JPEGs at a reduced DCT scale (>= the model's resize size): faster, slightly different pixels."""
