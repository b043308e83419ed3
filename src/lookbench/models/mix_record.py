"""The pretrained mix a `trained:` model is loaded with, as configured and as `model.json` records it."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, Field

if TYPE_CHECKING:
    from lookbench.models.backbones import Backbone

PretrainedFactory = Callable[[str], "Backbone"]
"""Builds a backbone spec with its pretrained weights (the registry's `create_backbone`, passed in to avoid a cycle)."""

MixSpace = Literal["outputs", "weights"]


class PretrainedMix(BaseModel):
    """Robust fine-tuning: the fine-tuned model mixed with its pretrained backbone when `trained:DIR` loads it."""

    model_config = ConfigDict(extra="forbid", strict=True)

    space: MixSpace = "outputs"
    """`outputs`: the embedding is `[sqrt(a) * fine-tuned, sqrt(1 - a) * pretrained]` of the two unit vectors, so its
    cosine is `a * cos_fine_tuned + (1 - a) * cos_pretrained`; `weights` (WiSE-FT, Wortsman et al. 2022): each
    backbone weight is `a * fine-tuned + (1 - a) * pretrained`, the embedding head stays as trained."""
    trained_share: float = Field(ge=0, le=1)
    """`a` above: 1 is the fine-tuned model alone, 0 the pretrained backbone (`outputs`) or the pretrained backbone
    under the trained head (`weights`)."""


class RecordedMix(PretrainedMix):
    """The mix as `model.json` records it: with the backbone spec whose pretrained weights it mixes in."""

    backbone: str = Field(min_length=1)
