"""Robust fine-tuning at load time: a fine-tuned `trained:` model mixed with its pretrained backbone.

`outputs` concatenates the two unit embeddings weighted by `sqrt(a)` and `sqrt(1 - a)`, so retrieval ranks by
`a * cos_fine_tuned + (1 - a) * cos_pretrained` (an output-space ensemble; the pretrained side is the backbone's
pooled features, what the frozen model retrieves with). `weights` interpolates every floating-point backbone tensor
(WiSE-FT, Wortsman et al. 2022, "Robust fine-tuning of zero-shot models"); the embedding head has no pretrained
counterpart and stays as trained. Shares 1 and 0 of `outputs` are the two models alone, not a concatenation.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from lookbench.errors import TrainError
from lookbench.models.backbones import EmbeddingHead, EmbeddingModel
from lookbench.models.mix_record import PretrainedFactory, RecordedMix


class OutputMix(nn.Module):
    """`[sqrt(a) * fine_tuned(x), sqrt(1 - a) * pretrained(x)]`, each L2-normalised: a unit vector."""

    def __init__(self, fine_tuned: nn.Module, pretrained: nn.Module, share: float) -> None:
        super().__init__()
        self.fine_tuned = fine_tuned
        self.pretrained = pretrained
        self.weights = (math.sqrt(share), math.sqrt(1 - share))

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        tuned, base = self.fine_tuned(images), self.pretrained(images)
        return torch.cat([self.weights[0] * tuned, self.weights[1] * base], dim=-1)


def interpolate_weights(fine_tuned: nn.Module, pretrained: nn.Module, share: float) -> None:
    """Set each floating-point tensor of `fine_tuned` to `share * fine_tuned + (1 - share) * pretrained`."""
    base = pretrained.state_dict()
    state = fine_tuned.state_dict()
    if base.keys() != state.keys():
        raise TrainError("the pretrained backbone's weights do not match the fine-tuned one's names")
    with torch.no_grad():
        for name, value in state.items():
            if value.is_floating_point():
                value.copy_(share * value + (1 - share) * base[name].to(value.dtype))


def mixed_model(model: EmbeddingModel, mix: RecordedMix, pretrained: PretrainedFactory) -> nn.Module:
    """The network `trained:DIR` embeds with under `mix`; `pretrained` builds `mix.backbone` as training started."""
    share = mix.trained_share
    if mix.space == "weights":
        interpolate_weights(model.backbone, pretrained(mix.backbone), share)
        return model
    if share == 1:
        return model
    network = pretrained(mix.backbone)
    frozen = EmbeddingModel(network, EmbeddingHead(network.feature_dim, None))
    return frozen if share == 0 else OutputMix(model, frozen, share)
