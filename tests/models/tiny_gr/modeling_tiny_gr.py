"""The tiny GR-style test model: a DINOv3 ViT whose `search(image_paths, feature_dim)` preprocesses PIL images."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from PIL import Image
from transformers import DINOv3ViTConfig, DINOv3ViTModel, PreTrainedModel

from .configuration_tiny_gr import TinyGRConfig

MEAN = (0.485, 0.456, 0.406)
STD = (0.229, 0.224, 0.225)


class TinyGRModel(PreTrainedModel):
    """Embeds images as the first `feature_dim` values of the backbone's CLS token, like GR-Lite's `search`."""

    config_class = TinyGRConfig
    base_model_prefix = "model"

    def __init__(self, config: TinyGRConfig) -> None:
        super().__init__(config)
        self.model = DINOv3ViTModel(DINOv3ViTConfig(**config.backbone))
        self.post_init()

    def pixels(self, image: Image.Image) -> torch.Tensor:
        """Optional centre crop, bilinear squash to the backbone size, ImageNet normalisation (CHW)."""
        if self.config.is_crop:
            w, h = image.size
            image = image.crop((w // 4, h // 4, w - w // 4, h - h // 4))
        side = int(self.model.config.image_size)
        array = np.asarray(image.convert("RGB").resize((side, side), Image.BILINEAR), dtype=np.float32) / 255
        return torch.from_numpy((array - np.float32(MEAN)) / np.float32(STD)).permute(2, 0, 1)

    def forward(self, pixel_values: torch.Tensor) -> Any:
        return self.model(pixel_values=pixel_values)

    def search(self, image_paths: list[Image.Image], feature_dim: int) -> tuple[None, torch.Tensor]:
        """(scores, embeddings) like GR-Lite; this model has no gallery, so no scores."""
        batch = torch.stack([self.pixels(image) for image in image_paths]).to(self.device)
        return None, self.model(pixel_values=batch).last_hidden_state[:, 0, :feature_dim]
