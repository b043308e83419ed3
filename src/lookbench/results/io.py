"""Save and load result files: the JSON summary and its per-query table, written and read as one pair."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pyarrow as pa
from filelock import FileLock, Timeout
from pydantic import ValidationError

from lookbench._util.atomic import write_text_atomic
from lookbench._util.jsontext import loads
from lookbench._util.outfolder import refuse_foreign_file
from lookbench.errors import ResultError, first_problem
from lookbench.results.naming import per_query_name
from lookbench.results.per_query import read_per_query, write_per_query
from lookbench.results.schema import READABLE_MAJORS, ResultFile

LOCK_TIMEOUT_S = 120.0
LOCK_NAME = ".lookbench-results.lock"
"""One lock file per results folder (hidden; left in place, as deleting a lock file races with its waiters)."""


def save_result(result: ResultFile, path: Path) -> Path:
    """Write a result file atomically as indented JSON."""
    write_text_atomic(path, result.model_dump_json(indent=2) + "\n")
    return path


def save_run(result: ResultFile, per_query: pa.Table, path: Path) -> tuple[ResultFile, Path]:
    """Write a run's per-query file and then its JSON (recording the per-query sha256), under a lock.

    Two runs writing the same name take turns, so the pair on disk always comes from one run.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    lock = FileLock(str(path.with_name(LOCK_NAME)), timeout=LOCK_TIMEOUT_S)
    table_path = per_query_name(path)
    try:
        with lock:
            digest = write_per_query(per_query, table_path)
            saved = result.model_copy(update={"per_query_file": table_path.name, "per_query_sha256": digest})
            save_result(saved, path)
    except Timeout as exc:
        raise ResultError(f"{path}: another run held its lock for {LOCK_TIMEOUT_S:.0f}s; try again") from exc
    return saved, table_path


def check_result_target(path: Path, overwrite: bool) -> None:
    """Refuse a result path (or its per-query file) holding a file that is not a lookbench result's, unless
    `overwrite`: a run replaces only its own earlier result."""
    try:
        earlier: ResultFile | None = load_result(path) if path.exists() else None
    except ResultError:
        earlier = None
    table = per_query_name(path)
    refuse_foreign_file(path, ours=earlier is not None, overwrite=overwrite)
    refuse_foreign_file(table, ours=earlier is not None and earlier.per_query_file == table.name, overwrite=overwrite)


def load_result(path: Path) -> ResultFile:
    """Read and validate a result file, naming the file and field on error."""
    try:
        data = loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise ResultError(f"result file not found: {path}") from exc
    except OSError as exc:
        raise ResultError(f"{path}: cannot read the result file ({exc})") from exc
    except UnicodeDecodeError as exc:
        raise ResultError(f"{path}: not a result file (not UTF-8 text: {exc})") from exc
    except json.JSONDecodeError as exc:
        raise ResultError(f"{path}: not valid JSON ({exc})") from exc
    version = data.get("schema_version") if isinstance(data, dict) else None
    if (
        not isinstance(version, str)
        or not re.fullmatch(r"\d+\.\d+", version)
        or version.split(".")[0] not in READABLE_MAJORS
    ):
        expected = " or ".join(f"{major}.x" for major in READABLE_MAJORS)
        raise ResultError(f"{path}: result schema version {version!r} is not supported (expected {expected})")
    try:
        return ResultFile.model_validate(data)
    except ValidationError as exc:
        raise ResultError(f"{path}: field {first_problem(exc)}") from exc


def per_query_path(result_path: Path, result: ResultFile) -> Path:
    """Where a result's per-query file lives: a plain file name, beside the result file."""
    name = result.per_query_file
    if not name:
        raise ResultError(f"{result_path}: the result has no per-query file")
    if name in (".", "..") or "/" in name or "\\" in name or Path(name).name != name:
        raise ResultError(f"{result_path}: per_query_file {name!r} must be a file name beside the result file")
    return (Path(result_path).parent / name).resolve()


def load_with_per_query(path: Path) -> tuple[ResultFile, pa.Table | None]:
    """A result and its per-query table (None when the result has none), checked to be one run's pair.

    Every reader of result pairs (`tables`, `leaderboard`, `report`, `compare`) loads them here.
    """
    result = load_result(path)
    if not result.per_query_file:
        return result, None
    return result, read_per_query(per_query_path(path, result), result.per_query_sha256, path)
