"""sha256 in the forms lookbench uses: of bytes, of a file, of NUL-joined text parts and of canonical JSON."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

CHUNK = 1 << 22


def sha256_hex(data: bytes) -> str:
    """Hex sha256 of bytes (image bytes, cache payloads)."""
    return hashlib.sha256(data).hexdigest()


def sha256_digest(data: bytes) -> bytes:
    """Raw 32-byte sha256 of bytes (embedding cache keys)."""
    return hashlib.sha256(data).digest()


def file_sha256(path: Path) -> str:
    """Hex sha256 of a file, read in chunks."""
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        while chunk := fh.read(CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def parts_sha256(*parts: str) -> str:
    """Hex sha256 of text parts joined by NUL (cache keys built from several fields)."""
    return sha256_hex("\0".join(parts).encode())


def json_sha256(value: object) -> str:
    """Hex sha256 of the canonical JSON form (sorted keys, default separators) of a value."""
    return sha256_hex(json.dumps(value, sort_keys=True).encode())
