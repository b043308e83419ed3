"""Worker count, batch size and decoding place chosen from the machine when the user does not give them."""

from __future__ import annotations

import importlib.util

from lookbench._util.cores import usable_cores
from lookbench.errors import EmbeddingError
from lookbench.models.encoder import Encoder

CPU_WORKERS = 2
CPU_BATCH = 32
GIB = 1 << 30
GPU_BATCHES = ((40 * GIB, 256), (16 * GIB, 128), (6 * GIB, 64))
"""(free GPU memory at least, batch size): enough to keep a large GPU busy, small enough for a ViT-L at fp32."""


def encoder_device(encoder: Encoder) -> str:
    """The torch device an encoder runs on; `cpu` for everything else (onnxruntime, APIs, Python models)."""
    return encoder.device or "cpu"


def free_memory(device: str) -> int:
    """Free bytes on a CUDA device (a model there runs in torch, so torch is already imported)."""
    import torch

    free, _ = torch.cuda.mem_get_info(device)
    return int(free)


def auto_workers(encoder: Encoder, decode_on_device: bool) -> int:
    """Decoding threads: today's 2 on CPU; feeding a GPU, every core but the main thread's (a few when the GPU
    decodes, since the threads then only read parquet and queue work)."""
    if not encoder_device(encoder).startswith("cuda"):
        return CPU_WORKERS
    spare = max(1, usable_cores() - 1)
    return min(spare, 4) if decode_on_device else spare


def auto_batch_size(encoder: Encoder) -> int:
    """32 on CPU; on CUDA by free memory (256 from 40 GiB, 128 from 16 GiB, 64 from 6 GiB, else 32)."""
    device = encoder_device(encoder)
    if not device.startswith("cuda"):
        return CPU_BATCH
    free = free_memory(device)
    return next((size for least, size in GPU_BATCHES if free >= least), CPU_BATCH)


def decodes_on_device(encoder: Encoder, requested: str) -> bool:
    """Whether JPEGs go to the model's device: `device` needs a torch model taking tensors; `auto` picks it for
    such a model on CUDA when torchvision is installed."""
    able = encoder.input_kind == "tensor" and encoder.preprocess is not None and encoder.device is not None
    if requested == "device":
        if not able:
            raise EmbeddingError(
                f"--decode device: {encoder.model_id} is not a torch model taking preprocessed tensors "
                "; use --decode cpu"
            )
        return True
    if requested == "auto":
        cuda = encoder_device(encoder).startswith("cuda")
        return able and cuda and importlib.util.find_spec("torchvision") is not None
    return False
