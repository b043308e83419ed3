"""A small snapshot, a model's embeddings of it and its evaluated result, for the submission tests."""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from typer.testing import CliRunner

from conftest import make_row, write_snapshot
from lookbench._util.hashing import file_sha256
from lookbench.cli.main import app

runner = CliRunner()
CATEGORIES = {"dress": ("red", "blue"), "skirt": ("pleated", "denim"), "shirt": ("white", "striped")}
DIM = 16
RELEASES = (dt.datetime(2026, 1, 5, tzinfo=dt.timezone.utc), dt.datetime(2025, 12, 1, tzinfo=dt.timezone.utc))
CARD = {"name": "tiny", "release_date": "2025-06-01", "training_cutoff": "2025-05-01", "training_data": ["laion"]}


@dataclass(frozen=True)
class Run:
    """A snapshot, the embeddings a run scored and its result file."""

    snapshot: Path
    embeddings: Path
    result: Path


def build_run(
    root: Path, queries: int = 12, seed: int = 0, card: dict[str, object] | None = None, noise_pool: str = "all"
) -> Run:
    """Write a one-subset snapshot with noise, a model's embeddings (queries near their gallery twin), and run eval."""
    rng = np.random.default_rng(seed)
    query_rows, gallery_rows, q_vec, g_vec = [], [], [], []
    for i in range(queries):
        category = list(CATEGORIES)[i % len(CATEGORIES)]
        main = CATEGORIES[category][i % 2]
        when = RELEASES[i % 2]
        query_rows.append(make_row(f"item-{i}", category, main, ["cotton"], seed=i, first_seen_at=when))
        gallery_rows.append(make_row(f"item-{i}", category, main, ["cotton"], seed=500 + i))
        base = rng.normal(size=DIM)
        q_vec.append(base + 0.8 * rng.normal(size=DIM))
        g_vec.append(base)
    noise = [make_row(f"noise-{j}", "dress", "red", [], seed=900 + j) for j in range(5)]
    spec = {"real_studio_flat": {"query": query_rows, "gallery": gallery_rows}, "noise": {"gallery": noise}}
    snapshot = write_snapshot(root / "snap", spec, "v20260201")
    emb = root / "emb"
    for key, array in (
        ("real_studio_flat/query", np.array(q_vec)),
        ("real_studio_flat/gallery", np.array(g_vec)),
        ("noise/gallery", rng.normal(size=(5, DIM))),
    ):
        (emb / key).parent.mkdir(parents=True, exist_ok=True)
        np.save(emb / f"{key}.npy", array.astype(np.float32))
    (emb / "model.json").write_text(json.dumps(card or CARD))
    result = root / "results" / "tiny.json"
    args = ["eval", "-s", str(snapshot), "-m", f"embeddings:{emb}", "-o", str(result), "--resamples", "50"]
    args += ["--noise", noise_pool]
    outcome = runner.invoke(app, args)
    assert outcome.exit_code == 0, outcome.output
    return Run(snapshot, emb, result)


def reseal(bundle: Path) -> None:
    """Rewrite the manifest's digests as a forger would after editing files."""
    manifest = json.loads((bundle / "manifest.json").read_text())
    files = sorted(p.relative_to(bundle).as_posix() for p in bundle.rglob("*") if p.is_file())
    manifest["files"] = {name: file_sha256(bundle / name) for name in files if name != "manifest.json"}
    (bundle / "manifest.json").write_text(json.dumps(manifest))
