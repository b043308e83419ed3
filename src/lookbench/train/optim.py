"""AdamW parameter groups (layer-wise decay in the backbone, a multiplier for the heads) and the LR schedule."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable

import torch
from torch import nn

from lookbench.train.config import IdentityLoss, Optim, Schedule

_BLOCK = re.compile(r"^(.*?\.\d+)(?:\.|$)")


def layer_ids(names: list[str]) -> tuple[list[int], int]:
    """A layer id per parameter name (in registration order) and the number of layers.

    Parameters before the first numbered block (`blocks.3`, `layer.3`, `resblocks.3`, `_blocks.3`...) are layer 0
    (stem, embeddings); each block, in order of first appearance, is the next layer; parameters after the last
    block (final norm, head convolution) are the last layer.
    """
    keys = [m.group(1) if (m := _BLOCK.match(name)) else None for name in names]
    order: dict[str, int] = {}
    for key in keys:
        if key is not None and key not in order:
            order[key] = len(order) + 1
    last = len(order) + 1
    ids, current, seen_block = [], 0, False
    for key in keys:
        if key is not None:
            current, seen_block = order[key], True
        elif seen_block:
            current = last
        ids.append(current)
    return ids, last + 1


def freeze_layers(backbone: nn.Module, count: int) -> int:
    """Stop gradients to the parameters of the first `count` layers; returns how many tensors were frozen."""
    if count <= 0:
        return 0
    named = list(backbone.named_parameters())
    ids, _ = layer_ids([n for n, _ in named])
    frozen = 0
    for (_, param), layer in zip(named, ids, strict=True):
        if layer < count:
            param.requires_grad_(False)
            frozen += 1
    return frozen


def _decays(param: nn.Parameter) -> bool:
    """Weight decay applies to matrices and kernels, not to biases and norm scales."""
    return param.ndim > 1


def param_groups(backbone: nn.Module, heads: Iterable[nn.Module], cfg: Optim) -> list[dict[str, object]]:
    """Groups keyed by (lr scale, weight decay): backbone layer i of n at decay^(n-1-i), heads at the multiplier."""
    groups: dict[tuple[float, float], list[nn.Parameter]] = {}
    named = [(n, p) for n, p in backbone.named_parameters() if p.requires_grad]
    ids, count = layer_ids([n for n, _ in named])
    for (_, param), layer in zip(named, ids, strict=True):
        scale = cfg.layer_decay ** (count - 1 - layer)
        groups.setdefault((scale, cfg.weight_decay if _decays(param) else 0.0), []).append(param)
    for head in heads:
        for param in head.parameters():
            if param.requires_grad:
                key = (cfg.head_lr_multiplier, cfg.weight_decay if _decays(param) else 0.0)
                groups.setdefault(key, []).append(param)
    return [{"params": params, "lr_scale": scale, "weight_decay": wd} for (scale, wd), params in groups.items()]


def make_optimizer(groups: list[dict[str, object]], cfg: Optim) -> torch.optim.AdamW:
    """AdamW over the groups (learning rates are set every step by `set_lr`)."""
    return torch.optim.AdamW(groups, lr=cfg.lr, betas=cfg.betas, weight_decay=cfg.weight_decay)  # type: ignore[arg-type]


def centre_optimizer(weight: nn.Parameter, loss: IdentityLoss, optim: Optim) -> torch.optim.Optimizer:
    """The optimiser of a PartialFC shard: SGD with momentum (default) or AdamW, at `loss.lr`."""
    group = [{"params": [weight], "lr_scale": 1.0}]
    if loss.optimizer == "sgd":
        return torch.optim.SGD(group, lr=loss.lr, momentum=loss.momentum, weight_decay=loss.weight_decay)
    return torch.optim.AdamW(group, lr=loss.lr, betas=optim.betas, weight_decay=loss.weight_decay)


def lr_factor(step: int, total: int, schedule: Schedule) -> float:
    """Linear warmup to 1, then constant or cosine down to `min_lr_ratio` at the last step."""
    if step < schedule.warmup_steps:
        return (step + 1) / schedule.warmup_steps
    if schedule.kind == "constant":
        return 1.0
    span = max(1, total - schedule.warmup_steps - 1)
    progress = min(1.0, (step - schedule.warmup_steps) / span)
    return schedule.min_lr_ratio + (1 - schedule.min_lr_ratio) * 0.5 * (1 + math.cos(math.pi * progress))


def set_lr(optimizer: torch.optim.Optimizer, base_lr: float, factor: float) -> None:
    """lr of every group = base * factor * the group's scale."""
    for group in optimizer.param_groups:
        group["lr"] = base_lr * factor * float(group["lr_scale"])
