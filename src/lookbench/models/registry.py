"""Resolve a model spec string (`kind:argument`) to an EmbeddingProvider."""

from __future__ import annotations

from collections.abc import Callable

from lookbench.embeddings.options import EmbedOptions
from lookbench.embeddings.provider import EmbeddingProvider
from lookbench.errors import LookBenchError


def _precomputed(argument: str, options: EmbedOptions) -> EmbeddingProvider:
    from lookbench.embeddings.precomputed import PrecomputedEmbeddings

    return PrecomputedEmbeddings(argument)


SPEC_KINDS: dict[str, Callable[[str, EmbedOptions], EmbeddingProvider]] = {
    "embeddings": _precomputed,
}
"""Spec prefix -> loader; each loader imports its heavy dependencies only when called."""


def resolve_model(spec: str, options: EmbedOptions | None = None) -> EmbeddingProvider:
    """Turn `kind:argument` into a provider, with a clear error for unknown kinds."""
    kind, sep, argument = spec.partition(":")
    if not sep or not argument:
        raise LookBenchError(f"bad model spec {spec!r}: expected KIND:ARGUMENT, kinds: {', '.join(SPEC_KINDS)}")
    if kind not in SPEC_KINDS:
        raise LookBenchError(f"unknown model kind {kind!r} in {spec!r}; known kinds: {', '.join(SPEC_KINDS)}")
    return SPEC_KINDS[kind](argument, options or EmbedOptions())
