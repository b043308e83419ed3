"""Reading a transformers image model's output (without importing transformers or torch)."""

from __future__ import annotations

from typing import Any

IMAGE_FEATURE_TYPES = {"clip", "siglip", "siglip2", "chinese_clip", "align"}
"""Model types whose image embedding is `get_image_features` (two-tower models), not the pooler output."""


def pooled_features(output: Any) -> Any:
    """A tensor from whatever the model returned: pooler output, else the CLS token."""
    if hasattr(output, "ndim"):
        return output
    for name in ("image_embeds", "pooler_output"):
        pooled = getattr(output, name, None)
        if pooled is not None:
            return pooled
    hidden = output.last_hidden_state if hasattr(output, "last_hidden_state") else output[0]
    return hidden[:, 0] if hidden.ndim == 3 else hidden.mean(dim=(2, 3))
