"""Atomic file writes: a crash never leaves a half-written file in place, and files get the usual umask mode."""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
from collections.abc import Iterator
from pathlib import Path


def _create_temp(target: Path) -> Path:
    """Create an empty temporary file beside `target`, mode 0666 less the umask (as `open()` would make it)."""
    for _ in range(100):
        tmp = target.with_name(f".{target.name}.{secrets.token_hex(6)}.tmp")
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        except FileExistsError:
            continue
        os.close(fd)
        return tmp
    raise FileExistsError(f"cannot create a temporary file beside {target}")


@contextlib.contextmanager
def atomic_path(target: Path | str) -> Iterator[Path]:
    """Yield a temporary path beside `target` that replaces it only if the block succeeds."""
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = _create_temp(target)
    try:
        yield tmp
        os.replace(tmp, target)
    finally:
        if tmp.exists():
            tmp.unlink()


def write_text_atomic(target: Path | str, text: str) -> None:
    """Write text to `target` atomically."""
    with atomic_path(target) as tmp:
        tmp.write_text(text, encoding="utf-8")


def write_bytes_atomic(target: Path | str, data: bytes) -> None:
    """Write bytes to `target` atomically."""
    with atomic_path(target) as tmp:
        tmp.write_bytes(data)


@contextlib.contextmanager
def atomic_folder(target: Path | str) -> Iterator[Path]:
    """Yield an empty folder beside `target` (usual umask mode) that replaces `target` only if the block succeeds.

    An existing `target` is moved aside, the new folder renamed into place, and the old one removed.
    """
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.{secrets.token_hex(6)}.tmp")
    tmp.mkdir()
    try:
        yield tmp
        if target.exists():
            old = target.with_name(f".{target.name}.old-{secrets.token_hex(6)}")
            os.replace(target, old)
            os.replace(tmp, target)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(tmp, target)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
