"""Digests in the forms lookbench uses: sha256 of bytes, of a file, of NUL-joined text parts, of canonical JSON and
streamed over many parts; image digests by algorithm name; short sha1 ids; seeded order keys. Every other module
hashes through here."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from _hashlib import HASH

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


def sha256_stream() -> HASH:
    """A sha256 fed part by part with `update` (a fingerprint over many arrays, never held whole)."""
    return hashlib.sha256()


def digest(data: bytes, algorithm: str = "sha256") -> bytes:
    """Raw digest of bytes by hashlib name (image digests: sha256, and sha1 where a dataset's ids are sha1)."""
    return hashlib.new(algorithm, data).digest()


def digest_size(algorithm: str) -> int:
    """Bytes in one digest of `algorithm`."""
    return hashlib.new(algorithm).digest_size


def sha1_hex(text: str) -> str:
    """Hex sha1 of text: short stable ids only (sample ids, split draws, long file names), kept so ids written
    before stay the same; never a content check."""
    return hashlib.sha1(text.encode("utf-8", errors="replace")).hexdigest()


def order_key(text: str) -> bytes:
    """An 8-byte blake2b of text: a cheap key for a seeded order that does not depend on input order."""
    return hashlib.blake2b(text.encode(), digest_size=8).digest()
