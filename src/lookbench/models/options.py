"""Parse `ARGUMENT?key=value&...` model spec options."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import parse_qsl

from lookbench._util.hashing import sha256_hex
from lookbench.errors import LookBenchError


def split_options(argument: str, allowed: set[str]) -> tuple[str, dict[str, str]]:
    """Split `path?k=v&k2=v2` into the path and its options, rejecting unknown keys."""
    base, sep, query = argument.rpartition("?") if "?" in argument else (argument, "", "")
    pairs = parse_qsl(query, keep_blank_values=True, strict_parsing=bool(query)) if sep else []
    options = dict(pairs)
    repeated = sorted({key for key, _ in pairs if [k for k, _ in pairs].count(key) > 1})
    if repeated:
        raise LookBenchError(f"option(s) {', '.join(repeated)} given twice in {argument!r}; give each once")
    unknown = sorted(set(options) - allowed)
    if unknown:
        raise LookBenchError(
            f"unknown option(s) {', '.join(unknown)} in {argument!r}; allowed: {', '.join(sorted(allowed))}"
        )
    return base, options


def floats3(value: str, name: str) -> tuple[float, float, float]:
    """Parse `a,b,c` (or one number for all channels)."""
    try:
        parts = [float(v) for v in value.split(",")]
    except ValueError as exc:
        raise LookBenchError(f"option {name}={value!r}: expected numbers separated by commas") from exc
    if len(parts) == 1:
        parts *= 3
    if len(parts) != 3:
        raise LookBenchError(f"option {name}={value!r}: expected 1 or 3 numbers")
    return parts[0], parts[1], parts[2]


def folder_fingerprint(folder: Path) -> str:
    """Names, sizes and modification times of a local model folder's files: a cheap revision."""
    lines = []
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        stat = path.stat()
        lines.append(f"{path.relative_to(folder).as_posix()}\0{stat.st_size}\0{stat.st_mtime_ns}\n")
    return sha256_hex("".join(lines).encode())[:16]
