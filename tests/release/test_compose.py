"""The builder's composed queries: pairs in a band, template texts, an LLM's paraphrase under hostile replies, the
judge's stratified audit, and an offline build that publishes a composed subset `lookbench eval` scores."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import date
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
import yaml
from chatkit import ChatServer, Truth, serve
from PIL import Image
from releasekit import encode
from typer.testing import CliRunner

from lookbench.cli.main import app
from lookbench.datasets.synth.generate import generate_snapshot
from lookbench.evaluation.composed.relevance import target_attributes
from lookbench.evaluation.composed.texts import modification_text
from lookbench.release.compose.audit import AuditJob, ComposedVerdict, audit_table, stratified
from lookbench.release.compose.pairs import composed_pairs
from lookbench.release.compose.paraphrase import MAX_CHARS, Paraphraser, lost_change
from lookbench.release.config import ApiConfig, load_config
from lookbench.release.pipeline import run_stages, stages_for
from lookbench.release.stages.compose import ComposeStats
from lookbench.release.vlm.cache import AnswerCache
from lookbench.snapshot import open_snapshot
from lookbench.snapshot.composed import Change, read_composed_queries
from lookbench.taxonomy import load_taxonomy

RED_LONG = frozenset({"red", "long sleeve", "crew neck"})


def test_pairs_keep_category_band_and_one_or_two_changes() -> None:
    categories = ["t-shirt"] * 5 + ["dress"]
    attributes = [
        RED_LONG,
        frozenset({"blue", "long sleeve", "crew neck"}),  # one change
        frozenset({"blue", "short sleeve", "crew neck"}),  # two changes
        frozenset({"blue", "short sleeve", "v-neck"}),  # three: never a pair
        RED_LONG,  # same labels: no change to ask for
        frozenset({"blue", "long sleeve", "crew neck"}),  # another category
    ]
    angle = np.radians([0, 10, 20, 5, 1, 0])
    vectors = np.stack([np.cos(angle), np.sin(angle)], axis=1)
    band = (float(np.cos(np.radians(15))), 1.0)  # item 2 is 20 degrees from item 0: outside the band
    pairs = composed_pairs(categories, attributes, vectors, band, 2, 5, load_taxonomy())
    from_zero = [(p.target, p.changes) for p in pairs if p.reference == 0]
    assert from_zero == [(1, (Change("colour", "red", "blue"),))]
    wide = composed_pairs(categories, attributes, vectors, (-1.0, 1.0), 2, 5, load_taxonomy())
    assert {p.target for p in wide if p.reference == 0} == {1, 2}
    assert all(categories[p.reference] == categories[p.target] for p in wide)
    one = composed_pairs(categories, attributes, vectors, (-1.0, 1.0), 1, 1, load_taxonomy())
    assert [(p.reference, p.target) for p in one if p.reference == 0] == [(0, 1)]  # most similar first, one change
    assert composed_pairs(["bag"], [RED_LONG], vectors[:1], (-1.0, 1.0), 2, 2, load_taxonomy()) == []


def test_a_rewording_must_name_every_change() -> None:
    sleeves = (Change("sleeve length", "long sleeve", "short sleeve"),)
    assert lost_change("like this but with short sleeves", sleeves) is None
    assert lost_change("same but different", sleeves) == "drops the change sleeve length: long sleeve -> short sleeve"
    assert lost_change("without the hood please", (Change("details", "hood", ""),)) is None
    text = modification_text((Change("colour", "red", "blue"), Change("details", "", "hood")), "k")
    assert lost_change(text, (Change("colour", "red", "blue"), Change("details", "", "hood"))) is None


def _api(server: ChatServer, **extra: object) -> ApiConfig:
    return ApiConfig.model_validate({"base_url": server.base_url, "model": "para", "timeout_s": 2, **extra})


def test_paraphrase_keeps_the_template_on_hostile_replies(tmp_path: Path) -> None:
    colour = (Change("colour", "red", "blue"),)
    behaviours = {
        "ok": ["ok"],
        "malformed": ["malformed", "malformed"],
        "drop": ["drop", "drop"],
        "empty": ["empty", "empty"],
        "huge": ["huge", "huge"],
        "drop-then-ok": ["drop", "ok"],
        "slow-once": ["slow"],
        "500-once": ["500"],
        "not-a-completion": ["body-null", "body-list"],
    }
    server = ChatServer(slow_s=3.0)
    jobs = [(f"like this, but blue ({name})", colour) for name in behaviours]
    for (text, _), script in zip(jobs, behaviours.values(), strict=True):
        server.scripts["paraphrase:" + text] = list(script)
    with serve(server):
        paraphraser = Paraphraser(_api(server, timeout_s=1.5, retries=1), AnswerCache(tmp_path / "c"))
        worded = dict(zip(behaviours, paraphraser.reword(jobs), strict=True))
        asked = sum(server.requests.values())
        again = Paraphraser(_api(server), AnswerCache(tmp_path / "c")).reword(jobs)
    for name in ("ok", "drop-then-ok", "slow-once", "500-once"):
        assert (
            worded[name].paraphrased
            and worded[name].text.startswith("Could I have this")
            and "blue" in worded[name].text
        )
    reasons = [("malformed", ""), ("drop", "drops the change colour"), ("empty", "empty paraphrase"),
               ("huge", f"(at most {MAX_CHARS})"), ("not-a-completion", "")]  # fmt: skip
    for name, reason in reasons:
        kept = worded[name]
        assert not kept.paraphrased and kept.text == f"like this, but blue ({name})" and kept.problem is not None
        assert reason in kept.problem
    # valid rewordings come from the cache; the five failures are asked again (the server now answers well)
    assert sum(server.requests.values()) - asked == 5 and all(w.paraphrased for w in again)
    assert paraphraser.describe()["model"] == "para"


def test_the_composed_judge_under_hostile_replies(tmp_path: Path) -> None:
    from lookbench.release.compose.audit import ComposedJudge

    server = ChatServer(slow_s=3.0)
    rng = np.random.default_rng(0)
    images = [encode(Image.fromarray(rng.integers(0, 255, (24, 24, 3), dtype=np.uint8))) for _ in range(7)]
    target = images[-1]
    server.learn(target, Truth("t-shirt", "blue", ["long sleeve"]))
    scripts = [["ok"], ["malformed", "ok"], ["invalid", "invalid"], ["reject"], ["slow"], ["body-null", "malformed"]]
    jobs = []
    for image, script in zip(images, scripts, strict=False):
        server.scripts[server.learn(image, Truth("t-shirt", "red", ["long sleeve"]))] = list(script)
        jobs.append(
            AuditJob("colour", "like this, but blue", (Change("colour", "red", "blue"),), image, "", target, "")
        )
    jobs = [replace(j, reference_sha256=str(i)) for i, j in enumerate(jobs)]  # distinct cache keys
    with serve(server):
        judge = ComposedJudge(_api(server, timeout_s=1.5, retries=1), AnswerCache(tmp_path / "j"))
        verdicts = judge.judge(jobs)
    yes = ComposedVerdict("yes", "yes")
    invalid = ComposedVerdict("invalid", "invalid")
    # a malformed answer is asked again; two invalid ones, a refused image and non-completions give `invalid`;
    # a slow reply is retried by the client
    assert verdicts == [yes, yes, invalid, invalid, yes, invalid]
    assert audit_table(jobs, verdicts)["overall"]["invalid"] == 3


def test_the_audit_samples_every_stratum_and_reports_rates() -> None:
    keys = [("colour", f"q{i}") for i in range(10)] + [("length", "l1"), ("colour + length", "b1")]
    chosen = stratified(keys, 3, seed=0)
    assert [keys[i][0] for i in chosen].count("colour") == 3 and len(chosen) == 5
    assert chosen == stratified(keys, 3, seed=0) and chosen != stratified(keys, 3, seed=1)
    job = AuditJob("colour", "t", (Change("colour", "red", "blue"),), b"", "", b"", "")
    verdicts = [ComposedVerdict("yes", "yes"), ComposedVerdict("no", "yes"), ComposedVerdict("unsure", "yes"),
                ComposedVerdict("invalid", "invalid")]  # fmt: skip
    table = audit_table([job] * 4, verdicts)
    overall = table["overall"]
    assert overall["judged"] == 4 and overall["unsure"] == 1 and overall["invalid"] == 1
    assert overall["text"]["n"] == 2 and overall["text"]["accuracy"] == 0.5
    assert overall["target"]["accuracy"] == 1.0 and set(table["strata"]) == {"colour"}


@pytest.fixture(scope="module")
def synth(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return generate_snapshot(tmp_path_factory.mktemp("synth"), date(2026, 5, 1), "mini", seed=4)


def _teach(server: ChatServer, snapshot: Path) -> None:
    for path in snapshot.glob("*/*.parquet"):
        for row in pq.read_table(path).to_pylist():
            truth = Truth(row["category"], row["main_attribute"], list(row["other_attributes"]))
            server.learn(row["image"]["bytes"], truth)


@pytest.mark.slow
def test_build_publishes_audited_composed_queries_that_eval_scores(synth: Path, tmp_path: Path) -> None:
    server = ChatServer()
    _teach(server, synth)
    with serve(server):
        api = {"base_url": server.base_url, "timeout_s": 5, "retries": 1}
        compose = {
            "model": "features:colour-gradient",
            "band": [-1.0, 1.0],
            "paraphrase": {**api, "model": "para-llm"},
            "judge": {**api, "model": "judge-vlm"},
            "audit_per_stratum": 2,
            "validation": 0.3,
        }
        data = {
            "release_date": "2026-06-01",
            "output": "out",
            "sources": [{"kind": "synth", "name": "synth", "path": str(synth)}],
            "compose": compose,
        }
        (tmp_path / "release.yaml").write_text(yaml.safe_dump(data))
        config = load_config(tmp_path / "release.yaml")
        stages = stages_for(config)
        assert [s.name for s in stages][-3:] == ["split", "compose", "publish"]
        ctx = run_stages(config, stages)
    stats = ctx.stats(ComposeStats)
    assert stats is not None and stats.queries > 0 and stats.validation_queries > 0
    assert set(stats.by_changes) <= {"1", "2"}
    assert stats.paraphrased == stats.queries + stats.validation_queries and stats.templates_kept == {}
    usage = stats.paraphraser
    assert usage is not None and usage["requests"] + usage["cache_hits"] == stats.paraphrased  # a repeated text: cached
    for job in ("paraphrase", "composed_judge"):  # endpoint work runs as shards on the build's executor
        assert list((config.work / "compose" / "shards" / job).glob("*.parquet"))
    audit = stats.audit
    assert audit is not None and audit["overall"]["judged"] == sum(r["judged"] for r in audit["strata"].values())
    assert audit["judge"]["requests"] == audit["overall"]["judged"]
    assert all(r["judged"] <= 2 for r in audit["strata"].values())
    assert audit["overall"]["text"]["accuracy"] == 1.0 and audit["overall"]["target"]["accuracy"] == 1.0
    version = config.output / config.version
    snapshot = open_snapshot(version)
    snapshot.check_task("composed", "composed")
    queries = read_composed_queries(snapshot, "composed")
    gallery = snapshot.labels("composed", "gallery")
    labels = {item: gallery.attribute_set(row) for row, item in enumerate(gallery.item_id)}
    for row in range(len(queries)):
        (target,) = queries.target_ids[row]
        assert labels[target] == target_attributes(queries.labels.attribute_set(row), queries.changes[row])
        assert queries.texts[row].startswith("Could I have this")
    card = (version / "README.md").read_text()
    assert "## Composed queries" in card and "| stratum | judged | text describes the change |" in card
    manifest = json.loads((version / "MANIFEST.json").read_text())
    assert manifest["release"]["subsets"]["composed"]["query"] == len(queries)
    held = read_composed_queries(snapshot, "composed", "validation")
    assert len(held) == stats.validation_queries and not set(held.labels.item_id) & set(queries.labels.item_id)
    assert "composed/validation.parquet" in (config.output / "README.md").read_text()
    out = tmp_path / "r.json"
    args = ["-m", "features:colour-gradient", "--subsets", "composed", "--compose", "arithmetic", "-o", str(out)]
    run = CliRunner().invoke(app, ["eval", "-s", str(version), *args, "--resamples", "50"])
    assert run.exit_code == 0, run.output
    result = json.loads(out.read_text())
    assert result["metrics"]["composed"]["recall@10"]["n"] == len(queries)
    assert result["model"]["composition"]["subsets"]["composed"]["chosen_on"] == "composed/validation"
