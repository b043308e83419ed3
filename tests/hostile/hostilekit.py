"""Shared pieces of the hostile-input suite: a small snapshot, embeddings that rank it exactly, and CLI runs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from click.testing import Result
from typer.testing import CliRunner

from conftest import make_row, png_bytes, write_snapshot
from lookbench.cli.main import app

DIM = 8


def snapshot_spec() -> dict[str, dict[str, list[dict[str, Any]]]]:
    """Studio: two queries with their twins in the gallery; street: one photo cut into two garments; two noise rows."""
    photo = png_bytes(1, 32)
    return {
        "real_studio_flat": {
            "query": [make_row("a", "dress", "red", ["v-neck"], seed=1), make_row("b", "skirt", "blue", seed=2)],
            "gallery": [
                make_row("a", "dress", "red", ["v-neck"], seed=3),
                make_row("x", "dress", "green", seed=4),
                make_row("b", "skirt", "blue", seed=5),
            ],
        },
        "real_streetlook": {
            "query": [
                make_row("s1", "pants", "black", raw=photo, seed=6),
                make_row("s2", "shirt", "white", raw=photo, seed=7),
            ],
            "gallery": [make_row("s1", "pants", "black", seed=8), make_row("s2", "shirt", "white", seed=9)],
        },
        "noise": {"gallery": [make_row("n0", "bag", "black", seed=10), make_row("n1", "hat", "red", seed=11)]},
    }


def vectors() -> dict[str, np.ndarray]:
    """Embeddings under which every query's nearest corpus row is its own product."""
    e = np.eye(DIM, dtype=np.float32)
    return {
        "real_studio_flat/query": np.stack([e[0], e[1]]),
        "real_studio_flat/gallery": np.stack([e[0], e[2], e[1]]),
        "real_streetlook/query": np.stack([e[3], e[4]]),
        "real_streetlook/gallery": np.stack([e[3], e[4]]),
        "noise/gallery": np.stack([e[6], e[7]]),
    }


def write_vectors(root: Path, arrays: dict[str, np.ndarray], card: dict[str, Any] | None = None) -> Path:
    """`root/<subset>/<split>.npy` per array (dtype kept), and `root/model.json` when a card is given."""
    for key, array in arrays.items():
        path = root / f"{key}.npy"
        path.parent.mkdir(parents=True, exist_ok=True)
        np.save(path, array)
    if card is not None:
        (root / "model.json").write_text(json.dumps(card), encoding="utf-8")
    return root


def make_snapshot(root: Path, spec: dict[str, Any] | None = None, version: str = "v20260301") -> Path:
    """Write the spec (default: `snapshot_spec()`) as a snapshot folder."""
    return write_snapshot(root, spec or snapshot_spec(), version)


def invoke(*args: str) -> Result:
    """Run the `lookbench` CLI in-process."""
    return CliRunner().invoke(app, list(args))


def clean_error(result: Result, *fragments: str) -> str:
    """Assert a user error: exit status 2, no traceback (no exception besides the exit), and the fragments shown."""
    text = " ".join(result.output.split())
    assert isinstance(result.exception, SystemExit), f"{type(result.exception).__name__}: {result.exception}"
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    for fragment in fragments:
        assert fragment in text, text
    return text


def evaluate(snapshot: Path, embeddings: Path, out: Path, *extra: str) -> dict[str, Any]:
    """`lookbench eval` with precomputed embeddings into `out` (a JSON path); the parsed result."""
    result = invoke(
        "eval", "-s", str(snapshot), "-m", f"embeddings:{embeddings}", "-o", str(out), "--resamples", "20", *extra
    )
    assert result.exit_code == 0, result.output
    data: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    return data


def rewrite_split(path: Path, table: pa.Table, metadata: dict[bytes, bytes] | None = None) -> None:
    """Overwrite one parquet file with `table` (optionally with this schema metadata)."""
    if metadata is not None:
        table = table.replace_schema_metadata(metadata)
    pq.write_table(table, path)
