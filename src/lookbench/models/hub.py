"""Fail fast, with a message, when a hub-hosted model cannot be fetched (no 60-second hang offline)."""

from __future__ import annotations

import os
import socket
from pathlib import Path
from urllib.parse import urlparse

from lookbench.errors import EmbeddingError

PROBE_TIMEOUT_S = 3.0
_TRUE = {"1", "true", "yes", "on"}


def hub_offline() -> bool:
    """True when HF_HUB_OFFLINE (or TRANSFORMERS_OFFLINE) asks for no network."""
    return any(os.environ.get(name, "").strip().lower() in _TRUE for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"))


def hub_cache_dir() -> Path:
    """The Hugging Face hub cache folder, following HF_HUB_CACHE / HF_HOME."""
    if os.environ.get("HF_HUB_CACHE"):
        return Path(os.environ["HF_HUB_CACHE"])
    home = Path(os.environ.get("HF_HOME", Path.home() / ".cache" / "huggingface"))
    return home / "hub"


def is_cached(repo_id: str) -> bool:
    """True if some snapshot of `repo_id` is in the local hub cache."""
    snapshots = hub_cache_dir() / f"models--{repo_id.replace('/', '--')}" / "snapshots"
    return snapshots.is_dir() and any(snapshots.iterdir())


def endpoint_reachable(timeout: float = PROBE_TIMEOUT_S) -> bool:
    """Whether a TCP connection to the hub endpoint (HF_ENDPOINT) opens within `timeout` seconds."""
    url = urlparse(os.environ.get("HF_ENDPOINT", "https://huggingface.co"))
    port = url.port or (443 if url.scheme == "https" else 80)
    try:
        with socket.create_connection((url.hostname or "huggingface.co", port), timeout=timeout):
            return True
    except OSError:
        return False


def ensure_hub_model(repo_id: str, spec: str) -> None:
    """Raise at once if `repo_id` is neither cached locally nor fetchable; local folders never reach here."""
    if hub_offline():
        if is_cached(repo_id):
            return
        raise EmbeddingError(
            f"{spec}: {repo_id} is not in the local Hugging Face cache ({hub_cache_dir()}) and HF_HUB_OFFLINE is set; "
            "download it on a connected machine or pass a local folder/file"
        )
    if not endpoint_reachable():
        hint = (
            "it is cached: set HF_HUB_OFFLINE=1 to use the cached copy" if is_cached(repo_id) else "pass a local path"
        )
        raise EmbeddingError(f"{spec}: the Hugging Face hub is unreachable, cannot fetch {repo_id}; {hint}")
