"""Every command that writes into a folder refuses one holding the user's files (names colliding with its outputs)
unless --overwrite, which replaces only what the command writes; single-file outputs refuse a file lookbench did not
write. Train and scaling: tests/train/test_train_outfolder.py."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from hostilekit import clean_error, evaluate, invoke, make_snapshot, vectors, write_vectors

from conftest import files_under, write_files
from lookbench._util.outfolder import MARKER_NAME, claim_output_folder, read_marker

USERS = {
    "README.md": b"# my notes\n",
    "config.json": b'{"mine": true}\n',
    "train.jsonl": b'{"step": "mine"}\n',
    "guard.json": b'{"mine": 1}\n',
    "index.html": b"<p>my page</p>\n",
    "data.json": b"[1, 2]\n",
    "tables.md": b"| mine |\n",
    "tables.csv": b"mine\n",
    "v20260601/manifest.json": b'{"mine": true}\n',
    "v20260301/README.md": b"my snapshot notes\n",
    "inshop/card.json": b"{}\n",
    "preview/sheet.png": b"not a png\n",
}


def users_folder(path: Path) -> Path:
    """A folder of the user's own files, named like the outputs."""
    return write_files(path, USERS)


def release_config(tmp_path: Path, output: Path) -> Path:
    """A release config that loads (the claim comes before any stage runs)."""
    (tmp_path / "noise").mkdir(exist_ok=True)
    (tmp_path / "noise" / "manifest.csv").write_text("image,product_id,category,color\n")
    data = {
        "release_date": "2026-06-01",
        "output": str(output),
        "sources": [{"kind": "catalog", "name": "distractors", "path": str(tmp_path / "noise"), "subsets": ["noise"]}],
    }
    path = tmp_path / "release.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


Command = Callable[[Path, Path], list[str]]
"""The argv writing into `folder` (second argument), its inputs made under tmp_path (first)."""

COMMANDS: dict[str, tuple[str, Command]] = {
    "report": ("report", lambda tmp, out: ["report", str(tmp / "r.json"), "--out", str(out)]),
    "leaderboard": ("leaderboard", lambda tmp, out: ["leaderboard", str(tmp / "r.json"), "--out", str(out)]),
    "tables": ("tables", lambda tmp, out: ["tables", str(tmp / "r.json"), "--out", str(out)]),
    "tables --format": (
        "tables",
        lambda tmp, out: ["tables", str(tmp / "r.json"), "--format", "csv", "--out", str(out)],
    ),
    "submit": ("submit", lambda tmp, out: ["submit", str(tmp / "r.json"), "--out", str(out)]),
    "synth": ("synth", lambda tmp, out: ["synth", "--out", str(out), "--size", "tiny"]),
    "legacy import": (
        "legacy import",
        lambda tmp, out: ["legacy", "import", "inshop", str(tmp / "src"), "--out", str(out)],
    ),
    "composed derive": (
        "composed derive",
        lambda tmp, out: ["composed", "derive", "--out", str(out), "--snapshot", str(make_snapshot(tmp / "snap"))],
    ),
    "release": ("release", lambda tmp, out: ["release", str(release_config(tmp, out))]),
    "release --push": (
        "release push",
        lambda tmp, out: ["release", str(release_config(tmp, tmp / "built")), "--push", str(out)],
    ),
}


def one_line(result: object, *fragments: str) -> None:
    """A clean exit 2 whose output is one line holding the fragments (besides `build`'s deprecation notice)."""
    clean_error(result, *fragments)  # type: ignore[arg-type]
    lines = [line for line in result.output.strip().splitlines() if "deprecated" not in line]  # type: ignore[attr-defined]
    assert len(lines) == 1 and lines[0].startswith("error: "), result.output  # type: ignore[attr-defined]


@pytest.mark.parametrize("name", COMMANDS)
def test_a_folder_of_the_users_files_is_refused_and_left_byte_identical(tmp_path: Path, name: str) -> None:
    folder = users_folder(tmp_path / "mine")
    result = invoke(*COMMANDS[name][1](tmp_path, folder))
    one_line(result, f"{folder}: not empty and not marked as a lookbench run folder", "--overwrite")
    assert files_under(folder) == USERS


@pytest.mark.parametrize("name", COMMANDS)
def test_a_malformed_marker_is_refused_in_one_line_even_with_overwrite(tmp_path: Path, name: str) -> None:
    folder = users_folder(tmp_path / "mine")
    (folder / MARKER_NAME).write_text('{"format": "lookbench-run/1", "tool": "lookbench"')
    for extra in ([], ["--overwrite"]):
        result = invoke(*COMMANDS[name][1](tmp_path, folder), *extra)
        one_line(result, f"{folder / MARKER_NAME}: not a lookbench run marker")
    assert files_under(folder) == {**USERS, MARKER_NAME: b'{"format": "lookbench-run/1", "tool": "lookbench"'}


@pytest.mark.parametrize("name", COMMANDS)
def test_a_symlinked_marker_is_refused(tmp_path: Path, name: str) -> None:
    real = claim_output_folder(tmp_path / "real", COMMANDS[name][0]).folder / MARKER_NAME
    folder = users_folder(tmp_path / "mine")
    (folder / MARKER_NAME).symlink_to(real)
    one_line(invoke(*COMMANDS[name][1](tmp_path, folder)), f"{folder / MARKER_NAME}: not a plain file")
    assert files_under(folder) == {**USERS, MARKER_NAME: real.read_bytes()}


@pytest.mark.parametrize("name", COMMANDS)
def test_another_commands_folder_is_refused(tmp_path: Path, name: str) -> None:
    folder = users_folder(tmp_path / "mine")
    claim_output_folder(folder, "scaling", overwrite=True)
    one_line(invoke(*COMMANDS[name][1](tmp_path, folder)), f"{folder}: holds the output of lookbench scaling")
    assert read_marker(folder).command == "scaling"  # type: ignore[union-attr]


@pytest.mark.parametrize("name", COMMANDS)
def test_a_file_where_the_folder_should_be_is_refused(tmp_path: Path, name: str) -> None:
    (tmp_path / "mine").write_text("mine")
    one_line(
        invoke(*COMMANDS[name][1](tmp_path, tmp_path / "mine")), f"{tmp_path / 'mine'}: exists and is not a folder"
    )
    assert (tmp_path / "mine").read_text() == "mine"


@pytest.fixture(scope="module")
def result_json(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real result of the hostile snapshot (precomputed embeddings: no model runs)."""
    root = tmp_path_factory.mktemp("run")
    evaluate(make_snapshot(root / "snap"), write_vectors(root / "emb", vectors()), root / "results" / "r.json")
    return root / "results" / "r.json"


WRITERS = {
    "report": (["report"], "index.html"),
    "leaderboard": (["leaderboard"], "index.html"),
    "tables": (["tables"], "tables.md"),
}


@pytest.mark.parametrize("name", WRITERS)
def test_overwrite_replaces_only_what_the_command_writes(tmp_path: Path, name: str, result_json: Path) -> None:
    folder = users_folder(tmp_path / "mine")
    (folder / "notes.txt").write_text("keep me")
    args, output = WRITERS[name]
    result = invoke(*args, str(result_json), "--out", str(folder), "--overwrite")
    assert result.exit_code == 0, result.output
    kept = {k: v for k, v in USERS.items() if k != output and k != "data.json" and k != "tables.csv"}
    assert {k: v for k, v in files_under(folder).items() if k in kept} == kept and (folder / "notes.txt").exists()
    assert (folder / output).read_bytes() != USERS[output]
    marker = read_marker(folder)
    assert marker is not None and output in marker.files and "notes.txt" not in marker.files
    assert not set(marker.files) & {"README.md", "config.json", "train.jsonl", "v20260601", "notes.txt"}


@pytest.mark.parametrize("name", WRITERS)
def test_a_rerun_into_the_commands_own_folder_works_as_before(tmp_path: Path, name: str, result_json: Path) -> None:
    args, output = WRITERS[name]
    out = tmp_path / "out"
    for _ in range(2):
        result = invoke(*args, str(result_json), "--out", str(out))
        assert result.exit_code == 0, result.output
    marker = read_marker(out)
    assert marker is not None and marker.command == name and output in marker.files


def test_submit_into_a_marked_repository_adds_the_bundle_beside_the_users_files(
    tmp_path: Path, result_json: Path
) -> None:
    repo = users_folder(tmp_path / "repo")
    assert invoke("submit", str(result_json), "--out", str(repo)).exit_code == 2
    result = invoke("submit", str(result_json), "--out", str(repo), "--overwrite")
    assert result.exit_code == 0, result.output
    assert {k: v for k, v in files_under(repo).items() if k in USERS} == USERS
    again = invoke("submit", str(result_json), "--out", str(repo))  # its own repository now: same refusal as before
    clean_error(again, "already")


def test_eval_refuses_a_users_file_at_the_result_path(tmp_path: Path) -> None:
    snap, emb = make_snapshot(tmp_path / "snap"), write_vectors(tmp_path / "emb", vectors())
    args = ["eval", "-s", str(snap), "-m", f"embeddings:{emb}", "--resamples", "20"]
    mine = tmp_path / "mine"
    users_folder(mine)
    (mine / "r.json").write_text('{"mine": true}\n')
    (mine / "s.per_query.parquet").write_text("mine\n")
    before = files_under(mine)
    one_line(invoke(*args, "-o", str(mine / "r.json")), f"{mine / 'r.json'}: exists and was not written by lookbench")
    one_line(invoke(*args, "-o", str(mine / "s.json")), f"{mine / 's.per_query.parquet'}: exists and was not written")
    assert files_under(mine) == before
    forced = invoke(*args, "-o", str(mine / "r.json"), "--overwrite")
    assert forced.exit_code == 0, forced.output
    assert {k: v for k, v in files_under(mine).items() if k in USERS} == USERS
    evaluate(snap, emb, mine / "r.json")  # its own result now: replaced as before, without --overwrite


def test_audit_refuses_a_users_file_before_any_work(tmp_path: Path) -> None:
    mine = tmp_path / "audit.json"
    mine.write_text('{"mine": true}\n')
    one_line(
        invoke("audit", str(tmp_path / "no-snapshot"), "--output", str(mine)), f"{mine}: not a lookbench audit report"
    )
    assert mine.read_text() == '{"mine": true}\n'
    one_line(invoke("audit", str(tmp_path / "no-snapshot"), "--output", str(tmp_path)), f"{tmp_path}: a folder")


def test_card_merges_into_the_users_readme_keeping_every_line(tmp_path: Path, result_json: Path) -> None:
    readme = tmp_path / "README.md"
    prose = "# My model\n\nMy own words, kept as they are.\n"
    readme.write_text("---\nlicense: mit\n---\n" + prose)
    result = invoke("card", str(result_json), "--readme", str(readme), "--dataset", "owner/name")
    assert result.exit_code == 0, result.output
    text = readme.read_text()
    assert text.endswith(prose) and "license: mit" in text and "model-index" in text
    folder = tmp_path / "a-folder"
    folder.mkdir()
    clean_error(invoke("card", str(result_json), "--readme", str(folder), "--dataset", "owner/name"), str(folder))


def test_contamination_refuses_a_users_file_at_output_before_any_work(tmp_path: Path) -> None:
    mine, images = tmp_path / "matches.csv", tmp_path / "images"
    mine.write_text("subset,mine\n")
    images.mkdir()
    args = ["contamination", "--snapshot", str(tmp_path / "no-snapshot"), "--against", str(images)]
    one_line(invoke(*args, "--output", str(mine)), f"{mine}: exists and was not written by lookbench")
    assert mine.read_text() == "subset,mine\n"
    snap = make_snapshot(tmp_path / "snap")
    args = ["contamination", "--snapshot", str(snap), "--against", str(images), "--output", str(mine)]
    ours = invoke(*args, "--overwrite")
    assert ours.exit_code == 0, ours.output
    again = invoke(*args)
    assert again.exit_code == 0, again.output  # its own match list is replaced as before


def test_annotate_batch_export_refuses_a_users_file_before_any_work(tmp_path: Path) -> None:
    mine = tmp_path / "batch.jsonl"
    mine.write_text('{"mine": true}\n')
    one_line(
        invoke("annotate", "batch-export", str(tmp_path / "no-config.yaml"), str(mine)),
        f"{mine}: exists and was not written by lookbench",
    )
    assert mine.read_text() == '{"mine": true}\n'


REPLACED = {"synth": "v20260601", "legacy import": "inshop", "composed derive": "v20260301"}
"""The folder each command writes under OUT, which `--overwrite` would replace were it lookbench's."""


@pytest.mark.parametrize("name", REPLACED)
def test_overwrite_never_replaces_a_users_folder_named_like_the_output(tmp_path: Path, name: str) -> None:
    folder = users_folder(tmp_path / "mine")
    (folder / REPLACED[name]).mkdir(exist_ok=True)
    (folder / REPLACED[name] / "mine.txt").write_bytes(b"x\n")
    (tmp_path / "src").mkdir()
    before = files_under(folder)
    result = invoke(*COMMANDS[name][1](tmp_path, folder), "--overwrite")
    one_line(result, f"{folder / REPLACED[name]}: exists and {folder / MARKER_NAME} does not list it")
    assert files_under(folder) == before and not (folder / MARKER_NAME).exists()


def test_release_overwrite_keeps_every_file_of_the_users(tmp_path: Path) -> None:
    folder = users_folder(tmp_path / "mine")
    (folder / "v20260601" / "mine.txt").write_bytes(b"x\n")
    before = files_under(folder)
    result = invoke(*COMMANDS["release"][1](tmp_path, folder), "--overwrite")
    assert result.exit_code == 2 and "Traceback" not in result.output, result.output
    assert {k: v for k, v in files_under(folder).items() if k in before} == before


def test_synth_overwrite_keeps_a_folder_the_user_added_to_its_own_marked_folder(tmp_path: Path) -> None:
    out = tmp_path / "data"
    synth = ["synth", "--out", str(out), "--size", "tiny"]
    assert invoke(*synth, "--release", "2026-05-01").exit_code == 0
    (out / "v20260601").mkdir()
    (out / "v20260601" / "mine.txt").write_text("x\n")
    before = files_under(out)
    one_line(
        invoke(*synth, "--release", "2026-06-01", "--overwrite"),
        f"{out / 'v20260601'}: exists and {out / MARKER_NAME} does not list it",
    )
    assert files_under(out) == before
    again = invoke(*synth, "--release", "2026-05-01", "--overwrite")  # its own release: replaced as before
    assert again.exit_code == 0, again.output
    assert "v20260601" not in read_marker(out).files  # type: ignore[union-attr]
