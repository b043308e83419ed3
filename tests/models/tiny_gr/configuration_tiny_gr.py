"""Configuration of the tiny GR-style test model: a DINOv3 ViT backbone config plus GR-Lite's `is_crop` switch."""

from __future__ import annotations

from typing import Any

from transformers import PretrainedConfig


class TinyGRConfig(PretrainedConfig):
    """`backbone` holds DINOv3ViTConfig keyword arguments; `is_crop` crops the central half before embedding."""

    model_type = "tiny-gr"

    def __init__(self, backbone: dict[str, Any] | None = None, is_crop: bool = True, **kwargs: Any) -> None:
        self.backbone = dict(backbone or {})
        self.is_crop = is_crop
        super().__init__(**kwargs)
