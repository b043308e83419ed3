"""Margin softmax logits (ArcFace, CosFace, NormFace), a cross-entropy over class shards, and the label losses."""

from __future__ import annotations

import math
from typing import Any

import torch
import torch.distributed as dist
import torch.nn.functional as F

from lookbench.train.config import LossKind
from lookbench.train.distributed import all_reduce
from lookbench.train.labels import MISSING


def at_least_fp32(tensor: torch.Tensor) -> torch.Tensor:
    """bf16/fp16 (autocast) values in float32, float64 kept: the softmax over many classes needs the range."""
    return tensor.to(torch.promote_types(tensor.dtype, torch.float32))


class MarginLogits:
    """Scaled logits from cosines, with the margin applied to each row's target column (label -1: none here).

    ArcFace: s * cos(theta + m) on the target (where theta + m would pass pi, s * (cos theta - m sin m), the usual
    monotonic continuation); CosFace: s * (cos theta - m); softmax: s * cos theta, no margin (NormFace).
    """

    def __init__(self, kind: LossKind, margin: float, scale: float) -> None:
        self.kind = kind
        self.margin = margin
        self.scale = scale
        self.cos_m, self.sin_m = math.cos(margin), math.sin(margin)
        self.threshold = math.cos(math.pi - margin)
        self.fallback = math.sin(math.pi - margin) * margin

    def __call__(self, cos: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        if self.kind == "softmax" or self.margin == 0:
            return cos * self.scale
        rows = torch.nonzero(labels >= 0).squeeze(1)
        if not len(rows):
            return cos * self.scale
        target = cos[rows, labels[rows]]
        if self.kind == "cosface":
            adjusted = target - self.margin
        else:
            sine = torch.sqrt((1.0 - target * target).clamp(min=0.0))
            shifted = target * self.cos_m - sine * self.sin_m
            adjusted = torch.where(target > self.threshold, shifted, target - self.fallback)
        logits = cos.clone()
        logits[rows, labels[rows]] = adjusted.to(logits.dtype)
        return logits * self.scale


class _ShardedCrossEntropy(torch.autograd.Function):
    """Mean cross-entropy when each rank holds some columns of the logits (its class shard); labels -1 elsewhere."""

    @staticmethod
    def forward(ctx: Any, logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        n = logits.shape[0]
        with torch.no_grad():
            peak = logits.max(dim=1, keepdim=True).values if logits.shape[1] else logits.new_full((n, 1), -1e30)
            all_reduce(peak, dist.ReduceOp.MAX)
            exp = torch.exp(logits - peak)
            total = exp.sum(dim=1, keepdim=True)
            all_reduce(total)
            prob = exp / total
            index = torch.nonzero(labels >= 0).squeeze(1)
            target = torch.zeros(n, 1, dtype=prob.dtype, device=prob.device)
            target[index] = prob[index].gather(1, labels[index].unsqueeze(1))
            all_reduce(target)
        ctx.save_for_backward(index, prob, labels)
        return -target.clamp_min(1e-30).log().mean()

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple[torch.Tensor, None]:
        index, prob, labels = ctx.saved_tensors
        out = prob.clone()
        out[index, labels[index]] -= 1.0
        return out * (grad / prob.shape[0]), None


def sharded_cross_entropy(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """Cross-entropy over the union of every rank's columns (plain cross-entropy in one process)."""
    return _ShardedCrossEntropy.apply(at_least_fp32(logits), labels)


def category_loss(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Cross-entropy over categories; rows without a known category are ignored."""
    if not bool((targets != MISSING).any()):
        return logits.sum() * 0.0
    return F.cross_entropy(at_least_fp32(logits), targets, ignore_index=MISSING)


def attribute_loss(
    single_logits: list[torch.Tensor],
    single_targets: torch.Tensor,
    multi_logits: list[torch.Tensor],
    multi_targets: list[torch.Tensor],
    multi_mask: torch.Tensor,
) -> torch.Tensor:
    """Mean over attribute groups with any label in the batch: CE per single-valued group, BCE per multi-valued one.

    A single-valued group is missing (ignored) on rows without exactly one value; a multi-valued group is scored
    only on rows that list at least one of its values, where the unlisted values count as absent.
    """
    terms = []
    # Heads without a label in this batch still join the graph (with zero gradient), so every rank's DDP
    # all-reduce sees the same parameters whatever its batch holds.
    unused = single_logits[0].new_zeros(()) if single_logits else multi_logits[0].new_zeros(())
    for group, logits in enumerate(single_logits):
        targets = single_targets[:, group]
        if bool((targets != MISSING).any()):
            terms.append(F.cross_entropy(at_least_fp32(logits), targets, ignore_index=MISSING))
        else:
            unused = unused + logits.sum() * 0.0
    for group, (logits, targets) in enumerate(zip(multi_logits, multi_targets, strict=True)):
        rows = multi_mask[:, group]
        if bool(rows.any()):
            terms.append(F.binary_cross_entropy_with_logits(at_least_fp32(logits[rows]), targets[rows]))
        else:
            unused = unused + logits.sum() * 0.0
    return (torch.stack(terms).mean() if terms else 0.0) + unused
