"""`hf:<repo or folder>[?trust_remote_code=1]`: transformers image encoders (CLIP, SigLIP, DINOv2/v3, remote code)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lookbench.embeddings.mapper import IMAGENET_MEAN, IMAGENET_STD, Preprocess
from lookbench.models.hub import ensure_hub_model
from lookbench.models.options import folder_fingerprint, split_options
from lookbench.models.torch_base import TorchEncoder, pick_device, require

OPTIONS = {"trust_remote_code", "revision"}
IMAGE_FEATURE_TYPES = {"clip", "siglip", "siglip2", "chinese_clip", "align"}
_PIL_BICUBIC, _PIL_BILINEAR = 3, 2


def _size(value: Any, default: int) -> tuple[int | None, int | None]:
    """(shortest_edge, square side) from a processor size field."""
    if isinstance(value, int):
        return value, None
    if isinstance(value, dict):
        if "shortest_edge" in value:
            return int(value["shortest_edge"]), None
        if "height" in value:
            return None, int(value["height"])
    return None, default


def preprocess_from_processor(config: dict[str, Any]) -> Preprocess:
    """Translate an image processor config (size, crop_size, do_center_crop, resample, image_mean/std)."""
    shortest, square = _size(config.get("size"), 224)
    _, crop = _size(config.get("crop_size"), shortest or square or 224)
    interpolation = "bilinear" if config.get("resample") == _PIL_BILINEAR else "bicubic"
    mean = tuple(config.get("image_mean") or (0.5, 0.5, 0.5))
    std = tuple(config.get("image_std") or (0.5, 0.5, 0.5))
    if shortest is not None:
        side = crop if config.get("do_center_crop", True) and crop else shortest
        return Preprocess(crop=side, resize=max(shortest, side), interpolation=interpolation, mean=mean, std=std)  # type: ignore[arg-type]
    side = int(square or 224)
    return Preprocess(crop=side, resize_mode="squash", interpolation=interpolation, mean=mean, std=std)  # type: ignore[arg-type]


def _pooled(output: Any) -> Any:
    """A tensor from whatever the model returned: pooler output, else the CLS token."""
    if hasattr(output, "ndim"):
        return output
    for name in ("image_embeds", "pooler_output"):
        pooled = getattr(output, name, None)
        if pooled is not None:
            return pooled
    hidden = output.last_hidden_state if hasattr(output, "last_hidden_state") else output[0]
    return hidden[:, 0] if hidden.ndim == 3 else hidden.mean(dim=(2, 3))


def load_hf(argument: str) -> TorchEncoder:
    """Load config, image processor settings and model; CLIP-like models use `get_image_features`."""
    name, opts = split_options(argument, OPTIONS)
    spec = f"hf:{argument}"
    local = Path(name).expanduser()
    source = str(local) if local.exists() else name
    if not local.exists():
        ensure_hub_model(name, spec)
    transformers = require("transformers", "hf")
    torch = require("torch", "torch")
    kwargs: dict[str, Any] = {"trust_remote_code": opts.get("trust_remote_code", "0") in ("1", "true")}
    if "revision" in opts:
        kwargs["revision"] = opts["revision"]
    config = transformers.AutoConfig.from_pretrained(source, **kwargs)
    try:
        processor_config = transformers.AutoImageProcessor.from_pretrained(source, **kwargs).to_dict()
        processor_source = "image processor config"
    except (OSError, ValueError, KeyError) as exc:
        size = int(getattr(getattr(config, "vision_config", config), "image_size", 224) or 224)
        processor_config = {"size": {"shortest_edge": size}, "crop_size": {"height": size, "width": size}}
        processor_config |= {"image_mean": list(IMAGENET_MEAN), "image_std": list(IMAGENET_STD)}
        processor_source = f"no image processor ({type(exc).__name__}): ImageNet mean/std at the config's image_size"
    preprocess = preprocess_from_processor(processor_config)
    model = transformers.AutoModel.from_pretrained(source, **kwargs)
    device = pick_device(torch)
    model = model.to(device).eval()
    if config.model_type in IMAGE_FEATURE_TYPES:

        def forward(pixels: Any) -> Any:
            return _pooled(model.get_image_features(pixel_values=pixels))

    else:

        def forward(pixels: Any) -> Any:
            return _pooled(model(pixel_values=pixels))

    revision = opts.get("revision") or str(getattr(config, "_commit_hash", None) or folder_fingerprint(local))
    extra = {"kind": "hf", "model_type": config.model_type, "source": source, "preprocess_from": processor_source}
    return TorchEncoder(forward, preprocess, spec, revision, device, extra)
