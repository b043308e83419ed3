"""A snapshot written by the Hugging Face `datasets` library, evaluated end to end with the default model."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow.parquet as pq
import pytest
from PIL import Image
from typer.testing import CliRunner

pytest.importorskip("onnxruntime")
datasets = pytest.importorskip("datasets")

CATEGORIES = ["Dress", "Skirt", "Blouse"]


def _photo(seed: int) -> Image.Image:
    rng = np.random.default_rng(seed)
    base = rng.integers(0, 256, size=3)
    noise = rng.integers(-40, 40, size=(48, 40, 3))
    return Image.fromarray(np.clip(base + noise, 0, 255).astype(np.uint8))


def _rows(ids: list[int], seeds: list[int]) -> dict[str, list[Any]]:
    return {
        "image": [_photo(s) for s in seeds],
        "category": [CATEGORIES[i % 3] for i in ids],
        "main_attribute": ["Red" if i % 2 else "Blue" for i in ids],
        "other_attributes": [["V-Neck"] if i % 2 else [] for i in ids],
        "item_ID": ids,
    }


def _write(rows: dict[str, list[Any]], path: Path, shards: int = 1) -> None:
    features = datasets.Features(
        {
            "image": datasets.Image(),
            "category": datasets.Value("string"),
            "main_attribute": datasets.Value("string"),
            "other_attributes": datasets.Sequence(datasets.Value("string")),
            "item_ID": datasets.Value("int64"),
        }
    )
    data = datasets.Dataset.from_dict(rows, features=features)
    path.parent.mkdir(parents=True, exist_ok=True)
    if shards == 1:
        data.to_parquet(str(path))
        return
    for index in range(shards):
        shard = path.parent / f"{path.stem}-{index:05d}-of-{shards:05d}.parquet"
        data.shard(num_shards=shards, index=index, contiguous=True).to_parquet(str(shard))


def test_datasets_written_snapshot_end_to_end(tmp_path: Path) -> None:
    from lookbench.cli.main import app

    snap = tmp_path / "v20260115"
    for subset, offset in (("real_studio_flat", 0), ("real_streetlook", 100)):
        queries = list(range(offset, offset + 4))
        # each query's own photo is in the gallery (twice for item offset+1: two photos of one product)
        gallery = [*queries, offset + 1, offset + 50, offset + 51]
        _write(_rows(queries, queries), snap / subset / "query.parquet")
        _write(_rows(gallery, [*queries, offset + 7, offset + 50, offset + 51]), snap / subset / "gallery.parquet")
    noise = list(range(900, 906))
    _write(_rows(noise, noise), snap / "noise" / "gallery.parquet", shards=2)

    schema = pq.read_schema(snap / "real_studio_flat" / "query.parquet")
    assert sorted(schema.names) == ["category", "image", "item_ID", "main_attribute", "other_attributes"]
    assert str(schema.field("item_ID").type) == "int64" and b"huggingface" in schema.metadata
    assert sorted(p.name for p in (snap / "noise").iterdir()) == [
        "gallery-00000-of-00002.parquet",
        "gallery-00001-of-00002.parquet",
    ]

    runner = CliRunner()
    validated = runner.invoke(app, ["snapshot", "validate", str(snap), "--images"])
    assert validated.exit_code == 0, validated.output
    assert "noise/gallery: 6 rows" in validated.output
    out = tmp_path / "out" / "{model}.json"
    run = runner.invoke(
        app, ["eval", "-s", str(snap), "--cache-dir", str(tmp_path / "cache"), "--resamples", "20", "-o", str(out)]
    )
    assert run.exit_code == 0, run.output
    result = json.loads((tmp_path / "out" / "efficientnet-lite0.json").read_text())
    assert result["snapshot"]["noise_rows"] == 6
    assert result["snapshot"]["subsets"]["real_studio_flat"] == {
        "queries": 4,
        "gallery": 7,
        "corpus": 13,
        "skipped_queries": 0,
        "skipped_corpus": 0,
    }
    overall = result["metrics"]["overall"]
    assert overall["item_recall@1"]["value"] == 1.0  # each query's identical photo ranks first
    assert overall["fine_recall@1"]["value"] == 1.0 and overall["coarse_recall@1"]["value"] == 1.0
    assert result["warnings"] == []
    per_query = pq.read_table(tmp_path / "out" / "efficientnet-lite0.per_query.parquet")
    assert per_query["query_item_id"].to_pylist()[:4] == ["0", "1", "2", "3"]
