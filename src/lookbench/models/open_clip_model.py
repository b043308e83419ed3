"""`open_clip:<arch>/<pretrained tag or weights file>` or `open_clip:hf-hub:<repo>`: an open_clip image tower."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from lookbench._util.hashing import file_sha256
from lookbench._util.optional import pick_device, require
from lookbench.errors import LookBenchError
from lookbench.models.embed_options import EmbedOptions
from lookbench.models.encoder import TextTower
from lookbench.models.hub import ensure_hub_model
from lookbench.models.preprocess import Preprocess
from lookbench.models.spec import ModelSpec
from lookbench.models.torch_base import TorchEncoder

if TYPE_CHECKING:
    from lookbench.models.backbones import Backbone


def preprocess_from_cfg(cfg: dict[str, Any]) -> Preprocess:
    """Translate open_clip's `visual.preprocess_cfg` (size, mean, std, interpolation, resize_mode, fill_color)."""
    size = cfg.get("size", 224)
    crop = int(size[0] if isinstance(size, (tuple, list)) else size)
    interpolation = cfg.get("interpolation", "bicubic")
    return Preprocess(
        crop=crop,
        resize=crop,
        resize_mode=cfg.get("resize_mode", "shortest"),
        interpolation="bilinear" if interpolation == "bilinear" else "bicubic",
        mean=tuple(cfg.get("mean", (0.48145466, 0.4578275, 0.40821073))),  # type: ignore[arg-type]
        std=tuple(cfg.get("std", (0.26862954, 0.26130258, 0.27577711))),  # type: ignore[arg-type]
        fill=int(cfg.get("fill_color", 0)),
    )


class OpenClipEncoder(TorchEncoder):
    """The image tower embeds images; `embed_texts` runs the text tower (composed queries' modification texts)."""

    TEXT_BATCH = 256

    def __init__(self, model: Any, tokenizer_name: str, preprocess: Preprocess, *args: Any) -> None:
        super().__init__(model.encode_image, preprocess, *args)
        self.model = model
        self.tokenizer_name = tokenizer_name
        self._tokenizer: Any = None

    def text_tower(self) -> TextTower | None:
        """Its own `embed_texts`."""
        return self

    def embed_texts(self, texts: list[str]) -> np.ndarray:
        """Tokenise (open_clip's tokenizer for the architecture, made on first use) and run `encode_text`."""
        if self._tokenizer is None:
            self._tokenizer = require("open_clip", "openclip").get_tokenizer(self.tokenizer_name)
        parts = []
        for start in range(0, len(texts), self.TEXT_BATCH):
            tokens = self._tokenizer(texts[start : start + self.TEXT_BATCH]).to(self.device)
            with self.torch.inference_mode():
                parts.append(self.model.encode_text(tokens).float().cpu().numpy())
        return np.concatenate(parts) if parts else np.zeros((0, 0), np.float32)


def create_open_clip(spec: ModelSpec) -> tuple[Any, str, str]:
    """(model on the CPU, architecture name, weights revision) for `ARCH/PRETRAINED`, `ARCH` or `hf-hub:REPO`."""
    argument = spec.argument
    open_clip = require("open_clip", "openclip")
    require("torch", "openclip")
    if argument.startswith("hf-hub:"):
        ensure_hub_model(argument.removeprefix("hf-hub:"), str(spec))
        return open_clip.create_model(argument), argument, argument
    arch, _, pretrained = argument.partition("/")
    if not arch:
        raise LookBenchError(f"{spec}: expected ARCH/PRETRAINED, e.g. open_clip:ViT-B-32/openai")
    if pretrained and Path(pretrained).expanduser().is_file():
        revision = file_sha256(Path(pretrained).expanduser())[:16]
    elif pretrained:
        cfg = open_clip.get_pretrained_cfg(arch, pretrained) or {}
        hub_id = str(cfg.get("hf_hub", "")).strip("/")
        if hub_id:
            ensure_hub_model(hub_id, str(spec))
        revision = pretrained
    else:
        revision = "random-init"
    model = open_clip.create_model(arch, pretrained=str(Path(pretrained).expanduser()) if pretrained else None)
    return model, arch, revision


def open_clip_preprocess(model: Any) -> Preprocess:
    """An open_clip model's own preprocessing (`visual.preprocess_cfg`)."""
    return preprocess_from_cfg(dict(getattr(model.visual, "preprocess_cfg", {}) or {}))


def load(spec: ModelSpec, options: EmbedOptions) -> OpenClipEncoder:
    """Create the model with open_clip, keep `encode_image`, read its own preprocessing config."""
    model, arch, revision = create_open_clip(spec)
    torch = require("torch", "torch")
    device = pick_device(torch)
    model = model.to(device).eval()
    extra = {"kind": "open_clip", "argument": spec.argument}
    preprocess = open_clip_preprocess(model)
    return OpenClipEncoder(model, arch, preprocess, str(spec), revision, device, extra, options.precision)


def backbone(spec: ModelSpec) -> Backbone:
    """The image tower as a trainable backbone, with the config its rebuild needs."""
    from lookbench.models.backbones import OpenClipBackbone

    open_clip = require("open_clip", "openclip")
    model, _, _ = create_open_clip(spec)
    argument = spec.argument
    name = argument if argument.startswith("hf-hub:") else argument.partition("/")[0]
    config = {"model_cfg": open_clip.get_model_config(name), "preprocess_cfg": model.visual.preprocess_cfg}
    return OpenClipBackbone(model, config, str(spec), open_clip_preprocess(model))
