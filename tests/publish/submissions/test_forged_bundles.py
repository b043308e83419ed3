"""Bundles forged as a hostile submitter would: the per-query file edited and every declared number regenerated with
lookbench's own summariser, the manifest resealed. `verify` refuses each with one line and exit 2."""

from __future__ import annotations

import json
import os
import shutil
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from submission_kit import Run, build_run, reseal, runner

from lookbench.cli.main import app
from lookbench.evaluation.summary import summarise_table
from lookbench.results.io import load_result, save_result
from lookbench.results.per_query import metric_columns, read_per_query, write_per_query
from lookbench.results.schema import DateWindow

SUBSET = "real_studio_flat"
RESULT = "tiny.json"
TABLE = "tiny.per_query.parquet"


@pytest.fixture(name="run", scope="module")
def run_fixture(tmp_path_factory: pytest.TempPathFactory) -> Run:
    return build_run(tmp_path_factory.mktemp("forgery"))


@pytest.fixture(name="quiet_run", scope="module")
def quiet_run_fixture(tmp_path_factory: pytest.TempPathFactory) -> Run:
    return build_run(tmp_path_factory.mktemp("quiet"), noise_pool="none")


def submit(run: Run, repo: Path, embeddings: bool) -> Path:
    args = ["submit", str(run.result), "--out", str(repo)] + (
        ["--embeddings", str(run.embeddings)] if embeddings else []
    )
    outcome = runner.invoke(app, args)
    assert outcome.exit_code == 0, outcome.output
    (folder,) = [p.parent for p in repo.rglob("manifest.json")]
    return folder


def verify(bundle: Path, snapshot: Path) -> tuple[int, str]:
    outcome = runner.invoke(app, ["verify", str(bundle), "--snapshot", str(snapshot)])
    return outcome.exit_code, " ".join(outcome.output.split())


def table_of(bundle: Path) -> pa.Table:
    return read_per_query(bundle / TABLE)


def forge(bundle: Path, table: pa.Table, **changes: object) -> None:
    """Write `table` as the per-query file, regenerate every number and query count from it, apply `changes` to the
    result and reseal the manifest."""
    result = load_result(bundle / RESULT)
    summary = summarise_table(table, result.config.bootstrap, ())
    counts = Counter(table["subset"].to_pylist())
    subsets = {n: i.model_copy(update={"queries": counts[n]}) for n, i in result.snapshot.subsets.items()}
    digest = write_per_query(table, bundle / TABLE)
    update = {**summary.fields(), "per_query_sha256": digest}
    update["snapshot"] = result.snapshot.model_copy(update={"subsets": subsets})
    save_result(result.model_copy(update={**update, **changes}), bundle / RESULT)
    reseal(bundle)


def hits(table: pa.Table) -> np.ndarray:
    return table["fine_recall@1"].to_numpy() == 1.0


def repeat_best(table: pa.Table) -> pa.Table:
    return table.take([int(np.flatnonzero(hits(table))[0])] * table.num_rows)


def keep_hits(table: pa.Table) -> pa.Table:
    return table.filter(pa.array(hits(table)))


def all_hits(table: pa.Table) -> pa.Table:
    """Every hit flag and metric column set to a perfect score; the rankings left as they were."""
    for name in ("fine", "coarse", "item"):
        flags = pc.list_flatten(table[name])
        perfect = pa.ListArray.from_arrays(table[name].combine_chunks().offsets, pa.array(np.ones(len(flags), bool)))
        table = table.set_column(table.column_names.index(name), name, perfect)
    for name in metric_columns(table):
        value = 0.0 if name.startswith("distractor") else 1.0
        table = table.set_column(table.column_names.index(name), name, pa.array(np.full(table.num_rows, value)))
    return table


FORGERIES: dict[str, Callable[[pa.Table], pa.Table]] = {
    "repeat-best-query": repeat_best,
    "keep-hit-queries": keep_hits,
    "rewrite-hit-flags": all_hits,
}


@pytest.mark.parametrize("embeddings", [True, False], ids=["with-embeddings", "rankings-only"])
@pytest.mark.parametrize("name", list(FORGERIES))
def test_verify_refuses_a_regenerated_per_query_file(run: Run, tmp_path: Path, name: str, embeddings: bool) -> None:
    bundle = submit(run, tmp_path / "repo", embeddings)
    before = load_result(bundle / RESULT).metrics["overall"]["fine_recall@1"].value
    forge(bundle, FORGERIES[name](table_of(bundle)))
    assert load_result(bundle / RESULT).metrics["overall"]["fine_recall@1"].value > before  # the forgery pays
    code, text = verify(bundle, run.snapshot)
    assert code == 2, text
    assert "verified" not in text and "Traceback" not in text
    assert SUBSET in text or "queries" in text


def test_verify_names_the_column_and_query_of_rewritten_flags(run: Run, tmp_path: Path) -> None:
    bundle = submit(run, tmp_path / "repo", embeddings=False)
    forge(bundle, all_hits(table_of(bundle)))
    code, text = verify(bundle, run.snapshot)
    assert code == 2
    assert f"{TABLE}: column fine of {SUBSET} query row" in text and "re-scoring its rankings" in text


def test_verify_counts_queries_against_the_snapshot_not_the_bundle(run: Run, tmp_path: Path) -> None:
    bundle = submit(run, tmp_path / "repo", embeddings=False)
    forge(bundle, keep_hits(table_of(bundle)))
    code, text = verify(bundle, run.snapshot)
    assert code == 2
    kept = int(hits(read_per_query(run.result.with_name(TABLE))).sum())
    assert (
        f"column query_row of {SUBSET} lists {kept} queries, but the snapshot and the declared window keep 12" in text
    )


@pytest.mark.parametrize("embeddings", [True, False], ids=["with-embeddings", "rankings-only"])
def test_verify_applies_a_declared_window(run: Run, tmp_path: Path, embeddings: bool) -> None:
    bundle = submit(run, tmp_path / "repo", embeddings)
    window = DateWindow(since="2026-01-01", kept_queries=12, total_queries=12)  # half the queries are older
    result = load_result(bundle / RESULT)
    forge(bundle, table_of(bundle), config=result.config.model_copy(update={"window": window}))
    code, text = verify(bundle, run.snapshot)
    assert code == 2, text
    assert (
        ("keep 6" in text)
        if not embeddings
        else ("12 queries, but re-searching the bundled embeddings gives 6" in text)
    )


def test_an_honest_run_without_noise_verifies_in_its_own_folder(run: Run, quiet_run: Run, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    submit(run, repo / "a", embeddings=True)
    quiet = submit(quiet_run, repo / "b", embeddings=True)
    assert quiet.name == "v20260201__noise-none"
    assert not (quiet / "embeddings" / "noise").exists()
    code, text = verify(quiet, quiet_run.snapshot)
    assert code == 0, text
    assert ": verified," in text


def _relabel_as_noise_all(bundle: Path, noise: Path) -> None:
    result = load_result(bundle / RESULT)
    subsets = {n: i.model_copy(update={"corpus": i.corpus + 5}) for n, i in result.snapshot.subsets.items()}
    snapshot = result.snapshot.model_copy(update={"noise_rows": 5, "subsets": subsets})
    config = result.config.model_copy(update={"noise": "all"})
    if (bundle / "embeddings").exists():
        (bundle / "embeddings" / "noise").mkdir()
        shutil.copyfile(noise, bundle / "embeddings" / "noise" / "gallery.npy")
    forge(bundle, table_of(bundle), snapshot=snapshot, config=config)


def test_a_run_without_noise_relabelled_as_noise_all_is_not_verified(quiet_run: Run, tmp_path: Path) -> None:
    noise = quiet_run.embeddings / "noise" / "gallery.npy"
    bundle = submit(quiet_run, tmp_path / "a", embeddings=True)
    _relabel_as_noise_all(bundle, noise)
    code, text = verify(bundle, quiet_run.snapshot)
    assert code == 2, text
    assert "re-searching the bundled embeddings" in text
    rankings = submit(quiet_run, tmp_path / "b", embeddings=False)
    _relabel_as_noise_all(rankings, noise)
    code, text = verify(rankings, quiet_run.snapshot)
    assert code == 0 and ": unverified," in text  # rankings alone cannot show what they left out: never verified


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda t: t.drop_columns(["topk_rows"]), "column topk_rows is missing"),
        (
            lambda t: t.set_column(
                t.column_names.index("topk_rows"),
                "topk_rows",
                pa.array([r[: 1 + i % 3] for i, r in enumerate(t["topk_rows"].to_pylist())]),
            ),
            "column topk_rows of real_studio_flat query row 0 holds 1 entries",
        ),
        (
            lambda t: t.set_column(
                t.column_names.index("topk_rows"),
                "topk_rows",
                pa.array([[r[0]] * len(r) for r in t["topk_rows"].to_pylist()]),
            ),
            "column topk_rows of real_studio_flat query row 0 repeats a corpus row",
        ),
        (
            lambda t: t.set_column(
                t.column_names.index("topk_rows"),
                "topk_rows",
                pa.array([[99] * len(r) for r in t["topk_rows"].to_pylist()]),
            ),
            "points outside the corpus",
        ),
    ],
    ids=["missing", "ragged", "repeated-row", "outside"],
)
def test_verify_names_a_broken_ranking(
    run: Run, tmp_path: Path, change: Callable[[pa.Table], pa.Table], message: str
) -> None:
    bundle = submit(run, tmp_path / "repo", embeddings=False)
    forge(bundle, change(table_of(bundle)))
    code, text = verify(bundle, run.snapshot)
    assert code == 2, text
    assert message in text


def test_verify_names_a_skipped_row_out_of_range(run: Run, tmp_path: Path) -> None:
    bundle = submit(run, tmp_path / "repo", embeddings=False)
    skipped = [{"subset": SUBSET, "split": "gallery", "row": 99, "error": "undecodable"}]
    forge(bundle, table_of(bundle), skipped=skipped)
    code, text = verify(bundle, run.snapshot)
    assert code == 2
    assert "field skipped[0].row is 99; real_studio_flat/gallery has 12 rows" in text


@pytest.mark.parametrize("value", ["NaN", "Infinity", "-0.25", "7.5"])
def test_verify_refuses_a_metric_that_is_not_a_fraction(run: Run, tmp_path: Path, value: str) -> None:
    bundle = submit(run, tmp_path / "repo", embeddings=False)
    data = json.loads((bundle / RESULT).read_text())
    data["metrics"]["overall"]["fine_recall@1"]["value"] = 0.123456
    (bundle / RESULT).write_text(json.dumps(data).replace("0.123456", value))
    reseal(bundle)
    code, text = verify(bundle, run.snapshot)
    assert code == 2
    assert "field metrics.overall.fine_recall@1.value" in text and "not a fraction in [0, 1]" in text


def test_verify_refuses_an_embeddings_path_out_of_the_bundle(run: Run, tmp_path: Path) -> None:
    bundle = submit(run, tmp_path / "repo", embeddings=True)
    manifest = json.loads((bundle / "manifest.json").read_text())
    (bundle / "manifest.json").write_text(json.dumps({**manifest, "embeddings": str(run.embeddings)}))
    code, text = verify(bundle, run.snapshot)
    assert code == 2
    assert "manifest.json: field embeddings must be 'embeddings' or null" in text


@pytest.mark.parametrize("field", ["result", "files"])
def test_verify_refuses_a_manifest_path_out_of_the_bundle(run: Run, tmp_path: Path, field: str) -> None:
    bundle = submit(run, tmp_path / "repo", embeddings=False)
    manifest = json.loads((bundle / "manifest.json").read_text())
    if field == "result":
        manifest["result"] = f"../../../../{run.result.relative_to(tmp_path.parent)}"
    else:
        manifest["files"]["../outside.json"] = manifest["files"]["card.json"]
    (bundle / "manifest.json").write_text(json.dumps(manifest))
    code, text = verify(bundle, run.snapshot)
    assert code == 2
    assert f"manifest.json: field {field}" in text and "Traceback" not in text


def test_verify_refuses_a_file_linked_out_of_the_bundle(run: Run, tmp_path: Path) -> None:
    bundle = submit(run, tmp_path / "repo", embeddings=False)
    outside = tmp_path / "card-copy.json"
    shutil.copyfile(bundle / "card.json", outside)
    (bundle / "card.json").unlink()
    os.symlink(outside, bundle / "card.json")  # same bytes, so the digest still matches
    code, text = verify(bundle, run.snapshot)
    assert code == 2
    assert "card.json: a symbolic link; a bundle holds plain files only" in text


def test_verify_refuses_a_bundle_carrying_its_own_snapshot_files(run: Run, tmp_path: Path) -> None:
    bundle = submit(run, tmp_path / "repo", embeddings=False)
    (bundle / "AUDIT.json").write_text("{}")
    reseal(bundle)  # listed in the manifest with its digest
    code, text = verify(bundle, run.snapshot)
    assert code == 2
    assert "AUDIT.json: not a file a bundle of" in text


def test_verify_refuses_a_snapshot_location_inside_the_bundle(run: Run, tmp_path: Path) -> None:
    bundle = submit(run, tmp_path / "repo", embeddings=False)
    result = load_result(bundle / RESULT)
    forge(bundle, table_of(bundle), snapshot=result.snapshot.model_copy(update={"location": str(bundle / "x")}))
    code, text = verify(bundle, run.snapshot)
    assert code == 2
    assert "field snapshot.location points inside the bundle" in text


@pytest.mark.parametrize("content", [b"{not json", b"\xff\xfe"], ids=["not-json", "not-utf8"])
def test_verify_names_a_resealed_card_that_is_not_json(run: Run, tmp_path: Path, content: bytes) -> None:
    bundle = submit(run, tmp_path / "repo", embeddings=False)
    (bundle / "card.json").write_bytes(content)
    reseal(bundle)
    code, text = verify(bundle, run.snapshot)
    assert code == 2
    assert "card.json: not valid JSON" in text


def test_verify_refuses_a_per_query_column_of_another_type(run: Run, tmp_path: Path) -> None:
    bundle = submit(run, tmp_path / "repo", embeddings=True)
    table = table_of(bundle)
    flags = pa.array([[int(x) for x in r] for r in table["fine"].to_pylist()])  # 0/1 instead of booleans
    forge(bundle, table.set_column(table.column_names.index("fine"), "fine", flags))
    code, text = verify(bundle, run.snapshot)
    assert code == 2
    assert "column fine is list<element: int64>, but re-searching the bundled embeddings gives list<item: bool>" in text


@pytest.mark.parametrize(
    ("field", "value", "problem"),
    [
        ("ks", [1, 5, 1_000_000_000], "cut-offs must lie in 1..100"),
        ("ks", [0, 5], "cut-offs must lie in 1..100"),
        ("resamples", 10_000_000_000, "less than or equal to 100000"),
    ],
)
def test_verify_refuses_a_declared_count_over_its_limit_in_one_line(
    run: Run, tmp_path: Path, field: str, value: object, problem: str
) -> None:
    bundle = submit(run, tmp_path / "repo", embeddings=True)
    data = json.loads((bundle / RESULT).read_text())
    if field == "ks":
        data["config"]["ks"] = value
    else:
        data["config"]["bootstrap"]["resamples"] = value
    (bundle / RESULT).write_text(json.dumps(data))
    reseal(bundle)
    outcome = runner.invoke(app, ["verify", str(bundle), "--snapshot", str(run.snapshot)])
    assert outcome.exit_code == 2 and isinstance(outcome.exception, SystemExit), outcome.output
    assert len(outcome.output.strip().splitlines()) == 1 and problem in outcome.output, outcome.output
    assert str(bundle / RESULT) in " ".join(outcome.output.split())


def test_verify_names_a_bundled_npy_that_is_an_npz_archive(run: Run, tmp_path: Path) -> None:
    bundle = submit(run, tmp_path / "repo", embeddings=True)
    (target,) = [p for p in (bundle / "embeddings").rglob("query.npy") if p.parent.name == SUBSET]
    with target.open("wb") as file:
        np.savez(file, vectors=np.load(run.embeddings / SUBSET / "query.npy"))
    reseal(bundle)
    code, text = verify(bundle, run.snapshot)
    assert code == 2 and f"{target}: an .npz archive, not a .npy array" in text, text


@pytest.mark.parametrize("name", ["manifest.json", "card.json"])
def test_verify_names_a_file_nested_too_deeply_in_one_line(run: Run, tmp_path: Path, name: str) -> None:
    bundle = submit(run, tmp_path / "repo", embeddings=False)
    (bundle / name).write_text("[" * 200_000 + "]" * 200_000)
    if name != "manifest.json":
        reseal(bundle)
    outcome = runner.invoke(app, ["verify", str(bundle), "--snapshot", str(run.snapshot)])
    assert outcome.exit_code == 2 and isinstance(outcome.exception, SystemExit), outcome.output
    text = " ".join(outcome.output.split())
    assert len(outcome.output.strip().splitlines()) == 1 and f"{bundle / name}: not valid JSON" in text, text
