"""`timm:<name>[?file=<weights>&pretrained=0]`: any timm image model's pooled features (classifier removed)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from lookbench.embeddings.mapper import Preprocess
from lookbench.hashing import file_sha256
from lookbench.models.hub import ensure_hub_model
from lookbench.models.options import split_options
from lookbench.models.torch_base import TorchEncoder, pick_device, require

OPTIONS = {"file", "pretrained"}


def preprocess_from_data_config(cfg: dict[str, Any]) -> Preprocess:
    """Translate timm's resolved data config (input_size, crop_pct, crop_mode, interpolation, mean, std)."""
    _, height, _ = cfg.get("input_size", (3, 224, 224))
    crop_pct = float(cfg.get("crop_pct") or 1.0)
    squash = cfg.get("crop_mode") == "squash"
    return Preprocess(
        crop=int(height),
        resize=int(math.floor(height / crop_pct)),
        resize_mode="squash" if squash else "shortest",
        interpolation="bilinear" if cfg.get("interpolation") == "bilinear" else "bicubic",
        mean=tuple(cfg.get("mean", (0.485, 0.456, 0.406))),  # type: ignore[arg-type]
        std=tuple(cfg.get("std", (0.229, 0.224, 0.225))),  # type: ignore[arg-type]
    )


def _hub_id(timm: Any, name: str) -> str:
    """The hub repository timm would download `name`'s default weights from."""
    if name.startswith("hf-hub:"):
        return name.removeprefix("hf-hub:")
    try:
        cfg = timm.models.get_pretrained_cfg(name)
    except (RuntimeError, KeyError, ValueError):
        cfg = None
    return str(getattr(cfg, "hf_hub_id", None) or f"timm/{name}")


def load_timm(argument: str) -> TorchEncoder:
    """Create the model with `num_classes=0` so its forward returns pooled features."""
    timm = require("timm", "timm")
    torch = require("torch", "torch")
    name, opts = split_options(argument, OPTIONS)
    spec = f"timm:{argument}"
    kwargs: dict[str, Any] = {"num_classes": 0}
    if "file" in opts:
        path = Path(opts["file"]).expanduser()
        kwargs.update(pretrained=True, pretrained_cfg_overlay={"file": str(path)})
        revision = file_sha256(path)[:16]
    elif opts.get("pretrained", "1") in ("0", "false"):
        kwargs["pretrained"] = False
        revision = "random-init"
    else:
        kwargs["pretrained"] = True
        ensure_hub_model(_hub_id(timm, name), spec)
        revision = name
    model = timm.create_model(name, **kwargs)
    device = pick_device(torch)
    model = model.to(device).eval()
    preprocess = preprocess_from_data_config(timm.data.resolve_data_config({}, model=model))
    return TorchEncoder(model, preprocess, spec, revision, device, {"kind": "timm", "name": name})
