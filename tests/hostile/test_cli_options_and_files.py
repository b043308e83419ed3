"""Options and files that used to end in a traceback: impossible YAML dates, negative seeds, zero resamples,
a report against a smaller snapshot, a malformed scaling study given to the leaderboard."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hostilekit import clean_error, evaluate, invoke, make_snapshot, snapshot_spec, vectors, write_vectors

from lookbench._util.yamlfile import load_yaml
from lookbench.errors import LookBenchError


def test_an_impossible_yaml_date_names_the_file_and_line(tmp_path: Path) -> None:
    config = tmp_path / "release.yaml"
    config.write_text("name: x\nrelease_date: 2026-02-30\n", encoding="utf-8")
    with pytest.raises(LookBenchError, match=r"release.yaml: not valid YAML: line 2, column 15: '2026-02-30' is not a"):
        load_yaml(config)
    from lookbench.release.config import load_config

    with pytest.raises(LookBenchError, match=r"release.yaml: .*line 2.*2026-02-30"):
        load_config(config)
    config.write_text("release_date: 2026-02-28\nat: 2026-02-28T10:00:00Z\n", encoding="utf-8")
    loaded = load_yaml(config)
    assert str(loaded["release_date"]) == "2026-02-28" and loaded["at"].hour == 10  # real dates still load


def test_an_impossible_release_date_is_one_line_in_build(tmp_path: Path) -> None:
    config = tmp_path / "release.yaml"
    config.write_text("release_date: 2026-02-30\n", encoding="utf-8")
    clean_error(invoke("release", str(config)), "release.yaml", "line 1", "2026-02-30")


@pytest.mark.parametrize("command", ["synth", "eval", "compare"])
def test_negative_seeds_are_usage_errors(tmp_path: Path, command: str) -> None:
    snap = make_snapshot(tmp_path / "s")
    emb = write_vectors(tmp_path / "e", vectors())
    out = tmp_path / "out"
    args = {
        "synth": ["synth", "--out", str(out)],
        "eval": ["eval", "-s", str(snap), "-m", f"embeddings:{emb}", "-o", str(out / "r.json")],
        "compare": ["compare", str(out / "a.json"), str(out / "b.json")],
    }[command]
    result = invoke(*args, "--seed", "-5")
    assert result.exit_code == 2 and "--seed" in result.output and "Traceback" not in result.output, result.output
    assert not out.exists()


def test_zero_resamples_gives_the_point_as_its_interval(tmp_path: Path) -> None:
    snap = make_snapshot(tmp_path / "s")
    arrays = vectors()
    arrays["real_studio_flat/query"][1] = arrays["real_studio_flat/gallery"][1]  # query b finds a green dress
    emb = write_vectors(tmp_path / "e", arrays)
    out = tmp_path / "r.json"
    result = invoke("eval", "-s", str(snap), "-m", f"embeddings:{emb}", "-o", str(out), "--resamples", "0")
    assert result.exit_code == 0, result.output
    metrics = json.loads((tmp_path / "r.json").read_text())["metrics"]
    assert metrics["overall"]["fine_recall@1"] == {"value": 0.75, "ci_low": 0.75, "ci_high": 0.75, "n": 4}
    assert metrics["real_studio_flat"]["fine_recall@1"]["ci_low"] == 0.5
    assert "±" not in result.output


def test_a_report_against_a_snapshot_with_fewer_rows_is_refused(tmp_path: Path) -> None:
    snap = make_snapshot(tmp_path / "s")
    emb = write_vectors(tmp_path / "e", vectors())
    evaluate(snap, emb, tmp_path / "r.json")
    spec = snapshot_spec()
    spec["real_studio_flat"]["query"] = spec["real_studio_flat"]["query"][:1]
    spec["real_studio_flat"]["gallery"] = spec["real_studio_flat"]["gallery"][:2]
    smaller = make_snapshot(tmp_path / "small", spec)
    result = invoke("report", str(tmp_path / "r.json"), "--snapshot", str(smaller), "--out", str(tmp_path / "rep"))
    clean_error(result, f"--snapshot {smaller}", "real_studio_flat has 1 query", "not the evaluated snapshot")
    assert not (tmp_path / "rep").exists()


CELL = {
    "backbone": "b",
    "fraction": 0.5,
    "images": 10,
    "items": 5,
    "steps": 4,
    "metrics": {"fine_recall@1": {"value": 0.5, "ci_low": 0.4, "ci_high": 0.6}},
    "result_file": "b__f0.5.json",
}


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        ('{"cells": []}', "not cell results"),
        ("[1, 2]", "not cell results"),
        (json.dumps([{**CELL, "metrics": [0.5]}]), "metrics"),
        (json.dumps([{**CELL, "metrics": {"fine_recall@1": {"value": 0.5}}}]), "record 0: metrics.fine_recall@1 lacks"),
        (json.dumps([{**CELL, "images": "many"}]), "images"),
        ('[{"backbone": "b"', "not a scaling.json"),
    ],
)
def test_a_malformed_scaling_study_is_one_line(tmp_path: Path, content: str, fragment: str) -> None:
    snap = make_snapshot(tmp_path / "s")
    emb = write_vectors(tmp_path / "e", vectors())
    evaluate(snap, emb, tmp_path / "r.json")
    study = tmp_path / "study"
    study.mkdir()
    (study / "scaling.json").write_text(content, encoding="utf-8")
    result = invoke("leaderboard", str(tmp_path / "r.json"), "--out", str(tmp_path / "site"), "--scaling", str(study))
    clean_error(result, "scaling.json", fragment)


def test_nfd_attribute_labels_score_as_nfc_in_graded_ndcg(tmp_path: Path) -> None:
    import unicodedata

    def run(form: str) -> dict[str, float]:
        spec = snapshot_spec()
        query, gallery = spec["real_studio_flat"]["query"][0], spec["real_studio_flat"]["gallery"]
        query["main_attribute"] = unicodedata.normalize(form, "Rosé")
        query["other_attributes"] = [unicodedata.normalize(form, t) for t in ("brodé ", "v-neck", "côtelé")]
        gallery[0]["main_attribute"], gallery[0]["other_attributes"] = "rosé", ["brodé"]
        gallery[1]["main_attribute"], gallery[1]["other_attributes"] = "rosé", ["v-neck", "côtelé"]
        snap = make_snapshot(tmp_path / form, spec)  # query a finds its own item (2 of 4 attributes) before x (3)
        result = evaluate(snap, write_vectors(tmp_path / f"e-{form}", vectors()), tmp_path / f"{form}.json")
        return {k: v["value"] for k, v in result["metrics"]["real_studio_flat"].items() if k.startswith("ndcg")}

    nfc, nfd = run("NFC"), run("NFD")
    assert 0 < nfc["ndcg@5"] < 1  # graded: the better match (3 of 4 attributes) ranks second
    assert nfd == nfc


def test_the_taxonomy_cleans_labels_to_nfc_like_the_reader() -> None:
    import unicodedata

    from lookbench._util.labels import normalise_label
    from lookbench.taxonomy.normalise import clean

    nfd = unicodedata.normalize("NFD", " Brodé_Côtelé ")
    assert clean(nfd) == "brodé côtelé" == clean("brodé côtelé")
    assert clean(nfd).split()[0] == normalise_label("BRODÉ")  # training targets and metrics see one spelling
