"""`ModelFacts`, the name `python:` models written before `ModelMeta` import for their `card` attribute."""

from lookbench.models.meta import ModelMeta as ModelFacts

__all__ = ["ModelFacts"]
