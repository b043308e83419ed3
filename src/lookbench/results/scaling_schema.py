"""What a `lookbench scaling` study measured: one record per grid cell (its `scaling.json`), validated on reading."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import TypeAdapter, ValidationError

from lookbench._util.configfile import validation_message
from lookbench.errors import TrainError


@dataclass
class CellResult:
    """What one cell measured."""

    backbone: str
    fraction: float
    images: int
    items: int
    steps: int
    metrics: dict[str, dict[str, float]]
    result_file: str
    config_fingerprint: str | None = None
    """sha256 of what made the cell (its training config, or its frozen backbone, and the evaluation)."""


CELL_RESULTS = TypeAdapter(list[CellResult])


def parse_cell_results(data: Any, where: str) -> list[CellResult]:
    """Validated cell records (a `scaling.json` list); errors name `where`, the record and the field."""
    try:
        results = CELL_RESULTS.validate_python(data)
    except ValidationError as exc:
        problem = validation_message(exc)
        raise TrainError(f"{where}: not cell results written by `lookbench scaling` ({problem})") from exc
    for number, result in enumerate(results):
        for metric, value in result.metrics.items():
            missing = {"value", "ci_low", "ci_high"} - set(value)
            if missing:
                raise TrainError(f"{where}: record {number}: metrics.{metric} lacks {', '.join(sorted(missing))}")
    return results
