"""PartialFC: class centres sharded across ranks, a sampled subset of them per step, every positive always kept.

After insightface's `arcface_torch` (PartialFC v2): the embeddings of every rank are gathered, each rank scores
them against its own shard of centres (only `sample_rate` of it, positives included), and one cross-entropy runs
over the shards. In one process it is a plain margin softmax over (a sample of) all classes.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from lookbench.errors import TrainError
from lookbench.train.config import IdentityLoss
from lookbench.train.distributed import all_gather_plain, all_gather_with_grad, scale_grad
from lookbench.train.losses import MarginLogits, at_least_fp32, sharded_cross_entropy


def shard_range(num_classes: int, rank: int, world: int) -> tuple[int, int]:
    """(first class, number of classes) of rank `rank`'s shard: contiguous, sizes differing by at most one."""
    base, extra = divmod(num_classes, world)
    return base * rank + min(rank, extra), base + (1 if rank < extra else 0)


INIT_CHUNK = 1024
"""Centres are drawn in seeded blocks of this many classes, so the initial weights do not depend on the sharding."""


def init_centres(start: int, count: int, subcenters: int, dim: int, seed: int) -> torch.Tensor:
    """N(0, 0.01) centres of classes [start, start + count), identical whatever the number of ranks."""
    blocks = []
    for block in range(start // INIT_CHUNK, (start + count - 1) // INIT_CHUNK + 1 if count else 0):
        generator = torch.Generator().manual_seed(seed * 1_000_003 + block)
        drawn = torch.normal(0, 0.01, (INIT_CHUNK * subcenters, dim), generator=generator)
        first = max(start, block * INIT_CHUNK) - block * INIT_CHUNK
        last = min(start + count, (block + 1) * INIT_CHUNK) - block * INIT_CHUNK
        blocks.append(drawn[first * subcenters : last * subcenters])
    return torch.cat(blocks) if blocks else torch.zeros(0, dim)


MarginLoss = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]
"""(cosines, local labels with -1 for rows of other shards) -> logits, as arcface_torch's `margin_loss`."""


class PartialFC(nn.Module):
    """Margin-softmax loss over `num_classes` item identities, this rank holding its shard of the centres."""

    def __init__(
        self,
        margin_loss: MarginLoss,
        num_classes: int,
        dim: int,
        subcenters: int = 1,
        sample_rate: float = 1.0,
        rank: int = 0,
        world: int = 1,
        seed: int = 0,
    ) -> None:
        super().__init__()
        if num_classes < world:
            raise TrainError(f"{num_classes} training items cannot be sharded over {world} processes")
        self.rank, self.world = rank, world
        self.class_start, self.num_local = shard_range(num_classes, rank, world)
        self.subcenters = subcenters
        self.sample_rate = sample_rate
        self.num_sample = max(1, math.ceil(sample_rate * self.num_local))
        self.margin_loss = margin_loss
        self.weight = nn.Parameter(init_centres(self.class_start, self.num_local, self.subcenters, dim, seed))
        self.generator = torch.Generator().manual_seed(seed * 1_000_003 + rank + 7919)

    def get_extra_state(self) -> Any:
        """The negative-sampling generator, so a resumed run samples the same centres."""
        return {"generator": self.generator.get_state()}

    def set_extra_state(self, state: Any) -> None:
        """Restore the generator."""
        self.generator.set_state(state["generator"])

    def sample(self, local: torch.Tensor) -> torch.Tensor:
        """Sorted indices of the centres in this step's softmax: every positive plus random others."""
        if self.sample_rate >= 1:
            return torch.arange(self.num_local, device=local.device)
        positive = torch.unique(local[local >= 0])
        if len(positive) >= self.num_sample:
            return positive
        score = torch.rand(self.num_local, generator=self.generator).to(local.device)
        score[positive] = 2.0
        return torch.topk(score, k=self.num_sample).indices.sort().values

    def forward(self, embeddings: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        """Mean loss over every rank's batch; `labels` are global class indices of this rank's rows."""
        gathered = all_gather_with_grad(scale_grad(embeddings, float(self.world)))
        labels = all_gather_plain(labels)
        local = labels - self.class_start
        local = torch.where((local >= 0) & (local < self.num_local), local, torch.full_like(local, -1))
        index = self.sample(local)
        owned = local >= 0
        local = local.clone()
        local[owned] = torch.searchsorted(index, local[owned])
        dim = self.weight.shape[1]
        centres = self.weight.view(self.num_local, self.subcenters, dim)[index].reshape(-1, dim)
        cos = F.linear(F.normalize(at_least_fp32(gathered)), F.normalize(at_least_fp32(centres))).clamp(-1.0, 1.0)
        if self.subcenters > 1:
            cos = cos.view(cos.shape[0], len(index), self.subcenters).max(dim=2).values
        return sharded_cross_entropy(self.margin_loss(cos, local), local)


def identity_loss(
    loss: IdentityLoss, num_classes: int, dim: int, rank: int = 0, world: int = 1, seed: int = 0
) -> PartialFC:
    """The configured identity loss: PartialFC with the margin of `loss.kind` (sub-center ArcFace: ArcFace's)."""
    subcenter = loss.kind == "subcenter_arcface"
    margin = MarginLogits("arcface" if subcenter else loss.kind, loss.margin, loss.scale)
    subcenters = loss.subcenters if subcenter else 1
    return PartialFC(margin, num_classes, dim, subcenters, loss.sample_rate, rank, world, seed)
