"""MANIFEST.json: written, verified on load and by `lookbench snapshot verify`."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from conftest import make_row
from lookbench.cli.main import app
from lookbench.errors import SnapshotError
from lookbench.snapshot import open_snapshot
from lookbench.snapshot.manifest import manifest_problems, read_manifest, write_manifest


def _snap(make_snapshot):
    rows = [make_row("a", "top", "red", seed=1), make_row("b", "top", "blue", seed=2)]
    root = make_snapshot({"real_studio_flat": {"query": rows[:1], "gallery": rows}})
    write_manifest(root, version=root.name)
    return root


def test_manifest_lists_files_rows_and_hashes(make_snapshot):
    root = _snap(make_snapshot)
    manifest = read_manifest(root)
    assert manifest is not None
    assert manifest["files"]["real_studio_flat/gallery.parquet"]["rows"] == 2
    assert len(manifest["files"]["real_studio_flat/query.parquet"]["sha256"]) == 64
    assert manifest_problems(root, manifest) == []
    assert open_snapshot(root).snapshot_id == root.name


def test_tampered_snapshot_fails_on_load_and_verify(make_snapshot):
    root = _snap(make_snapshot)
    target = root / "real_studio_flat" / "query.parquet"
    data = bytearray(target.read_bytes())
    data[len(data) // 2] ^= 0xFF
    target.write_bytes(bytes(data))
    (root / "real_studio_flat" / "extra.txt").write_text("x")
    with pytest.raises(SnapshotError, match="sha256 differs"):
        open_snapshot(root)
    open_snapshot(root, verify=False)
    result = CliRunner().invoke(app, ["snapshot", "verify", str(root)])
    assert result.exit_code == 2
    assert "query.parquet" in result.output and "extra.txt: not in the manifest" in result.output


def test_verify_ok_and_missing_manifest(make_snapshot):
    root = _snap(make_snapshot)
    ok = CliRunner().invoke(app, ["snapshot", "verify", str(root)])
    assert ok.exit_code == 0, ok.output
    (root / "MANIFEST.json").unlink()
    missing = CliRunner().invoke(app, ["snapshot", "verify", str(root)])
    assert missing.exit_code == 2 and "no MANIFEST.json" in missing.output
