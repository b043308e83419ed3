"""Exceptions that carry the file, row or field at fault."""

from __future__ import annotations

from pydantic import ValidationError


class LookBenchError(Exception):
    """Base class for errors reported to the user without a traceback."""


class SnapshotError(LookBenchError):
    """A snapshot is missing, malformed or inconsistent."""


class EmbeddingError(LookBenchError):
    """Embeddings are missing, misaligned or invalid."""


class ResultError(LookBenchError):
    """A result file is malformed or incompatible."""


class ReleaseError(LookBenchError):
    """A release config or build stage cannot proceed."""


class DatasetImportError(LookBenchError):
    """A dataset distribution being imported is missing a file or holds a malformed line or record."""


class TrainError(LookBenchError):
    """A training config, training data or training run cannot proceed."""


class SubmissionError(LookBenchError):
    """A submission bundle, a results repository or a model card cannot be written, read or verified."""


def first_problem(exc: ValidationError, top: str = "") -> str:
    """`field.path: message` of a validation error's first problem (`top` where it names no field)."""
    first = exc.errors()[0]
    return f"{'.'.join(str(p) for p in first['loc']) or top}: {first['msg']}"
