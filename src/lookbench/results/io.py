"""Save and load result files."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
from pydantic import ValidationError

from lookbench.atomic import write_text_atomic
from lookbench.errors import ResultError
from lookbench.results.schema import RESULT_SCHEMA_VERSION, ResultFile


def save_result(result: ResultFile, path: Path) -> Path:
    """Write a result file atomically as indented JSON."""
    write_text_atomic(path, result.model_dump_json(indent=2) + "\n")
    return path


def save_run(result: ResultFile, per_query: pa.Table, path: Path) -> Path:
    """Write a run: the per-query table beside the result file (`NAME.per_query.parquet`), then the result."""
    from lookbench.results.per_query import write_per_query

    table_path = path.with_name(path.stem + ".per_query.parquet")
    write_per_query(per_query, table_path)
    result.per_query_file = table_path.name
    return save_result(result, path)


def load_result(path: Path) -> ResultFile:
    """Read and validate a result file, naming the file and field on error."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise ResultError(f"result file not found: {path}") from exc
    except json.JSONDecodeError as exc:
        raise ResultError(f"{path}: not valid JSON ({exc})") from exc
    version = str(data.get("schema_version", "")) if isinstance(data, dict) else ""
    if version.split(".")[0] != RESULT_SCHEMA_VERSION.split(".")[0]:
        raise ResultError(f"{path}: result schema version {version!r} is not supported (expected 1.x)")
    try:
        return ResultFile.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise ResultError(f"{path}: field {where}: {first['msg']}") from exc


def per_query_path(result_path: Path, result: ResultFile) -> Path:
    """Where a result's per-query file lives (stored relative to the result file)."""
    if not result.per_query_file:
        raise ResultError(f"{result_path}: the result has no per-query file")
    return (Path(result_path).parent / result.per_query_file).resolve()
