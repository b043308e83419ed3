"""torch.distributed helpers: who we are, an autograd-aware all-gather, and no-ops in a single process."""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import torch
import torch.distributed as dist

from lookbench.errors import TrainError


@dataclass(frozen=True)
class World:
    """This process's rank among `size` processes (1 without torchrun) and its device."""

    rank: int
    size: int
    local_rank: int
    device: torch.device

    @property
    def is_main(self) -> bool:
        """Rank 0 writes logs, checkpoints and the export."""
        return self.rank == 0

    @property
    def distributed(self) -> bool:
        """True under torchrun with more than one process."""
        return self.size > 1

    def barrier(self) -> None:
        """Wait for every rank (no-op in one process)."""
        if self.distributed:
            dist.barrier()


def pick_device(requested: str, local_rank: int) -> torch.device:
    """`auto`: cuda:LOCAL_RANK when CUDA is present, else cpu."""
    if requested == "auto":
        requested = "cuda" if torch.cuda.is_available() else "cpu"
    if requested.startswith("cuda"):
        visible = torch.cuda.device_count() if torch.cuda.is_available() else 0
        where = torch.device("cuda", local_rank) if requested == "cuda" else torch.device(requested)
        if where.index is not None and where.index >= visible:
            raise TrainError(
                f"runtime.device: {requested} (device {where.index}) but {visible} CUDA GPU(s) are visible; "
                "use runtime.device: auto or cpu"
            )
        return where
    return torch.device(requested)


def init_world(device: str) -> World:
    """Join the process group torchrun describes in the environment (nccl on CUDA, gloo on CPU), if any."""
    size = int(os.environ.get("WORLD_SIZE", "1"))
    rank = int(os.environ.get("RANK", "0"))
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    where = pick_device(device, local_rank)
    if size > 1 and not dist.is_initialized():
        if where.type == "cuda":
            torch.cuda.set_device(where)
        # rank 0 validates and exports while the others wait at a barrier: allow for a long evaluation
        dist.init_process_group(backend="nccl" if where.type == "cuda" else "gloo", timeout=timedelta(hours=2))
    return World(rank, size, local_rank, where)


class _AllGather(torch.autograd.Function):
    """Concatenate equal-sized tensors from every rank; the backward sums the gradients and keeps this rank's slice."""

    @staticmethod
    def forward(ctx: Any, tensor: torch.Tensor) -> torch.Tensor:
        world, rank = dist.get_world_size(), dist.get_rank()
        ctx.rank, ctx.rows = rank, tensor.shape[0]
        parts = [torch.empty_like(tensor) for _ in range(world)]
        dist.all_gather(parts, tensor.contiguous())
        return torch.cat(parts)

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> torch.Tensor:
        grad = grad.contiguous()
        dist.all_reduce(grad)
        return grad[ctx.rank * ctx.rows : (ctx.rank + 1) * ctx.rows]


def all_gather_with_grad(tensor: torch.Tensor) -> torch.Tensor:
    """Every rank's rows, concatenated in rank order; gradients flow back to their owners (identity in one process)."""
    if not (dist.is_available() and dist.is_initialized()) or dist.get_world_size() == 1:
        return tensor
    return _AllGather.apply(tensor)


def all_gather_plain(tensor: torch.Tensor) -> torch.Tensor:
    """Every rank's rows, concatenated in rank order, without gradients (labels)."""
    if not (dist.is_available() and dist.is_initialized()) or dist.get_world_size() == 1:
        return tensor
    parts = [torch.empty_like(tensor) for _ in range(dist.get_world_size())]
    dist.all_gather(parts, tensor.contiguous())
    return torch.cat(parts)


def all_reduce(tensor: torch.Tensor, op: Any = None) -> torch.Tensor:
    """In-place all-reduce (sum by default); a no-op in one process."""
    if dist.is_available() and dist.is_initialized() and dist.get_world_size() > 1:
        dist.all_reduce(tensor, op=op or dist.ReduceOp.SUM)
    return tensor


class _ScaleGrad(torch.autograd.Function):
    @staticmethod
    def forward(ctx: Any, tensor: torch.Tensor, factor: float) -> torch.Tensor:
        ctx.factor = factor
        return tensor.view_as(tensor)

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple[torch.Tensor, None]:
        return grad * ctx.factor, None


def scale_grad(tensor: torch.Tensor, factor: float) -> torch.Tensor:
    """Identity forward; multiplies the gradient by `factor` (undoes DDP's averaging for a globally-normalised loss)."""
    return tensor if factor == 1 else _ScaleGrad.apply(tensor, factor)
