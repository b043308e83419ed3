"""`lookbench eval --model embeddings:DIR`, `tables` and `compare` end to end on a generated snapshot."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from conftest import make_row, png_bytes, write_snapshot
from lookbench.cli import eval_cmd
from lookbench.cli.main import app
from lookbench.embeddings.provider import ProviderBase
from lookbench.metrics.definitions import OUTFIT_METRIC
from lookbench.models.meta import FACT_FIELDS, ModelMeta, ModelRun
from lookbench.results.schema import MetricValue

runner = CliRunner()


@pytest.fixture
def snapshot(tmp_path: Path) -> Path:
    photo = png_bytes(1, 32)
    spec = {
        "real_studio_flat": {
            "query": [
                make_row("a", "dress", "red", ["v-neck"], first_seen_at=None),
                make_row("b", "skirt", "blue", []),
            ],
            "gallery": [
                make_row("a", "dress", "red", ["v-neck"]),
                make_row("x", "dress", "green", []),
                make_row("b", "skirt", "blue", []),
            ],
        },
        "real_streetlook": {
            "query": [
                make_row("s1", "pants", "black", raw=photo),
                make_row("s2", "shirt", "white", raw=photo),
            ],
            "gallery": [make_row("s1", "pants", "black"), make_row("s2", "shirt", "grey")],
        },
        "noise": {"gallery": [make_row("n0", "dress", "red", ["v-neck"]), make_row("n1", "pants", "black")]},
    }
    return write_snapshot(tmp_path / "snap", spec, "v20260301")


def _write_embeddings(root: Path, vectors: dict[str, np.ndarray]) -> Path:
    for key, array in vectors.items():
        path = root / f"{key}.npy"
        path.parent.mkdir(parents=True, exist_ok=True)
        np.save(path, array.astype(np.float32))
    return root


def _vectors(good: bool) -> dict[str, np.ndarray]:
    e = np.eye(8)
    return {
        # studio: query a -> noise n0 first (decoy), then its own gallery item
        "real_studio_flat/query": np.stack([e[0] + 0.1 * e[7], e[1]]) if good else np.stack([e[5], e[6]]),
        "real_studio_flat/gallery": np.stack([e[0], e[2], e[1]]),
        "real_streetlook/query": np.stack([e[3], e[4]]),
        "real_streetlook/gallery": np.stack([e[3], e[4]]),
        "noise/gallery": np.stack([e[0] + 0.2 * e[7], e[6]]),
    }


def test_eval_embeddings_writes_results(snapshot: Path, tmp_path: Path) -> None:
    emb = _write_embeddings(tmp_path / "emb", _vectors(True))
    out = tmp_path / "res" / "{model}__{snapshot}__{rule}.json"
    result = runner.invoke(
        app, ["eval", "--snapshot", str(snapshot), "--model", f"embeddings:{emb}", "-o", str(out), "--resamples", "50"]
    )
    assert result.exit_code == 0, result.output
    files = sorted(f for f in (tmp_path / "res").iterdir() if not f.name.startswith("."))
    assert [f.suffix for f in files] == [".json", ".parquet"]
    data = json.loads(files[0].read_text())
    assert data["schema_version"] == "2.0"
    assert data["snapshot"]["id"] == "v20260301"
    assert data["snapshot"]["subsets"]["real_studio_flat"] == {
        "queries": 2,
        "gallery": 3,
        "corpus": 5,
        "skipped_queries": 0,
        "skipped_corpus": 0,
    }
    m = data["metrics"]
    # studio q0 ranks n0 (noise, never relevant) then its gallery twin; q1 hits at rank 1
    assert m["real_studio_flat"]["fine_recall@1"]["value"] == 0.5
    assert m["real_studio_flat"]["fine_recall@5"]["value"] == 1.0
    assert m["real_studio_flat"]["mrr@5"]["value"] == pytest.approx(0.75)
    # street: s2's gallery item is a grey shirt -> coarse but not fine; the outfit fails
    assert m["real_streetlook"]["coarse_recall@1"]["value"] == 1.0
    assert m["real_streetlook"]["fine_recall@1"]["value"] == 0.5
    assert m["real_streetlook"]["outfit_recall@1"] == {"value": 0.0, "ci_low": 0.0, "ci_high": 0.0, "n": 1}
    assert m["overall"]["fine_recall@1"]["value"] == 0.5
    assert m["overall"]["fine_recall@1"]["n"] == 4
    assert data["per_category"]["real_studio_flat"]["dress"]["fine_recall@1"] == {"value": 0.0, "n": 1}
    per_query = pq.read_table(files[1])
    assert per_query.num_rows == 4
    assert per_query["topk_item_ids"][0].as_py()[:2] == ["n0", "a"]
    assert "fine_recall@1" in per_query.column_names
    assert "Overall" in result.output

    again = runner.invoke(
        app, ["eval", "-s", str(snapshot), "-m", f"embeddings:{emb}", "-o", str(out), "--skip-existing"]
    )
    assert again.exit_code == 0 and "skip" in again.output


def test_model_json_beside_embeddings_is_the_card(snapshot: Path, tmp_path: Path) -> None:
    emb = _write_embeddings(tmp_path / "emb", _vectors(True))
    (emb / "model.json").write_text(json.dumps({"name": "my-api-model", "training_cutoff": "2025-06-30"}))
    out = tmp_path / "{model}.json"
    r = runner.invoke(app, ["eval", "-s", str(snapshot), "-m", f"embeddings:{emb}", "-o", str(out)])
    assert r.exit_code == 0, r.output
    model = json.loads((tmp_path / "my-api-model.json").read_text())["model"]
    card = ModelMeta(name="my-api-model", training_cutoff="2025-06-30")
    assert {k: model["meta"][k] for k in FACT_FIELDS} == card.fact_sheet()
    for text, problem in (
        ("[1, 2]", "field model.json: Input should be an object"),
        ('{"training_cutoff": "soon"}', "field training_cutoff: Value error, expected a date"),
        ('{"licence": "mit"}', "field licence: Extra inputs are not permitted"),
        ("{", "field model.json: Invalid JSON"),
    ):
        (emb / "model.json").write_text(text)
        r = runner.invoke(app, ["eval", "-s", str(snapshot), "-m", f"embeddings:{emb}", "-o", str(out)])
        assert r.exit_code == 2 and problem in r.output.replace("\n", ""), r.output


def test_tables_and_compare(snapshot: Path, tmp_path: Path) -> None:
    paths = []
    for name, good in (("good", True), ("bad", False)):
        emb = _write_embeddings(tmp_path / name, _vectors(good))
        out = tmp_path / "res" / f"{name}.json"
        r = runner.invoke(app, ["eval", "-s", str(snapshot), "-m", f"embeddings:{emb}", "-o", str(out)])
        assert r.exit_code == 0, r.output
        paths.append(out)
    r = runner.invoke(app, ["tables", *map(str, paths), "--out", str(tmp_path / "tables")])
    assert r.exit_code == 0, r.output
    md = (tmp_path / "tables" / "tables.md").read_text()
    assert "### fine_recall@1 (%)" in md and "| RealStudioFlat |" in md.replace("| model ", "")
    csv_text = (tmp_path / "tables" / "tables.csv").read_text().splitlines()
    assert csv_text[0] == "model,metric,subset,value,ci_low,ci_high,n,release,run_id"
    r = runner.invoke(app, ["compare", str(paths[0]), str(paths[1]), "--resamples", "200"])
    assert r.exit_code == 0, r.output
    assert "fine_recall@1" in r.output


def test_strict_rule_and_window(snapshot: Path, tmp_path: Path) -> None:
    emb = _write_embeddings(tmp_path / "emb", _vectors(True))
    out = tmp_path / "strict.json"
    r = runner.invoke(
        app,
        ["eval", "-s", str(snapshot), "-m", f"embeddings:{emb}", "-o", str(out), "--fine-rule", "strict"],
    )
    assert r.exit_code == 0, r.output
    assert json.loads(out.read_text())["config"]["fine_rule"] == "strict"
    # no per-row dates: queries are dated by the snapshot (2026-03-01)
    r = runner.invoke(
        app, ["eval", "-s", str(snapshot), "-m", f"embeddings:{emb}", "-o", str(out), "--since", "2026-04-01"]
    )
    assert r.exit_code == 2 and "no queries to evaluate" in r.output
    r = runner.invoke(
        app, ["eval", "-s", str(snapshot), "-m", f"embeddings:{emb}", "-o", str(out), "--since", "2026-03-01"]
    )
    assert r.exit_code == 0
    window = json.loads(out.read_text())["config"]["window"]
    assert window == {"since": "2026-03-01", "until": None, "kept_queries": 4, "total_queries": 4}


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda v: v.update({"noise/gallery": v["noise/gallery"][:1]}), "1 rows of embeddings for 2 parquet rows"),
        (lambda v: v.update({"real_studio_flat/gallery": np.eye(3, 9)}), "dimension 9 does not match 8"),
        (lambda v: v["real_streetlook/query"].__setitem__((1, 0), math.nan), "NaN or infinite values in row(s) 1"),
        (lambda v: v["real_studio_flat/gallery"].__setitem__(2, 0.0), "zero vector(s) in row(s) 2"),
        (lambda v: v.pop("real_streetlook/gallery"), "missing embeddings file"),
    ],
)
def test_bad_embeddings_are_named(snapshot: Path, tmp_path: Path, change, message: str) -> None:  # type: ignore[no-untyped-def]
    vectors = _vectors(True)
    change(vectors)
    emb = _write_embeddings(tmp_path / "emb", vectors)
    r = runner.invoke(app, ["eval", "-s", str(snapshot), "-m", f"embeddings:{emb}", "-o", str(tmp_path / "r.json")])
    assert r.exit_code == 2
    assert message in r.output.replace("\n", "")


def test_bad_options(snapshot: Path, tmp_path: Path) -> None:
    r = runner.invoke(app, ["eval", "-s", str(snapshot), "-m", "nope:x", "-o", str(tmp_path / "r.json")])
    assert r.exit_code == 2 and "unknown model kind 'nope'" in r.output
    r = runner.invoke(app, ["eval", "-s", str(snapshot), "-m", "embeddings:/x", "--k", "0,5"])
    assert r.exit_code == 2 and "--k" in r.output
    r = runner.invoke(app, ["tables", str(tmp_path / "missing.json")])
    assert r.exit_code == 2 and "result file not found" in r.output


class SkippingProvider(ProviderBase):
    """Precomputed embeddings with some rows marked as undecodable, as a model provider reports them."""

    def __init__(self, root: Path, skipped: dict[tuple[str, str], dict[int, str]]) -> None:
        from lookbench.embeddings.precomputed import PrecomputedEmbeddings

        self.inner = PrecomputedEmbeddings(root)
        self.spec = "skipping"
        self.skipped = skipped

    def embed_split(self, snapshot, subset: str, split: str) -> np.ndarray:  # type: ignore[no-untyped-def]
        array = np.array(self.inner.embed_split(snapshot, subset, split))
        for row in self.skipped.get((subset, split), {}):
            array[row] = 0.0
        return array

    def describe(self) -> ModelRun:
        return ModelMeta(spec=self.spec).result_record("skipping")


def test_skipped_rows_are_excluded_and_recorded(snapshot: Path, tmp_path: Path) -> None:
    from lookbench.evaluation.runner import EvalSettings, evaluate
    from lookbench.snapshot import open_snapshot

    emb = _write_embeddings(tmp_path / "emb", _vectors(True))
    skipped = {
        ("noise", "gallery"): {0: "truncated"},  # the decoy that outranked studio query 0
        ("real_studio_flat", "query"): {1: "bad header"},
    }
    out = evaluate(open_snapshot(snapshot), SkippingProvider(emb, skipped), EvalSettings(resamples=20))
    info = out.result.snapshot.subsets["real_studio_flat"]
    assert (info.queries, info.skipped_queries, info.skipped_corpus) == (1, 1, 1)
    assert out.result.metrics["real_studio_flat"]["fine_recall@1"].value == 1.0
    assert out.result.skipped == [
        {"subset": "noise", "split": "gallery", "row": 0, "error": "truncated"},
        {"subset": "real_studio_flat", "split": "query", "row": 1, "error": "bad header"},
    ]
    assert -1 not in out.per_query["topk_rows"].to_pylist()[0][:4]


def _value(value: float, n: int) -> MetricValue:
    return MetricValue(value=value, ci_low=max(0.0, value - 0.05), ci_high=min(1.0, value + 0.05), n=n)


def test_the_printed_table_leaves_out_outfit_recall_of_subsets_with_too_few_outfits(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """46 outfits (the small default's street subset) show no Outfit R@1; 150 do; the note names the short one."""
    few = eval_cmd.MIN_SHOWN_OUTFITS - 54
    metrics = {
        "real_streetlook": {"fine_recall@1": _value(0.25, 120), OUTFIT_METRIC: _value(0.0, few)},
        "aigen_streetlook": {"fine_recall@1": _value(0.5, 400), OUTFIT_METRIC: _value(0.125, 150)},
    }
    eval_cmd._print_summary(metrics, (), "t", intervals=False)
    out = capsys.readouterr().out
    rows = {line.split("│")[1].strip(): line for line in out.splitlines() if line.count("│") >= 3}
    assert "12.50" in rows["AIGen-StreetLook"]
    assert "0.00" not in rows["RealStreetLook"] and "-" in rows["RealStreetLook"].split("│")[-3]
    assert f"fewer than {eval_cmd.MIN_SHOWN_OUTFITS} outfits (RealStreetLook {few})" in " ".join(out.split())
    metrics.pop("aigen_streetlook")
    eval_cmd._print_summary(metrics, (), "t", intervals=False)
    table, note = capsys.readouterr().out.split("Outfit R@1 not shown")
    assert "Outfit" not in table and "RealStreetLook" in note
