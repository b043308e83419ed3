"""`hf:<repo or folder>[?trust_remote_code=1]`: transformers image encoders (CLIP, SigLIP/SigLIP2, DINOv2/v3...)."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lookbench._util.optional import pick_device, require
from lookbench.errors import EmbeddingError, TrainError
from lookbench.models.embed_options import EmbedOptions
from lookbench.models.hf_outputs import IMAGE_FEATURE_TYPES, pooled_features
from lookbench.models.hub import ensure_hub_model
from lookbench.models.options import folder_fingerprint
from lookbench.models.preprocess import IMAGENET_MEAN, IMAGENET_STD, Preprocess
from lookbench.models.spec import ModelSpec
from lookbench.models.torch_base import TorchEncoder

if TYPE_CHECKING:
    from lookbench.models.backbones import Backbone

OPTIONS = {"trust_remote_code", "revision"}
NAFLEX_KEY = "max_num_patches"
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


def accepted_arguments(function: Callable[..., Any]) -> set[str]:
    """The named parameters of `function` (not *args / **kwargs): which processor outputs it can take."""
    variadic = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
    return {name for name, p in inspect.signature(function).parameters.items() if p.kind not in variadic}


def _image_processor(
    transformers: Any, source: str, config: Any, kwargs: dict[str, Any]
) -> tuple[Any, dict[str, Any], str]:
    """The image processor (None when there is none), its config and where the preprocessing comes from."""
    try:
        processor = transformers.AutoImageProcessor.from_pretrained(source, **kwargs)
        return processor, processor.to_dict(), "image processor config"
    except (OSError, ValueError, KeyError) as exc:
        size = int(getattr(getattr(config, "vision_config", config), "image_size", 224) or 224)
        processor_config: dict[str, Any] = {"size": {"shortest_edge": size}, "image_mean": list(IMAGENET_MEAN)}
        processor_config |= {"crop_size": {"height": size, "width": size}, "image_std": list(IMAGENET_STD)}
        reason = f"no image processor ({type(exc).__name__}): ImageNet mean/std at the config's image_size"
        return None, processor_config, reason


@dataclass
class HfModel:
    """A transformers image model on the CPU with its config, image processor and where its preprocessing comes from."""

    model: Any
    config: Any
    processor: Any
    processor_config: dict[str, Any]
    processor_source: str
    naflex: bool
    revision: str
    source: str

    @property
    def image_forward(self) -> Callable[..., Any]:
        """`get_image_features` for CLIP-like models, else `forward`."""
        return self.model.get_image_features if self.config.model_type in IMAGE_FEATURE_TYPES else self.model.forward

    @property
    def preprocess(self) -> Preprocess | None:
        """The fixed-resolution preprocessing; None for NaFlex models, which run their own processor."""
        return None if self.naflex else preprocess_from_processor(self.processor_config)


def create_hf(spec: ModelSpec) -> HfModel:
    """Load config, image processor and model of `REPO_OR_FOLDER[?trust_remote_code=1&revision=..]`."""
    name, opts = spec.options(OPTIONS)
    local = Path(name).expanduser()
    source = str(local) if local.exists() else name
    transformers = require("transformers", "hf")
    require("torch", "hf")
    if not local.exists():
        ensure_hub_model(name, str(spec))
    kwargs: dict[str, Any] = {"trust_remote_code": opts.get("trust_remote_code", "0") in ("1", "true")}
    if "revision" in opts:
        kwargs["revision"] = opts["revision"]
    config = transformers.AutoConfig.from_pretrained(source, **kwargs)
    processor, processor_config, processor_source = _image_processor(transformers, source, config, kwargs)
    # NaFlex (SigLIP2 `*-naflex`): aspect-preserving patch sequences, which a fixed NCHW crop cannot express
    naflex = NAFLEX_KEY in processor_config or config.model_type == "siglip2"
    if naflex and processor is None:
        raise EmbeddingError(
            f"{spec}: a {config.model_type} model takes variable-resolution patches and needs its image processor "
            f"(preprocessor_config.json), but there is {processor_source}"
        )
    model = transformers.AutoModel.from_pretrained(source, **kwargs)
    revision = opts.get("revision") or str(getattr(config, "_commit_hash", None) or folder_fingerprint(local))
    return HfModel(model, config, processor, processor_config, processor_source, naflex, revision, source)


def load(spec: ModelSpec, options: EmbedOptions) -> TorchEncoder:
    """Load config, image processor and model; CLIP-like models use `get_image_features`, NaFlex ones get patches."""
    hf = create_hf(spec)
    torch = require("torch", "torch")
    device = pick_device(torch)
    hf.model = hf.model.to(device).eval()
    target = hf.image_forward
    accepted = accepted_arguments(target) if hf.naflex else set()
    preprocess = hf.preprocess
    processor, processor_source = hf.processor, hf.processor_source

    def forward(batch: Any) -> Any:
        if preprocess is not None:
            return pooled_features(target(pixel_values=batch))
        inputs = processor(images=batch, return_tensors="pt")
        return pooled_features(target(**{k: v.to(device) for k, v in inputs.items() if k in accepted}))

    if hf.naflex:
        processor_source = f"{type(processor).__name__} run on each batch ({NAFLEX_KEY}="
        processor_source += (
            f"{hf.processor_config.get(NAFLEX_KEY)}, patch_size={hf.processor_config.get('patch_size')})"
        )
    extra = {"kind": "hf", "model_type": hf.config.model_type, "source": hf.source, "preprocess_from": processor_source}
    return TorchEncoder(forward, preprocess, str(spec), hf.revision, device, extra, options.precision)


def backbone(spec: ModelSpec) -> Backbone:
    """The pretrained model as a trainable backbone (fixed-resolution models only)."""
    from lookbench.models.backbones import HfBackbone

    hf = create_hf(spec)
    if hf.preprocess is None:
        raise TrainError(f"{spec}: NaFlex (variable-resolution) models cannot be fine-tuned here")
    return HfBackbone(hf.model, hf.preprocess, str(spec))
