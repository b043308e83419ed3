"""Result files are read strictly (schema version `MAJOR.MINOR` as a string, metric values real numbers), and a
model spec option given twice is refused: each in one line, exit 2."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hostilekit import clean_error, evaluate, invoke, make_snapshot, vectors, write_vectors


@pytest.fixture(scope="module")
def result(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("strict")
    evaluate(make_snapshot(root / "snap"), write_vectors(root / "emb", vectors()), root / "r.json")
    return {"root": root, "data": json.loads((root / "r.json").read_text())}


def tables_of(result: dict[str, Any], tmp_path: Path, edit: dict[str, Any]) -> object:
    """`tables` on a copy of the result with `edit` applied (keys: top-level field, or `metric` for one value)."""
    data = json.loads(json.dumps(result["data"]))
    if "metric" in edit:
        data["metrics"]["overall"]["fine_recall@1"]["value"] = edit["metric"]
    else:
        data.update(edit)
    path = tmp_path / "r.json"
    path.write_text(json.dumps(data))
    (tmp_path / data["per_query_file"]).write_bytes((result["root"] / data["per_query_file"]).read_bytes())
    return invoke("tables", str(path))


@pytest.mark.parametrize("version", ["1.x", "1.2", "1.3", "3.0", "2.0.0.0.1", "2", 2.0, "2.0 "])
def test_tables_refuses_a_schema_version_that_is_not_major_dot_minor(
    result: dict[str, Any], tmp_path: Path, version: object
) -> None:
    outcome = tables_of(result, tmp_path, {"schema_version": version})
    clean_error(outcome, str(tmp_path / "r.json"), "schema version", "is not supported")  # type: ignore[arg-type]


@pytest.mark.parametrize("value", ["0.5", True])
def test_tables_refuses_a_metric_value_that_is_not_a_number(
    result: dict[str, Any], tmp_path: Path, value: object
) -> None:
    outcome = tables_of(result, tmp_path, {"metric": value})
    clean_error(outcome, str(tmp_path / "r.json"), "metrics.overall.fine_recall@1.value")  # type: ignore[arg-type]


def test_tables_still_reads_the_result_as_written(result: dict[str, Any], tmp_path: Path) -> None:
    outcome = tables_of(result, tmp_path, {})
    assert outcome.exit_code == 0, outcome.output  # type: ignore[attr-defined]


def test_a_spec_option_given_twice_is_refused(tmp_path: Path) -> None:
    snap = make_snapshot(tmp_path / "snap")
    outcome = invoke("audit", str(snap), "--baselines", "features:thumbnail?side=8&side=16")
    clean_error(outcome, "side given twice", "thumbnail?side=8&side=16")
