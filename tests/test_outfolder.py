"""Output folders are claimed by the marker lookbench writes first, never recognised by the names of their files."""

from __future__ import annotations

import os
import re
import socket
from pathlib import Path

import pytest

from lookbench._util.outfolder import (
    MARKER_NAME,
    OutputFolderError,
    claim_output_folder,
    output_folder,
    read_marker,
    refuse_foreign_file,
)

USERS = {"README.md": b"my notes\n", "config.json": b'{"mine": true}\n', "train.jsonl": b"{}\n"}


def users_folder(path: Path) -> Path:
    path.mkdir()
    for name, data in USERS.items():
        (path / name).write_bytes(data)
    return path


def contents(path: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in path.iterdir() if p.name != MARKER_NAME}


def test_a_new_folder_is_created_and_marked_before_anything_else(tmp_path: Path) -> None:
    claim = claim_output_folder(tmp_path / "a" / "run", "report", config_hash="abc")
    assert [p.name for p in claim.folder.iterdir()] == [MARKER_NAME]
    marker = read_marker(claim.folder)
    assert marker is not None and (marker.tool, marker.command, marker.config_hash) == ("lookbench", "report", "abc")
    assert marker.files == () and marker.run_id == claim.marker.run_id


def test_an_empty_folder_is_claimed(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    assert claim_output_folder(tmp_path / "empty", "tables").marker.command == "tables"


def test_a_folder_of_the_users_files_is_refused_and_left_as_it_was(tmp_path: Path) -> None:
    folder = users_folder(tmp_path / "mine")
    with pytest.raises(OutputFolderError, match=f"{folder}: not empty and not marked") as caught:
        claim_output_folder(folder, "train")
    assert "\n" not in str(caught.value)
    assert contents(folder) == USERS and not (folder / MARKER_NAME).exists()


def test_overwrite_takes_a_users_folder_over_and_records_only_what_the_run_wrote(tmp_path: Path) -> None:
    folder = users_folder(tmp_path / "mine")
    (folder / "notes.txt").write_text("keep")
    with output_folder(folder, "train", overwrite=True):
        (folder / "config.json").write_text('{"run": 1}')
        (folder / "checkpoints").mkdir()
    assert (folder / "notes.txt").read_text() == "keep" and (folder / "README.md").read_bytes() == USERS["README.md"]
    assert read_marker(folder).files == ("checkpoints", "config.json")  # type: ignore[union-attr]


def test_a_folder_marked_by_the_same_command_and_config_is_taken_as_it_is(tmp_path: Path) -> None:
    first = claim_output_folder(tmp_path / "run", "train", config_hash="abc")
    with first.recording():
        (tmp_path / "run" / "train.jsonl").write_text("{}\n")
    again = claim_output_folder(tmp_path / "run", "train", config_hash="abc")
    assert again.marker.run_id == first.marker.run_id and again.owns("train.jsonl") and not again.fresh


def test_a_marker_of_another_config_is_refused_unless_overwrite(tmp_path: Path) -> None:
    with output_folder(tmp_path / "run", "train", config_hash="abc"):
        (tmp_path / "run" / "train.jsonl").write_text("{}\n")
    with pytest.raises(OutputFolderError, match="another config"):
        claim_output_folder(tmp_path / "run", "train", config_hash="xyz")
    taken = claim_output_folder(tmp_path / "run", "train", config_hash="xyz", overwrite=True)
    assert taken.marker.config_hash == "xyz" and taken.owns("train.jsonl")  # the record of what lookbench wrote stays


def test_a_marker_of_another_command_is_refused_unless_overwrite(tmp_path: Path) -> None:
    claim_output_folder(tmp_path / "site", "leaderboard")
    with pytest.raises(OutputFolderError, match="holds the output of lookbench leaderboard, not report"):
        claim_output_folder(tmp_path / "site", "report")
    assert claim_output_folder(tmp_path / "site", "report", overwrite=True).marker.command == "report"


@pytest.mark.parametrize(
    "text",
    ["{not json", "[]", '{"format": "lookbench-run/1"}', "\xff\xfe", '{"format": "other/1", "tool": "lookbench"}'],
)
def test_a_malformed_marker_is_refused_even_with_overwrite(tmp_path: Path, text: str) -> None:
    folder = users_folder(tmp_path / "mine")
    (folder / MARKER_NAME).write_bytes(text.encode("latin-1"))
    for overwrite in (False, True):
        with pytest.raises(OutputFolderError, match=f"{folder / MARKER_NAME}: not a lookbench run marker") as caught:
            claim_output_folder(folder, "train", overwrite=overwrite)
        assert "\n" not in str(caught.value)
    assert (folder / MARKER_NAME).read_bytes() == text.encode("latin-1") and contents(folder) == USERS


def test_a_marker_that_is_a_symlink_or_a_folder_is_refused(tmp_path: Path) -> None:
    real = claim_output_folder(tmp_path / "real", "report").folder / MARKER_NAME
    linked = tmp_path / "linked"
    linked.mkdir()
    (linked / MARKER_NAME).symlink_to(real)
    with pytest.raises(OutputFolderError, match="not a plain file"):
        claim_output_folder(linked, "report", overwrite=True)
    (tmp_path / "dir" / MARKER_NAME).mkdir(parents=True)
    with pytest.raises(OutputFolderError, match="not a plain file"):
        claim_output_folder(tmp_path / "dir", "report")


def test_a_file_or_a_dangling_link_is_not_a_folder(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("mine")
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    for path in (tmp_path / "file", tmp_path / "dangling"):
        with pytest.raises(OutputFolderError, match=f"{path}: exists and is not a folder"):
            claim_output_folder(path, "report", overwrite=True)
    assert (tmp_path / "file").read_text() == "mine" and not (tmp_path / "nowhere").exists()


def test_an_older_marker_of_the_command_counts_as_its_own(tmp_path: Path) -> None:
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / ".lookbench-train").write_text("lookbench train run folder\n")
    (folder / "train.jsonl").write_text("{}\n")
    claim = claim_output_folder(folder, "train", also_marks=".lookbench-train")
    assert claim.owns("train.jsonl") and claim.owns(".lookbench-train")


def test_a_failed_run_that_wrote_nothing_leaves_no_claim(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError), output_folder(tmp_path / "new" / "run", "report"):
        raise RuntimeError("refused before writing")
    assert not (tmp_path / "new" / "run").exists()
    folder = users_folder(tmp_path / "mine")
    with pytest.raises(RuntimeError), output_folder(folder, "report", overwrite=True):
        raise RuntimeError("refused before writing")
    assert not (folder / MARKER_NAME).exists() and contents(folder) == USERS


def test_a_failed_run_keeps_the_record_of_what_it_wrote(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError), output_folder(tmp_path / "run", "train"):
        (tmp_path / "run" / "train.jsonl").write_text("{}\n")
        raise RuntimeError("interrupted")
    assert read_marker(tmp_path / "run").files == ("train.jsonl",)  # type: ignore[union-attr]


def test_a_single_file_output_refuses_a_file_it_did_not_write(tmp_path: Path) -> None:
    path = tmp_path / "out.json"
    refuse_foreign_file(path, ours=False, overwrite=False)  # absent: nothing to refuse
    path.write_text("mine")
    with pytest.raises(OutputFolderError, match=f"{path}: exists and was not written by lookbench"):
        refuse_foreign_file(path, ours=False, overwrite=False)
    refuse_foreign_file(path, ours=True, overwrite=False)
    refuse_foreign_file(path, ours=False, overwrite=True)
    with pytest.raises(OutputFolderError, match="not a plain file"):
        refuse_foreign_file(tmp_path, ours=True, overwrite=True)


def test_a_failed_run_in_its_own_folder_records_what_it_wrote(tmp_path: Path) -> None:
    claim_output_folder(tmp_path / "run", "train")
    with pytest.raises(RuntimeError), output_folder(tmp_path / "run", "train"):
        (tmp_path / "run" / "checkpoints").mkdir()
        raise RuntimeError("killed")
    assert read_marker(tmp_path / "run").files == ("checkpoints",)  # type: ignore[union-attr]


def test_a_second_run_into_a_held_folder_is_refused_naming_the_holder(tmp_path: Path) -> None:
    folder = tmp_path / "out"
    first = claim_output_folder(folder, "release")
    with first.recording():
        (folder / "v20260601").mkdir()
        second = claim_output_folder(folder, "release")
        holder = rf"lookbench release \(pid {os.getpid()} on {re.escape(socket.gethostname())}, since [0-9T:+-]+\)"
        refused = pytest.raises(OutputFolderError, match=rf"^{re.escape(str(folder))}: {holder} is writing into it;")
        with refused, second.recording():
            (folder / "v20260601" / "lost.txt").write_text("the second run must not get here")
        assert not (folder / "v20260601" / "lost.txt").exists()
    assert sorted(p.name for p in folder.iterdir()) == [MARKER_NAME, "v20260601"]  # no lock file left behind
    with claim_output_folder(folder, "release").recording():  # free again once the first run ended
        pass


def test_an_output_file_under_a_file_is_refused_before_any_work(tmp_path: Path) -> None:
    blocker = tmp_path / "notes.txt"
    blocker.write_text("mine")
    for target in (blocker / "result.json", blocker / "deeper" / "result.json"):
        with pytest.raises(OutputFolderError, match=f"{re.escape(str(target))}: {re.escape(str(blocker))} is not a"):
            refuse_foreign_file(target, ours=False, overwrite=True)
    refuse_foreign_file(tmp_path / "new" / "deeper" / "result.json", ours=False, overwrite=False)  # made later
    assert blocker.read_text() == "mine"


def test_an_output_folder_under_a_file_is_refused_before_anything_is_made(tmp_path: Path) -> None:
    blocker = tmp_path / "notes.txt"
    blocker.write_text("mine")
    with pytest.raises(OutputFolderError, match=f"{re.escape(str(blocker / 'run'))}: {re.escape(str(blocker))} is"):
        claim_output_folder(blocker / "run", "report")
    assert blocker.read_text() == "mine" and sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]
