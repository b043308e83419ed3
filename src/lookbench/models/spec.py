"""A parsed model spec: `KIND:ARGUMENT`, frozen and picklable, with card names already expanded."""

from __future__ import annotations

from dataclasses import dataclass

from lookbench.errors import LookBenchError
from lookbench.models.options import split_options


@dataclass(frozen=True)
class ModelSpec:
    """`kind` picks the loader (`lookbench.models.registry.KINDS`); `argument` is what it loads, options included.

    `str(spec)` is the canonical `kind:argument` text that names the model in results and keys the cache.
    """

    kind: str
    argument: str

    def __str__(self) -> str:
        return f"{self.kind}:{self.argument}"

    def options(self, allowed: set[str]) -> tuple[str, dict[str, str]]:
        """The argument without its `?k=v&...` options, and the options (unknown keys rejected)."""
        return split_options(self.argument, allowed)

    @classmethod
    def parse(cls, text: str) -> ModelSpec | None:
        """`kind:argument` as it is written, without looking up card names or checking the kind; None without a `:`
        or with either side empty. The one parser of a spec's text (`split`, `ModelMeta.loader` and
        `lookbench.models.registry.parse_spec` read a spec through it)."""
        kind, sep, argument = text.partition(":")
        return cls(kind, argument) if sep and kind and argument else None

    @classmethod
    def split(cls, text: str) -> ModelSpec:
        """`kind:argument` as it is written (`parse`), or a LookBenchError."""
        spec = cls.parse(text)
        if spec is None:
            raise LookBenchError(f"bad model spec {text!r}: expected KIND:ARGUMENT or a model name (lookbench models)")
        return spec
