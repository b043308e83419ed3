"""Result files of schema 1.2 (written by the code of 87b3758) still load, and a run today writes the same bytes
for every field but `schema_version` and the typed `model` record."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from lookbench.cli.main import app
from lookbench.embeddings.facts import ModelFacts
from lookbench.errors import ResultError
from lookbench.results.io import load_result, load_with_per_query

OLD = Path(__file__).parent / "data" / "v1_2"
OLD_RESULTS = sorted((OLD / "results").glob("*.json"))
VOLATILE = ("created_at", "timings", "environment")
"""Fields that differ between any two runs (the clock, the machine)."""


def _run_today(tmp_path: Path, model: str) -> dict[str, Any]:
    """Evaluate `model` on the fixture's snapshot with today's code; the written result as JSON."""
    out = tmp_path / "res" / "{model}__{snapshot}__{rule}.json"
    args = ["eval", "-s", str(tmp_path / "v20260301"), "-m", model, "-o", str(out), "--resamples", "50"]
    result = CliRunner().invoke(app, [*args, "--cache-dir", str(tmp_path / "cache")])
    assert result.exit_code == 0, result.output
    (written,) = [p for p in (tmp_path / "res").glob("*.json")]
    return json.loads(written.read_text())


def _drop_what_differs(new: dict[str, Any], old: dict[str, Any], root: Path) -> None:
    """Remove the fields a run may change (and the snapshot's location, a path of the machine that ran it)."""
    assert new["snapshot"].pop("location") == str(root / "v20260301")
    assert old["snapshot"].pop("location").endswith("/v1_2/v20260301")
    for field in (*VOLATILE, "schema_version", "model"):
        new.pop(field), old.pop(field)


@pytest.fixture
def copied(tmp_path: Path) -> Path:
    """The fixture's snapshot and embeddings folder, copied where the test may write."""
    shutil.copytree(OLD / "v20260301", tmp_path / "v20260301")
    shutil.copytree(OLD / "tiny-vectors", tmp_path / "tiny-vectors")
    return tmp_path


@pytest.mark.parametrize("path", OLD_RESULTS, ids=lambda p: p.name.split("__")[0])
def test_a_schema_1_2_result_loads_with_its_model_record_typed(path: Path) -> None:
    old = json.loads(path.read_text())
    result, per_query = load_with_per_query(path)
    assert per_query is not None and per_query.num_rows == 4
    model = result.model
    assert (model.spec, model.name, model.dim) == (
        old["model"]["spec"],
        old["model"]["name"],
        old["model"]["embedding_dim"],
    )
    assert model.card is not None and model.card.release_date == old["model"]["card"]["release_date"]
    for key, value in old["model"].items():  # every old key keeps its value, in its field or in `details`
        if key not in ("embedding_dim", "card"):
            assert (model.details[key] if key in model.details else getattr(model, key)) == value, key


def test_the_default_model_writes_the_old_bytes_outside_the_model_record(copied: Path) -> None:
    old = json.loads((OLD / "results" / "efficientnet-lite0__v20260301__main.json").read_text())
    new = _run_today(copied, "efficientnet-lite0")
    assert new["schema_version"] == "1.3" and old["schema_version"] == "1.2"
    _drop_what_differs(new, old, copied)
    assert json.dumps(new, indent=2) == json.dumps(old, indent=2)
    # the per-query table too: its sha256 was compared above, as `per_query_sha256`


def test_an_embeddings_folder_writes_the_old_bytes_and_its_card_as_a_fact_sheet(copied: Path) -> None:
    old = json.loads((OLD / "results" / "tiny-vectors__v20260301__main.json").read_text())
    new = _run_today(copied, f"embeddings:{copied / 'tiny-vectors'}")
    model = new["model"]
    assert model["card"] == ModelFacts.model_validate(old["model"]["card"]).model_dump(mode="json")
    assert (model["name"], model["kind"], model["dim"]) == ("tiny-vectors", "embeddings", 8)
    _drop_what_differs(new, old, copied)
    assert json.dumps(new, indent=2) == json.dumps(old, indent=2)


def test_an_old_flat_model_with_a_loose_card_is_read_leniently(tmp_path: Path) -> None:
    data = json.loads(OLD_RESULTS[0].read_text())
    data["model"]["card"] = {"release_date": "soon", "training_cutoff": "2024-03", "notes": "kept out", "params": 5}
    data["per_query_file"] = None
    path = tmp_path / "old.json"
    path.write_text(json.dumps(data))
    card = load_result(path).model.card
    assert card == ModelFacts(training_cutoff="2024-03", params=5)


def test_a_new_file_with_a_loose_card_is_refused_naming_the_field(tmp_path: Path) -> None:
    data = json.loads(OLD_RESULTS[0].read_text())
    data["schema_version"] = "1.3"
    data["model"] = {"spec": "x:y", "name": "y", "card": {"release_date": "soon"}}
    path = tmp_path / "new.json"
    path.write_text(json.dumps(data))
    with pytest.raises(ResultError, match=r"new.json: field model.card.release_date: .*'soon'"):
        load_result(path)


def test_an_old_model_of_the_wrong_shape_is_refused_naming_the_field(tmp_path: Path) -> None:
    data = json.loads(OLD_RESULTS[0].read_text())
    data["model"]["workers"] = "many"
    path = tmp_path / "old.json"
    path.write_text(json.dumps(data))
    with pytest.raises(ResultError, match=r"old.json: field model.workers: Input should be a valid integer"):
        load_result(path)
