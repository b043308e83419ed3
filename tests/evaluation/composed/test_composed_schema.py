"""Composed query splits under hostile input: every unscorable row is an error naming the file, row and field."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from composedkit import SLEEVES, composed_rows, tee
from typer.testing import CliRunner

from conftest import write_snapshot
from lookbench.cli.main import app
from lookbench.errors import SnapshotError
from lookbench.snapshot.composed import composed_table, read_composed_queries
from lookbench.snapshot.reader import open_snapshot
from lookbench.snapshot.writer import rows_to_table, write_split


def _snapshot(root: Path, queries: pa.Table, subset: str = "composed") -> Path:
    gallery = [tee("r1", "red", "long sleeve", 1), tee("t1", "red", "short sleeve", 2)]
    snap = write_snapshot(root, {subset: {"gallery": gallery}})
    pq.write_table(queries, snap / subset / "query.parquet")
    return snap


def _valid(**override: Any) -> dict[str, Any]:
    return {**composed_rows([(tee("r1", "red", "long sleeve", 3), (SLEEVES,), ["t1"])])[0], **override}


def _table(row: dict[str, Any], **columns: Any) -> pa.Table:
    """A one-row composed split whose composed columns are replaced by the given raw values."""
    base = composed_table([row])
    for name, value in columns.items():
        index = base.schema.get_field_index(name)
        array = pa.array([value])
        base = base.set_column(index, name, array) if index >= 0 else base.append_column(name, array)
    return base


def _error(snap: Path) -> str:
    with pytest.raises(SnapshotError) as info:
        open_snapshot(snap).check_task("composed", "composed")
    return str(info.value)


def test_a_valid_split_reads_back(tmp_path: Path) -> None:
    snap = _snapshot(tmp_path, composed_table([_valid()]))
    queries = read_composed_queries(open_snapshot(snap), "composed")
    assert queries.changes == [(SLEEVES,)] and queries.target_ids == [("t1",)]
    assert queries.texts == ["change sleeve length"]


@pytest.mark.parametrize(
    ("columns", "fragment"),
    [
        ({"modification_text": "  "}, "row 0: modification_text is empty"),
        ({"modification_text": "x" * 5000}, "row 0: modification_text is 5,000 characters (at most 4,096)"),
        ({"changes": "not json"}, "row 0: changes must be a list, got text 'not json'"),
        ({"changes": '{"group": "colour"}'}, "row 0: changes must be a list"),
        ({"changes": '[{"group": "colour", "to": "blue", "colour": 1}]'}, "unknown field(s) 'colour'"),
        ({"changes": '[{"group": "", "from": "red", "to": "blue"}]'}, "a change has an empty group"),
        ({"changes": '[{"group": "colour"}]'}, "has neither a from nor a to value"),
        ({"changes": '[{"group": "colour", "from": "Red", "to": "red"}]'}, "has from = to = 'red'"),
        ({"changes": '[{"group": "colour", "from": "blue", "to": "green"}]'}, "from value 'blue' is not an attribute"),
        ({"changes": '[{"group": "colour", "from": "", "to": "red"}]'}, "to value 'red' is already an attribute"),
        ({"changes": '["colour"]'}, "each change must be an object {group, from, to}, got str"),
        (
            {"changes": '[{"group": "colour", "from": "red", "to": "blue"}, {"group": "x", "from": "blue"}]'},
            "a value appears in more than one change",
        ),
        ({"target_ids": ["r1"]}, "row 0: target_ids holds the reference item 'r1'"),
        ({"target_ids": 7}, "row 0: target_ids must be a list, got int"),
        ({"changes": "[]", "target_ids": "[]"}, "a composed query needs changes, target_ids or both"),
    ],
)
def test_bad_rows_name_the_file_row_and_field(tmp_path: Path, columns: dict[str, Any], fragment: str) -> None:
    snap = _snapshot(tmp_path, _table(_valid(), **columns))
    message = _error(snap)
    assert str(snap / "composed" / "query.parquet") in message and fragment in message


def test_more_than_two_changes_are_refused(tmp_path: Path) -> None:
    row = tee("r1", "red", "long sleeve", 3)
    row["other_attributes"] = ["long sleeve", "crew neck", "chest pocket"]
    changes = (
        '[{"group": "colour", "from": "red", "to": "blue"}, {"group": "sleeve length", "from": "long sleeve", '
        '"to": "short sleeve"}, {"group": "details", "from": "chest pocket"}]'
    )
    snap = _snapshot(tmp_path, _table(_valid(**{k: row[k] for k in row}), changes=changes))
    assert "row 0: changes: 3 changes; a composed query has one or two" in _error(snap)


def test_missing_text_column_and_corrupt_file(tmp_path: Path) -> None:
    snap = _snapshot(tmp_path / "a", composed_table([_valid()]).drop_columns(["modification_text"]))
    assert "missing column modification_text" in _error(snap)
    snap = _snapshot(tmp_path / "b", composed_table([_valid()]))
    (snap / "composed" / "query.parquet").write_bytes(b"PAR1 truncated")
    assert "not a readable parquet file" in _error(snap)


def test_a_bad_validation_row_fails_before_any_embedding(tmp_path: Path) -> None:
    snap = _snapshot(tmp_path, composed_table([_valid()]))
    write_split(_table(_valid(), modification_text=""), snap / "composed" / "validation.parquet")
    assert "validation.parquet: row 0: modification_text is empty" in _error(snap)
    (tmp_path / "vectors").mkdir()  # empty: the error must come before any embedding is read
    run = CliRunner().invoke(app, ["eval", "-s", str(snap), "-m", f"embeddings:{tmp_path / 'vectors'}"])
    assert run.exit_code == 2 and "modification_text is empty" in " ".join(run.output.split())
    assert "Traceback" not in run.output


def test_targets_missing_from_the_gallery_are_a_warning(tmp_path: Path) -> None:
    snap = _snapshot(tmp_path, composed_table([_valid(target_ids=["ghost"], changes=[])]))
    opened = open_snapshot(snap)
    opened.check_task("composed", "composed")
    assert any("1 of 1 queries name target_ids none of which is in the gallery" in w for w in opened.warnings)


def test_subset_names_and_splits(tmp_path: Path) -> None:
    snap = _snapshot(tmp_path / "a", composed_table([_valid()]), subset="composed_dress")
    opened = open_snapshot(snap)
    assert opened.subsets == ["composed_dress"] and opened.check_subsets(["composed_dress"]) == ["composed_dress"]
    with pytest.raises(SnapshotError, match="unknown split 'test' of 'composed_dress'"):
        opened.files("composed_dress", "test")
    with pytest.raises(SnapshotError, match="unknown split 'validation' of 'real_studio_flat'"):
        opened.files("real_studio_flat", "validation")
    bad = tmp_path / "b" / "v20260101" / "Composed_Dress"
    write_split(rows_to_table([tee("r1", "red", "long sleeve", 1)]), bad / "gallery.parquet")
    write_split(rows_to_table([tee("n1", "red", "long sleeve", 1)]), bad.parent / "noise" / "gallery.parquet")
    with pytest.raises(SnapshotError, match="unknown subset 'Composed_Dress'"):
        open_snapshot(bad.parent)
    lines = opened.validate()
    assert "composed_dress/query: 1 rows" in lines and not any("more than one row" in line for line in lines)


@pytest.mark.parametrize(
    ("changes", "fragment"),
    [
        ('[{"group": "sleeves", "from": "long sleeve", "to": "short sleeve"}]', "unknown group 'sleeves'"),
        ('[{"group": "colour", "from": "red", "to": "bleu"}]', "to value 'bleu' is not in the taxonomy's group"),
        (
            '[{"group": "colour", "from": "long sleeve", "to": "blue"}]',
            "from value 'long sleeve' is not in the taxonomy's group 'colour'",
        ),
    ],
)
def test_changes_outside_the_taxonomy_are_refused(tmp_path: Path, changes: str, fragment: str) -> None:
    snap = _snapshot(tmp_path, _table(_valid(), changes=changes))
    message = _error(snap)
    assert "row 0: changes" in message and fragment in message


def test_a_non_utf8_modification_text_names_the_row(tmp_path: Path) -> None:
    snap = _snapshot(tmp_path, _table(_valid(), modification_text=b"shorter sle\xe9ves"))
    message = _error(snap)
    assert str(snap / "composed" / "query.parquet") in message
    assert "row 0: modification_text is not UTF-8 (byte 0xe9 at 11)" in message


def test_the_modification_text_reaches_the_text_tower_as_written(tmp_path: Path) -> None:
    text = " and has shorter sleeves"  # a CLIP4Cir-joined FashionIQ pair whose first caption is empty
    snap = _snapshot(tmp_path, _table(_valid(), modification_text=text))
    assert read_composed_queries(open_snapshot(snap), "composed").texts == [text]
