"""`timm:<name>[?file=<weights>&pretrained=0]`: any timm image model's pooled features (classifier removed)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lookbench._util.hashing import file_sha256
from lookbench._util.optional import pick_device, require
from lookbench.models.embed_options import EmbedOptions
from lookbench.models.hub import ensure_hub_model
from lookbench.models.preprocess import Preprocess
from lookbench.models.spec import ModelSpec
from lookbench.models.torch_base import TorchEncoder

if TYPE_CHECKING:
    from lookbench.models.backbones import Backbone

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


def create_timm(spec: ModelSpec) -> tuple[Any, str, str]:
    """(model on the CPU with `num_classes=0`, its name, the weights revision) for `NAME[?file=..&pretrained=0]`."""
    timm = require("timm", "timm")
    name, opts = spec.options(OPTIONS)
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
        ensure_hub_model(_hub_id(timm, name), str(spec))
        revision = name
    return timm.create_model(name, **kwargs), name, revision


def timm_preprocess(model: Any) -> Preprocess:
    """A timm model's own evaluation preprocessing."""
    timm = require("timm", "timm")
    return preprocess_from_data_config(timm.data.resolve_data_config({}, model=model))


def load(spec: ModelSpec, options: EmbedOptions) -> TorchEncoder:
    """Create the model with `num_classes=0` so its forward returns pooled features."""
    model, name, revision = create_timm(spec)
    torch = require("torch", "torch")
    device = pick_device(torch)
    model = model.to(device).eval()
    extra = {"kind": "timm", "name": name}
    return TorchEncoder(model, timm_preprocess(model), str(spec), revision, device, extra, options.precision)


def backbone(spec: ModelSpec) -> Backbone:
    """The pretrained model without its classifier, as a trainable backbone."""
    from lookbench.models.backbones import TimmBackbone

    model, name, _ = create_timm(spec)
    return TimmBackbone(model, name, str(spec), timm_preprocess(model))
