"""The vectors a model run scored, written as an embeddings folder for its bundle (read from the run's embedding
cache when it still holds them, else computed again by the same model spec)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from lookbench.errors import LookBenchError, SubmissionError
from lookbench.models.embed_options import EmbedOptions
from lookbench.models.registry import parse_spec, resolve_model
from lookbench.publish.submissions.bundle import embedding_splits
from lookbench.publish.submissions.verify import check_snapshot
from lookbench.results.schema import ResultFile
from lookbench.snapshot import open_snapshot

CODE_KINDS = frozenset({"python"})
"""Model kinds whose spec names code to import (a module found from the current folder): run only on request."""


def export_run_vectors(result: ResultFile, result_path: Path, out: Path, trust_code: bool = False) -> Path:
    """Write `out/<subset>/{query,gallery}.npy` and `out/noise/gallery.npy` of the run's model; return `out`.

    A spec naming Python code is refused unless `trust_code`: the result file says what to import, and whoever
    wrote it chose that code."""
    spec = result.model.spec
    if not spec or spec.startswith("embeddings:"):
        raise SubmissionError(
            f"{result_path}: field model.spec is {spec!r}; --embed needs a model run (give --embeddings DIR instead)"
        )
    try:
        kind = parse_spec(spec).kind
    except LookBenchError as exc:
        raise SubmissionError(f"{result_path}: field model.spec: {exc}") from exc
    if kind in CODE_KINDS and not trust_code:
        raise SubmissionError(
            f"{result_path}: field model.spec is {spec!r}: --embed would import and run that code; "
            "pass --trust-code if you trust it"
        )
    snapshot = open_snapshot(result.snapshot.location)
    check_snapshot(snapshot, result, str(result_path))
    cache = result.model.cache
    options = EmbedOptions(
        cache_dir=Path(cache).parent.parent if cache else None,  # the run's cache base (<base>/embeddings/<key>)
        storage_dtype="float16" if result.model.storage_dtype == "float16" else "float32",
        jpeg_draft=bool(result.model.jpeg_draft),
    )
    provider = resolve_model(spec, options)
    for subset, split, _ in embedding_splits(result):
        vectors = np.asarray(provider.embed_split(snapshot, subset, split))
        (out / subset).mkdir(parents=True, exist_ok=True)
        np.save(out / subset / f"{split}.npy", vectors)
    return out
