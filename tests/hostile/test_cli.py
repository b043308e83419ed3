"""The command line under hostile use: every --help renders, user errors never show a traceback."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import typer
from hostilekit import clean_error, invoke, make_snapshot, vectors, write_vectors

from lookbench.cli.main import app
from lookbench.errors import LookBenchError
from lookbench.taxonomy.loader import load_taxonomy_file


def _commands(command: Any, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    found = [path]
    if hasattr(command, "list_commands"):  # a group (typer may vendor its own click); `lookbench` loads lazily
        for name in command.list_commands(None):
            found.extend(_commands(command.get_command(None, name), (*path, name)))
    return found


def test_every_command_has_working_help() -> None:
    paths = _commands(typer.main.get_command(app))
    assert ("eval",) in paths and ("snapshot", "validate") in paths and len(paths) > 12
    for path in paths:
        run = invoke(*path, "--help")
        assert run.exit_code == 0 and run.exception is None, (path, run.exception, run.output)
        assert "Usage:" in run.output


def test_invalid_dates_are_user_errors(tmp_path: Path) -> None:
    snap = make_snapshot(tmp_path / "s", version="v20260230")
    emb = write_vectors(tmp_path / "e", vectors())
    out = str(tmp_path / "r.json")
    run = invoke("eval", "-s", str(snap), "-m", f"embeddings:{emb}", "-o", out, "--since", "2026-01-01")
    clean_error(run, "snapshot 'v20260230': its name is not a real date")
    clean_error(invoke("eval", "-s", str(snap), "-m", f"embeddings:{emb}", "--since", "2026-02-30"), "--since")
    assert invoke("eval", "-s", str(snap), "-m", f"embeddings:{emb}", "-o", out).exit_code == 0  # no window: fine


@pytest.mark.parametrize("case", ["folder", "not-utf8", "markup"])
def test_unreadable_files_are_user_errors(tmp_path: Path, case: str) -> None:
    path = tmp_path / "result.json"
    if case == "folder":
        path.mkdir()
    elif case == "not-utf8":
        path.write_bytes(b'{"schema_version": "1.0", "name": "\xff\xfe"}')
    else:
        path = tmp_path / "[/vYYYYMMDD]" / "[bold]missing.json"
    clean_error(invoke("tables", str(path)), str(path))


def test_debug_shows_the_traceback(tmp_path: Path) -> None:
    missing = tmp_path / "missing.json"
    clean_error(invoke("tables", str(missing)), "result file not found")
    run = invoke("--debug", "tables", str(missing))
    assert isinstance(run.exception, LookBenchError) and "result file not found" in str(run.exception)


def test_yaml_duplicate_keys_and_bad_bytes_are_errors(tmp_path: Path) -> None:
    from lookbench._util.yamlfile import load_yaml

    taxonomy = tmp_path / "taxonomy.yaml"
    taxonomy.write_text("version: '1'\ngroups: {}\ncategories: {}\nversion: '2'\n", encoding="utf-8")
    with pytest.raises(LookBenchError, match=r"taxonomy.yaml: .*line 4.*duplicate key 'version' \(first on line 1"):
        load_taxonomy_file(taxonomy)
    taxonomy.write_bytes(b"version: '1'\ngroups: {}\ncategories: {\xe9t\xe9: {}}\n")
    with pytest.raises(LookBenchError, match=r"taxonomy.yaml: line 3: not UTF-8"):
        load_taxonomy_file(taxonomy)
    nested = tmp_path / "nested.yaml"
    nested.write_text("a:\n  b: 1\n  c: 2\n  b: 3\n", encoding="utf-8")
    with pytest.raises(LookBenchError, match=r"nested.yaml: .*duplicate key 'b' \(first on line 2, again on line 4\)"):
        load_yaml(nested)
    nested.write_text("base: &base {b: 1, c: 2}\nitem:\n  <<: *base\n  b: 3\n", encoding="utf-8")
    assert load_yaml(nested)["item"] == {"b": 3, "c": 2}  # overriding a merged key is not a duplicate


def test_summary_shows_the_interval(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")  # one table row per line (a narrow terminal wraps the cells)
    snap = make_snapshot(tmp_path / "s")
    arrays = vectors()
    arrays["real_studio_flat/query"][1] = arrays["real_studio_flat/gallery"][1]  # query b finds a green dress
    emb = write_vectors(tmp_path / "e", arrays)
    out = tmp_path / "r.json"
    run = invoke("eval", "-s", str(snap), "-m", f"embeddings:{emb}", "-o", str(out), "--resamples", "200")
    assert run.exit_code == 0, run.output
    overall = json.loads(out.read_text())["metrics"]["overall"]["fine_recall@1"]
    assert overall["ci_high"] > overall["ci_low"]
    shown = f"{100 * overall['value']:.2f} ±{50 * (overall['ci_high'] - overall['ci_low']):.1f}"
    assert shown in run.output and "half the 95% bootstrap interval" in run.output
