"""Published reference numbers on the legacy benchmarks (package data), shown as labelled rows beside runs."""

from __future__ import annotations

from importlib import resources

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from lookbench._util.yamlfile import parse_yaml
from lookbench.errors import LookBenchError

REFERENCES_FILE = "data/references.yaml"


class Reference(BaseModel):
    """One published result: a model's numbers on one scope of one dataset, and where they were published."""

    model_config = ConfigDict(extra="forbid")

    dataset: str
    scope: str
    model: str
    metrics: dict[str, float]
    """Metric key -> value in percent, as published."""
    source: str
    url: str

    @field_validator("metrics")
    @classmethod
    def _percent(cls, value: dict[str, float]) -> dict[str, float]:
        for key, number in value.items():
            if "@" not in key or not 0.0 <= number <= 100.0:
                raise ValueError(f"{key}: expected a metric@K key and a percentage in [0, 100], got {number}")
        return value

    @property
    def label(self) -> str:
        """The row label in tables: marked as a reference, with its source."""
        return f"reference: {self.model} ({self.source})"

    def fraction(self, metric: str) -> float | None:
        """The value of a metric as a fraction, None when not published."""
        value = self.metrics.get(metric)
        return None if value is None else round(value / 100.0, 9)


def load_references() -> list[Reference]:
    """Every shipped reference row, validated."""
    text = resources.files("lookbench.results").joinpath(REFERENCES_FILE).read_text("utf-8")
    raw = parse_yaml(text, REFERENCES_FILE)
    if not isinstance(raw, list):
        raise LookBenchError(f"{REFERENCES_FILE}: expected a list of reference rows")
    rows = []
    for number, entry in enumerate(raw):
        try:
            rows.append(Reference.model_validate(entry))
        except ValidationError as exc:
            raise LookBenchError(f"{REFERENCES_FILE}: entry {number}: {exc.errors()[0]['msg']}") from exc
    return rows


def references_for(datasets: set[str]) -> list[Reference]:
    """The reference rows of the given datasets (protocol names), in file order."""
    return [r for r in load_references() if r.dataset in datasets]
