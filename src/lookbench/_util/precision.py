"""One precision vocabulary for evaluation (`--precision`) and training (`runtime.precision`): the names, how
`auto` resolves on a device, and the context a forward pass runs in. Torch is passed in, never imported here."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any, Literal, get_args

from lookbench.errors import EmbeddingError, LookBenchError

Precision = Literal["auto", "fp32", "tf32", "bf16", "fp16"]
"""auto: bf16 autocast on a CUDA device that supports it, else fp32; fp32: strict float32 (no TF32 tensor cores);
tf32: float32 with TF32 matmuls and convolutions on CUDA; bf16/fp16: autocast to that type."""
PRECISIONS: tuple[str, ...] = get_args(Precision)


def resolve_precision(
    torch: Any, requested: str, device: str, field: str = "--precision", error: type[LookBenchError] = EmbeddingError
) -> Precision:
    """The precision a run uses: `auto` is bf16 autocast on a CUDA device that supports it, else fp32; TF32 is a
    CUDA tensor-core format, so `tf32` on another device runs (and is cached and recorded) as fp32. Errors name
    `field` (the option or config field the value came from)."""
    if requested not in PRECISIONS:
        raise error(f"{field}: expected one of {', '.join(PRECISIONS)}, got {requested!r}")
    cuda = device.startswith("cuda")
    if requested == "auto":
        return "bf16" if cuda and torch.cuda.is_bf16_supported() else "fp32"
    if requested == "tf32" and not cuda:
        return "fp32"
    if requested == "bf16" and cuda and not torch.cuda.is_bf16_supported():
        raise error(f"{field} bf16: {torch.cuda.get_device_name(device)} does not support bfloat16")
    return requested  # type: ignore[return-value]


@contextlib.contextmanager
def precision_context(torch: Any, precision: str, device: str) -> Iterator[None]:
    """Run a forward pass at `precision`: autocast for bf16/fp16; TF32 allowed only for `tf32` (cuDNN allows
    it by default, so plain fp32 turns it off); every global setting is restored afterwards."""
    device_type = "cuda" if device.startswith("cuda") else "cpu"
    if precision in ("bf16", "fp16"):
        dtype = torch.bfloat16 if precision == "bf16" else torch.float16
        with torch.autocast(device_type=device_type, dtype=dtype):
            yield
        return
    if device_type != "cuda":
        yield
        return
    matmul, cudnn = torch.get_float32_matmul_precision(), torch.backends.cudnn.allow_tf32
    torch.set_float32_matmul_precision("high" if precision == "tf32" else "highest")
    torch.backends.cudnn.allow_tf32 = precision == "tf32"
    try:
        yield
    finally:
        torch.set_float32_matmul_precision(matmul)
        torch.backends.cudnn.allow_tf32 = cudnn
