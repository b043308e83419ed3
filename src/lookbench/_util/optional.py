"""Optional heavy libraries: import them with an install hint, and pick the torch device."""

from __future__ import annotations

import importlib
import sys
from typing import Any

from lookbench.errors import EmbeddingError


def require(module: str, extra: str, what: str = "this model") -> Any:
    """Import `module` or raise an error naming `pip install 'lookbench[extra]'`."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise EmbeddingError(f"{what} needs {module}: pip install 'lookbench[{extra}]' ({exc})") from exc


def loaded_torch() -> Any | None:
    """torch where this process has imported it (only a torch model does), else None; never imports it (a second)."""
    return sys.modules.get("torch")


def pick_device(torch: Any) -> str:
    """cuda when available, else cpu."""
    return "cuda" if torch.cuda.is_available() else "cpu"
