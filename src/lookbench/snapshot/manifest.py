"""`MANIFEST.json`: per-file sha256, sizes and row counts of a published snapshot, and checking them."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path, PurePosixPath
from typing import Any

import pyarrow.parquet as pq

from lookbench._util.atomic import write_text_atomic
from lookbench._util.hashing import file_sha256
from lookbench._util.jsontext import loads
from lookbench.errors import SnapshotError

MANIFEST_NAME = "MANIFEST.json"
MANIFEST_FORMAT = "lookbench-manifest/1"


def _listed_files(root: Path) -> list[Path]:
    return sorted(
        p
        for p in root.rglob("*")
        if p.is_file()
        and p.name != MANIFEST_NAME
        and not any(part.startswith(".") for part in p.relative_to(root).parts)
    )


def describe_files(root: Path) -> dict[str, dict[str, Any]]:
    """`{relative path: {sha256, bytes[, rows]}}` for every file under `root` except the manifest."""
    files: dict[str, dict[str, Any]] = {}
    for path in _listed_files(root):
        entry: dict[str, Any] = {"sha256": file_sha256(path), "bytes": path.stat().st_size}
        if path.suffix == ".parquet":
            entry["rows"] = pq.ParquetFile(path).metadata.num_rows
        files[path.relative_to(root).as_posix()] = entry
    return files


def write_manifest(root: Path, **fields: Any) -> dict[str, Any]:
    """Write `root/MANIFEST.json` describing every file in `root`, plus the given fields."""
    manifest = {"format": MANIFEST_FORMAT, **fields, "files": describe_files(root)}
    write_text_atomic(root / MANIFEST_NAME, json.dumps(manifest, indent=2, sort_keys=True, default=str) + "\n")
    return manifest


def read_manifest(root: Path) -> dict[str, Any] | None:
    """The parsed manifest of a snapshot folder, or None if it has none."""
    path = root / MANIFEST_NAME
    if not path.is_file():
        return None
    try:
        data = loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise SnapshotError(f"{path}: unreadable manifest ({exc})") from exc
    if not isinstance(data, dict) or not isinstance(data.get("files"), dict):
        raise SnapshotError(f"{path}: not a LookBench manifest (no 'files' mapping)")
    return data


def inside_path(name: str) -> bool:
    """True if a manifest entry names a file inside the snapshot: relative, no '..', no drive or backslash."""
    pure = PurePosixPath(name)
    return (
        bool(name)
        and not pure.is_absolute()
        and "\\" not in name
        and ":" not in pure.parts[0]
        and all(part not in ("", ".", "..") for part in name.split("/"))
    )


def manifest_problems(root: Path, manifest: dict[str, Any], sha256: Callable[[Path], str] = file_sha256) -> list[str]:
    """Every mismatch between the folder and its manifest: missing, extra, changed files or row counts.

    `sha256` hashes a file (default: read it all; `open_snapshot` passes the digest index, which re-reads only
    files whose size or mtime changed)."""
    problems: list[str] = []
    listed: dict[str, Any] = manifest["files"]
    present = {p.relative_to(root).as_posix() for p in _listed_files(root)}
    for name in sorted(present - set(listed)):
        problems.append(f"{name}: not in the manifest")
    for name, entry in sorted(listed.items()):
        if not inside_path(name):
            problems.append(f"{name!r}: not a path inside the snapshot (absolute or with '..'); not checked")
            continue
        if not isinstance(entry, dict):
            problems.append(f"{name}: manifest entry is not an object")
            continue
        path = root / name
        if not path.is_file():
            problems.append(f"{name}: listed in the manifest but missing")
            continue
        if path.stat().st_size != entry.get("bytes"):
            problems.append(f"{name}: size {path.stat().st_size} != manifest {entry.get('bytes')}")
            continue
        if sha256(path) != entry.get("sha256"):
            problems.append(f"{name}: sha256 differs from the manifest")
            continue
        if "rows" in entry and pq.ParquetFile(path).metadata.num_rows != entry["rows"]:
            problems.append(f"{name}: row count differs from the manifest")
    return problems


def verify_manifest(root: Path, sha256: Callable[[Path], str] = file_sha256) -> dict[str, Any] | None:
    """Raise SnapshotError if `root` disagrees with its manifest; return the manifest (None if absent)."""
    manifest = read_manifest(root)
    if manifest is None:
        return None
    problems = manifest_problems(root, manifest, sha256)
    if problems:
        shown = "; ".join(problems[:5]) + (f"; and {len(problems) - 5} more" if len(problems) > 5 else "")
        raise SnapshotError(f"{root}: snapshot does not match {MANIFEST_NAME}: {shown}")
    return manifest
