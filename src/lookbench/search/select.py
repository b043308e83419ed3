"""`--search auto|exact|torch|faiss[:flat|ivf|hnsw]`: pick a search backend by name."""

from __future__ import annotations

import glob
from typing import cast

from lookbench._util.optional import loaded_torch
from lookbench.errors import LookBenchError
from lookbench.search.backend import SearchBackend
from lookbench.search.exact import ExactSearch

SEARCH_CHOICES = ("auto", "exact", "torch", "faiss", "faiss:flat", "faiss:ivf", "faiss:hnsw")


def cuda_present() -> bool:
    """Whether torch sees a CUDA device; never imports torch (about a second) on a machine without an NVIDIA driver."""
    if loaded_torch() is None and not glob.glob("/dev/nvidia[0-9]*") and not glob.glob("/proc/driver/nvidia/gpus/*"):
        return False
    try:
        import torch
    except ImportError:
        return False
    return bool(torch.cuda.is_available())


def make_backend(name: str) -> SearchBackend:
    """The backend a `--search` value names; `auto` is `torch` where CUDA is present, else `exact`."""
    if name not in SEARCH_CHOICES:
        raise LookBenchError(f"--search: expected one of {', '.join(SEARCH_CHOICES)}, got {name!r}")
    if name == "auto":
        name = "torch" if cuda_present() else "exact"
    if name == "exact":
        return ExactSearch()
    if name == "torch":
        from lookbench.search.torch_search import TorchSearch

        return TorchSearch()
    from lookbench.search.faiss_search import FaissSearch, IndexKind

    return FaissSearch(index=cast(IndexKind, name.partition(":")[2] or "flat"))
