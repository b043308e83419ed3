"""`ModelFacts`, the name `python:` models written before `ModelMeta` import for their `card` attribute."""

from lookbench.embeddings.meta import ModelMeta as ModelFacts

__all__ = ["ModelFacts"]
