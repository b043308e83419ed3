"""Resolve a snapshot location (a local folder or an `hf://` location) to a local folder."""

from __future__ import annotations

import os
import re
from pathlib import Path
from urllib.parse import unquote

from lookbench.errors import SnapshotError
from lookbench.snapshot.card import CARD_NAME
from lookbench.snapshot.schema import NOISE, SUBSETS, is_composed_subset

DEFAULT_HUB_REPO = "srpone/look-bench"
HUB_FORMS = "hf://owner/name[@revision][/vYYYYMMDD] or hf://datasets/owner/name[@revision][/path]"
_VERSION_RE = re.compile(r"^v\d{8}$")


def parse_hub_uri(uri: str) -> tuple[str, str | None, str | None]:
    """Split a hub location into (repo, revision, path inside the repo).

    Two forms: `hf://owner/name[@revision][/vYYYYMMDD]` and the `huggingface_hub.HfFileSystem` form
    `hf://datasets/owner/name[@revision][/path]` (a revision with `/` either URL-encoded or `refs/pr/N`).
    """
    expected = f"expected {HUB_FORMS}"
    parts = uri.removeprefix("hf://").strip("/").split("/")
    if parts[0] in ("datasets", "models", "spaces"):
        kind = parts.pop(0)
        if kind != "datasets":
            raise SnapshotError(f"bad hub snapshot {uri!r}: a snapshot is a dataset repository, not one of {kind}")
    if len(parts) < 2 or not parts[0] or not parts[1]:
        raise SnapshotError(f"bad hub snapshot {uri!r}: {expected}")
    name, at, revision = parts[1].partition("@")
    rest = parts[2:]
    if revision == "refs" and len(rest) >= 2 and rest[0] in ("pr", "convert"):
        revision, rest = f"refs/{rest[0]}/{rest[1]}", rest[2:]
    revision = unquote(revision)
    if (at and not revision) or not name:
        raise SnapshotError(f"bad hub snapshot {uri!r}: {expected}")
    if any(part in ("", ".", "..") for part in rest):
        raise SnapshotError(f"bad hub snapshot {uri!r}: the path inside the repository may not hold '', '.' or '..'")
    return f"{parts[0]}/{name}", revision or None, "/".join(rest) or None


def download_hub_snapshot(uri: str, cache_dir: Path | None = None) -> Path:
    """Download a snapshot from the Hugging Face Hub and return its local folder."""
    repo, revision, folder = parse_hub_uri(uri)
    hint = (
        f"To evaluate offline, download it where a network exists "
        f"(`huggingface-cli download {repo} --repo-type dataset --local-dir DIR`) "
        f"and pass --snapshot DIR/{folder or 'vYYYYMMDD'}."
    )
    try:
        from huggingface_hub import snapshot_download
    except ImportError as exc:
        raise SnapshotError(f"reading {uri} needs huggingface_hub: pip install 'lookbench[hub]'. {hint}") from exc
    patterns = [f"{folder}/**"] if folder else ["v*/**", "*.md", "*.json"]
    os.environ.setdefault("HF_HUB_ETAG_TIMEOUT", "10")
    offline = os.environ.get("HF_HUB_OFFLINE", "").lower() in {"1", "true", "yes"}
    try:  # with HF_HUB_OFFLINE set, huggingface_hub answers from its cache alone
        local = snapshot_download(
            repo_id=repo,
            repo_type="dataset",
            revision=revision,
            allow_patterns=patterns,
            cache_dir=str(cache_dir) if cache_dir else None,
        )
    except Exception as exc:  # network, auth and missing-repo errors all end the same way for the user
        if offline:
            raise SnapshotError(f"cannot download {uri}: HF_HUB_OFFLINE is set and it is not cached. {hint}") from exc
        raise SnapshotError(f"cannot download {uri}: {type(exc).__name__}: {exc}. {hint}") from exc
    path = Path(local)
    return path / folder if folder else path


def is_snapshot_dir(path: Path) -> bool:
    """True if `path` directly holds subset folders (composed ones included), or a dataset card naming its own."""
    if (path / CARD_NAME).is_file() or any((path / name).is_dir() for name in (*SUBSETS, NOISE)):
        return True
    return any(child.is_dir() and is_composed_subset(child.name) for child in path.iterdir())


def resolve_snapshot_dir(location: str | Path) -> Path:
    """Return the local snapshot folder for a location; a folder of versions resolves to the newest."""
    text = str(location)
    path = download_hub_snapshot(text) if text.startswith("hf://") else Path(text).expanduser()
    if not path.exists():
        raise SnapshotError(f"snapshot folder not found: {path}")
    if not path.is_dir():
        raise SnapshotError(f"snapshot must be a folder, got a file: {path}")
    if is_snapshot_dir(path):
        return path
    versions = sorted(p for p in path.iterdir() if p.is_dir() and _VERSION_RE.match(p.name) and is_snapshot_dir(p))
    if not versions:
        raise SnapshotError(
            f"{path} is not a LookBench snapshot: expected subset folders ({', '.join(SUBSETS)}, {NOISE}, composed) "
            "or version folders vYYYYMMDD holding them"
        )
    return versions[-1]
