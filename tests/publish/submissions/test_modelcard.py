"""`lookbench card`: model-index merged into a README's front matter, the body untouched; hostile READMEs refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from submission_kit import Run, build_run, runner

from lookbench.cli.main import app

BODY = "# My model\n\nIt embeds *fashion* images.\n\n```yaml\n---\nnot: front matter\n---\n```\n"
README = "---\nlicense: mit\ntags:\n- image-feature-extraction\n---\n" + BODY


@pytest.fixture(name="run", scope="module")
def run_fixture(tmp_path_factory: pytest.TempPathFactory) -> Run:
    return build_run(tmp_path_factory.mktemp("card"))


def card(run: Run, *extra: str) -> tuple[int, str]:
    outcome = runner.invoke(app, ["card", str(run.result), "--dataset", "srpone/look-bench", *extra])
    return outcome.exit_code, " ".join(outcome.output.split())


def front(path: Path) -> dict:  # type: ignore[type-arg]
    return yaml.safe_load(path.read_text().split("---\n")[1])


def test_card_merges_model_index_and_keeps_the_body(run: Run, tmp_path: Path) -> None:
    readme = tmp_path / "README.md"
    readme.write_text(README)
    code, text = card(run, "--readme", str(readme))
    assert code == 0, text
    written = readme.read_text()
    assert written.endswith(BODY)
    meta = front(readme)
    assert meta["license"] == "mit" and meta["tags"] == ["image-feature-extraction"]
    (index,) = meta["model-index"]
    assert index["name"] == "tiny"
    declared = json.loads(run.result.read_text())["metrics"]
    by_split = {r["dataset"]["split"]: r for r in index["results"]}
    assert set(by_split) == {"real_studio_flat", "overall"}
    overall = by_split["overall"]
    assert overall["task"]["type"] == "image-feature-extraction"
    assert overall["dataset"]["type"] == "srpone/look-bench" and overall["dataset"]["config"] == "v20260201"
    values = {m["type"]: m["value"] for m in overall["metrics"]}
    assert values["fine_recall@1"] == round(100 * declared["overall"]["fine_recall@1"]["value"], 2)
    assert {m["name"] for m in overall["metrics"]} >= {"Fine R@1", "nDCG@5"}
    code, again = card(run, "--readme", str(readme))
    assert code == 0 and readme.read_text() == written  # merging the same result twice changes nothing


def test_card_keeps_other_model_index_entries(run: Run, tmp_path: Path) -> None:
    other = {
        "name": "tiny",
        "results": [
            {
                "task": {"type": "image-classification"},
                "dataset": {"type": "imagenet-1k", "name": "ImageNet"},
                "metrics": [{"type": "accuracy", "value": 71.2}],
            }
        ],
    }
    readme = tmp_path / "README.md"
    readme.write_text("---\n" + yaml.safe_dump({"model-index": [other]}) + "---\n" + BODY)
    code, text = card(run, "--readme", str(readme))
    assert code == 0, text
    results = front(readme)["model-index"][0]["results"]
    assert {"type": "accuracy", "value": 71.2} in [m for r in results for m in r["metrics"]]
    assert any(r["dataset"]["type"] == "srpone/look-bench" for r in results)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("---\nlicense: mit\n# no closing line\n", "front matter: the opening --- line has no closing --- line"),
        ("---\nlicense: [mit\n---\nbody\n", "(front matter): not valid YAML"),
        ("---\n- a\n- b\n---\nbody\n", "front matter is a YAML list, not a mapping"),
        ("---\nmodel-index: [{results: [{task: 3}]}]\n---\nbody\n", "field model-index is malformed"),
    ],
)
def test_card_refuses_malformed_front_matter_and_keeps_the_file(
    run: Run, tmp_path: Path, text: str, message: str
) -> None:
    readme = tmp_path / "README.md"
    readme.write_text(text)
    code, output = card(run, "--readme", str(readme))
    assert code == 2
    assert str(readme.name) in output and message in output
    assert readme.read_text() == text


def test_card_of_a_local_snapshot_needs_the_dataset_id(run: Run, tmp_path: Path) -> None:
    outcome = runner.invoke(app, ["card", str(run.result), "--readme", str(tmp_path / "README.md")])
    assert outcome.exit_code == 2
    assert "field snapshot.location is a local folder" in " ".join(outcome.output.split())
    assert not (tmp_path / "README.md").exists()


def test_push_is_a_dry_run_by_default(run: Run, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # any request would fail
    code, text = card(run, "--push", "someone/tiny")
    assert code == 0, text
    assert "dry run: would update the model-index of someone/tiny" in text and "fine_recall@1" in text


def test_card_keeps_crlf_line_endings(run: Run, tmp_path: Path) -> None:
    readme = tmp_path / "README.md"
    readme.write_bytes(README.replace("\n", "\r\n").encode())
    code, text = card(run, "--readme", str(readme))
    assert code == 0, text
    data = readme.read_bytes()
    assert data.endswith(BODY.replace("\n", "\r\n").encode()) and b"\n" not in data.replace(b"\r\n", b"")


def test_card_without_readme_prints_front_matter_that_parses(run: Run) -> None:
    outcome = runner.invoke(app, ["card", str(run.result), "--dataset", "srpone/look-bench"])
    assert outcome.exit_code == 0, outcome.output
    meta = yaml.safe_load(outcome.output.split("---\n")[1])
    declared = json.loads(run.result.read_text())["snapshot"]["content_hash"]
    assert meta["model-index"][0]["results"][0]["dataset"]["args"]["content_hash"] == declared
