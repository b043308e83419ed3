"""The embedding head (projection + normalisation) and the category and attribute classifiers on the embedding."""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from lookbench.models.backbones import Backbone, EmbeddingHead, EmbeddingModel
from lookbench.train.labels import LabelSpace


@dataclass
class Outputs:
    """One forward pass: the raw embedding and the label logits (empty when those losses are off)."""

    embedding: torch.Tensor
    category: torch.Tensor | None
    single: list[torch.Tensor]
    multi: list[torch.Tensor]


class TrainingModel(nn.Module):
    """Backbone, embedding head and, when their losses are on, category and attribute classifiers."""

    def __init__(self, backbone: Backbone, dim: int | None, space: LabelSpace, category: bool, attributes: bool):
        super().__init__()
        self.embedder = EmbeddingModel(backbone, EmbeddingHead(backbone.feature_dim, dim))
        width = self.embedder.head.dim
        self.category = nn.Linear(width, len(space.categories)) if category else None
        self.single = nn.ModuleList(
            [nn.Linear(width, len(v)) for v in space.single_groups.values()] if attributes else []
        )
        self.multi = nn.ModuleList(
            [nn.Linear(width, len(v)) for v in space.multi_groups.values()] if attributes else []
        )

    def forward(self, images: torch.Tensor) -> Outputs:
        embedding = self.embedder.head(self.embedder.backbone(images))
        normalised = F.normalize(embedding, dim=-1)
        return Outputs(
            embedding,
            self.category(normalised) if self.category is not None else None,
            [head(normalised) for head in self.single],
            [head(normalised) for head in self.multi],
        )
