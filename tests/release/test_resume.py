"""Honest resume: stages re-run when their own settings or inputs change, and only then; refusals before damage."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from chatkit import ChatServer, Truth
from chatkit import serve as serve_chat
from releasekit import encode, photo, published_rows, run_build, synth_release_config, synth_rows

from lookbench._util.outfolder import claim_output_folder

VERSION = "v20260601"
TRUTH = Truth("dress", "red", ["striped", "v-neck", "long sleeve", "midi", "a-line"])


@pytest.fixture
def synth(make_snapshot) -> Path:
    """A Synth snapshot: 3 items, each with a query and a gallery image."""
    return make_snapshot(
        {"aigen_studio": {"query": synth_rows("i", [1, 2, 3]), "gallery": synth_rows("i", [1, 2, 3], offset=10)}},
        version="v20260501",
    )


def _digest(folder: Path) -> dict[str, str]:
    return {
        p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in folder.rglob("*")
        if p.is_file()
    }


def test_editing_the_changelog_reruns_only_publish(tmp_path, synth):
    claim_output_folder(tmp_path / "out", "release")  # a release's own folder, with a file in the way of publishing
    (tmp_path / "out" / VERSION).write_text("a file in the way of publishing")
    blocked = run_build(synth_release_config(tmp_path, synth, changelog="first words"))
    assert blocked.exit_code == 2 and "already exists" in blocked.output
    (tmp_path / "out" / VERSION).unlink()
    result = run_build(synth_release_config(tmp_path, synth, changelog="second words"))
    assert result.exit_code == 0, result.output
    assert result.output.count("already done") == 3 and "collect: already done" in result.output
    manifest = json.loads((tmp_path / "out" / VERSION / "MANIFEST.json").read_text())
    assert manifest["release"]["changelog"] == "second words"


def test_an_edited_source_is_collected_again(tmp_path, synth):
    config = synth_release_config(tmp_path, synth)
    data = config.read_text().replace("path: noise", "path: not-yet")
    config.write_text(data)
    failed = run_build(config)
    assert failed.exit_code == 2 and "not-yet" in failed.output
    (tmp_path / "noise").rename(tmp_path / "not-yet")
    config.write_text(data.replace("name: synth", "license: new terms\n  name: synth"))
    result = run_build(config)
    assert result.exit_code == 0, result.output
    rows = [r for r in published_rows(tmp_path / "out" / VERSION) if r["source"] == "synth"]
    assert rows and {r["license"] for r in rows} == {"new terms"}


def test_a_build_killed_after_publishing_recognises_its_own_version(tmp_path, synth):
    config = synth_release_config(tmp_path, synth)
    assert run_build(config).exit_code == 0
    published = _digest(tmp_path / "out" / VERSION)
    (tmp_path / "out" / "_work" / VERSION / "publish" / "DONE.json").unlink()
    (tmp_path / "out" / "README.md").unlink()
    result = run_build(config)
    assert result.exit_code == 0, result.output
    assert _digest(tmp_path / "out" / VERSION) == published and (tmp_path / "out" / "README.md").is_file()


def test_a_release_without_queries_is_refused_and_its_date_stays_free(tmp_path, synth):
    unready, ready = ChatServer(), ChatServer()  # the first knows no image: it refuses every annotation request
    for seed in (1, 2, 3, 11, 12, 13):
        ready.learn(encode(photo(seed)), TRUTH)
    with serve_chat(unready), serve_chat(ready):
        api = {"base_url": unready.base_url, "model": "m", "retries": 0}
        refused = run_build(synth_release_config(tmp_path, synth, annotate={"backend": "openai", "api": api}))
        assert refused.exit_code == 2 and "no queries" in refused.output, refused.output
        assert not (tmp_path / "out" / VERSION).exists()
        api["base_url"] = ready.base_url
        result = run_build(synth_release_config(tmp_path, synth, annotate={"backend": "openai", "api": api}))
    assert result.exit_code == 0, result.output
    assert "collect: already done" in result.output
    assert (tmp_path / "out" / VERSION / "aigen_studio" / "query.parquet").is_file()


@pytest.mark.parametrize(
    ("section", "field"),
    [
        ({"dedup": {"embedding_model": "nope:x"}}, "dedup.embedding_model"),
        ({"distractors": {"model": "nope:x"}}, "distractors.model"),
        (
            {"annotate": {"backend": "probe", "probe": {"train": "missing", "model": "features:colour-gradient"}}},
            "probe",
        ),
    ],
)
def test_a_config_that_cannot_run_is_refused_before_collect(tmp_path, synth, section, field):
    result = run_build(synth_release_config(tmp_path, synth, **section))
    assert result.exit_code == 2 and field in result.output, result.output
    assert not (tmp_path / "out" / "_work" / VERSION / "collect").exists()
