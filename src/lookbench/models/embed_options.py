"""Options that control how a model embeds a snapshot (ignored by precomputed embeddings)."""

from __future__ import annotations

from pathlib import Path
from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator

from lookbench._util.limits import MAX_BATCH, MAX_PROCESSES, check_count
from lookbench._util.precision import Precision

DecodePlace = Literal["auto", "cpu", "device"]
DECODE_PLACES: tuple[str, ...] = get_args(DecodePlace)


class EmbedOptions(BaseModel):
    """Knobs the CLI passes to model-backed providers."""

    model_config = ConfigDict(extra="forbid")

    cache_dir: Path | None = None
    batch_size: int | None = Field(default=None, ge=1)
    """None: chosen from the machine (32 on CPU; 64-256 on CUDA by free GPU memory)."""
    workers: int | None = Field(default=None, ge=0)
    """Decoding threads; None: chosen from the machine (2 on CPU, all cores but one feeding a GPU)."""
    on_bad_image: Literal["stop", "skip"] = "stop"

    @field_validator("batch_size", "workers")
    @classmethod
    def _bounded(cls, value: int | None, info: ValidationInfo) -> int | None:
        name = info.field_name or ""
        limit = MAX_BATCH if name == "batch_size" else MAX_PROCESSES
        return None if value is None else check_count(f"--{name.replace('_', '-')}", value, limit)

    storage_dtype: Literal["float16", "float32"] = "float32"
    progress: bool = True
    jpeg_draft: bool = False
    """Decode large JPEGs at a reduced DCT scale (>= the model's resize size): faster, slightly different pixels."""
    precision: Precision = "auto"
    """Torch-backed models: auto (bf16 autocast on CUDA where supported, else fp32), or a fixed precision."""
    decode: DecodePlace = "auto"
    """Where JPEGs are decoded and preprocessed: auto (the model's CUDA device when it has one and torchvision is
    installed, else the CPU), cpu (the reference), or device (the torch model's device, CPU included)."""
