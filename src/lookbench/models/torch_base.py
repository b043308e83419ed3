"""Shared pieces of the torch-based adapters: lazy imports with install hints and batched inference at a
precision (`lookbench._util.precision`) that overlaps host-device copies with the model's work."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from lookbench._util.optional import require
from lookbench._util.precision import precision_context, resolve_precision
from lookbench.embeddings.device_decode import DeviceBatch
from lookbench.models.encoder import EncoderBase, InputKind, Pending
from lookbench.models.preprocess import Preprocess


class TorchEncoder(EncoderBase):
    """Runs `forward` under inference mode at the chosen precision on NCHW batches made by `preprocess` (or on RGB
    images when it is None).

    On CUDA, input batches are decoded into pinned host buffers (`host_batch`) and copied on a side stream with
    non-blocking copies, so the copy of batch i+1 overlaps the forward of batch i; `submit` returns at once and the
    vectors come back through a pinned buffer and an event. On a CPU device the same calls run synchronously.
    """

    input_kind: InputKind = "tensor"

    def __init__(
        self,
        forward: Callable[[Any], Any],
        preprocess: Preprocess | None,
        model_id: str,
        revision: str,
        device: str,
        extra: dict[str, Any],
        precision: str = "auto",
    ) -> None:
        self.torch = require("torch", "torch")
        self.forward = forward
        self.preprocess: Preprocess | None = preprocess
        self.input_kind = "tensor" if preprocess is not None else "image"
        self.model_id = model_id
        self.revision = revision
        self.device: str = device
        self.extra = extra
        self.cuda = device.startswith("cuda")
        self.requested_precision = precision
        self.precision: str = resolve_precision(self.torch, precision, device)
        self._copy_stream = self.torch.cuda.Stream(device=device) if self.cuda else None

    def host_batch(self, rows: int) -> np.ndarray | None:
        """An uninitialised (rows, 3, crop, crop) float32 input buffer: page-locked on CUDA, so copies are async."""
        assert self.preprocess is not None, "host_batch is for tensor models"
        crop = self.preprocess.crop
        tensor = self.torch.empty((rows, 3, crop, crop), dtype=self.torch.float32, pin_memory=self.cuda)
        return np.asarray(tensor.numpy())

    def encode(self, batch: Any) -> np.ndarray:
        """Forward one batch and return float32 vectors."""
        return self.submit(batch)()

    def submit(self, batch: Any) -> Pending:
        """Queue one batch (an NCHW array, a `DeviceBatch`, or a list of images); returns its vectors' getter."""
        torch = self.torch
        inputs = self._inputs(batch)
        with torch.inference_mode(), precision_context(torch, self.precision, self.device):
            out = self.forward(inputs)
        out = out.float()
        if not self.cuda:
            vectors = out.cpu().numpy()
            return lambda: vectors
        host = torch.empty(out.shape, dtype=torch.float32, pin_memory=True)
        host.copy_(out, non_blocking=True)
        done = torch.cuda.Event()
        done.record()

        def result() -> np.ndarray:
            done.synchronize()
            return host.numpy().copy()  # pageable: the cache keeps these, pinned memory goes back to its pool

        return result

    def _inputs(self, batch: Any) -> Any:
        """The batch on the device: images as they are, arrays copied on the side stream, device batches as they are
        once their decoding stream got to them."""
        torch = self.torch
        if self.input_kind != "tensor":
            return list(batch)
        if isinstance(batch, DeviceBatch):
            if self.cuda and batch.ready is not None:
                torch.cuda.current_stream().wait_event(batch.ready)
                batch.tensor.record_stream(torch.cuda.current_stream())
            return batch.tensor
        source = _owning_tensor(torch, batch)
        if not self.cuda:
            return source.to(self.device)
        assert self._copy_stream is not None
        with torch.cuda.stream(self._copy_stream):
            on_device = source.to(self.device, non_blocking=True)
        torch.cuda.current_stream().wait_stream(self._copy_stream)
        on_device.record_stream(torch.cuda.current_stream())
        return on_device

    def describe(self) -> dict[str, Any]:
        """Device, precision plus adapter-specific facts."""
        return {"device": self.device, "precision": self.precision, **self.extra}


def _owning_tensor(torch: Any, batch: np.ndarray) -> Any:
    """The batch as a tensor; a view of a `host_batch` buffer becomes a slice of that pinned tensor itself, so the
    pinned-memory allocator sees the asynchronous copy and does not hand the buffer out again before it ends."""
    owner: Any = batch
    while isinstance(owner, np.ndarray) and owner.base is not None:
        owner = owner.base
    if isinstance(owner, torch.Tensor) and batch.flags.c_contiguous and owner.is_contiguous():
        start = (batch.__array_interface__["data"][0] - owner.data_ptr()) // owner.element_size()
        flat = owner.reshape(-1)[start : start + batch.size]
        if flat.data_ptr() == batch.__array_interface__["data"][0]:
            return flat.view(batch.shape)
    return torch.from_numpy(np.ascontiguousarray(batch))
