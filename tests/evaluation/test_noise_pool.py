"""`lookbench eval --noise none|all` and `distractor_share@1` on a hand-checked tiny snapshot."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from conftest import make_row, png_bytes, write_snapshot
from lookbench.cli.main import app

runner = CliRunner()
E = np.eye(8)


def _snapshot(root: Path, noise: bool = True) -> Path:
    photo = png_bytes(1, 32)
    spec = {
        "real_studio_flat": {
            "query": [make_row("a", "dress", "red"), make_row("b", "skirt", "blue"), make_row("c", "top", "white")],
            "gallery": [
                make_row("a", "dress", "red"),
                make_row("x", "dress", "green"),
                make_row("b", "skirt", "blue"),
                make_row("c", "top", "black"),
            ],
        },
        "real_streetlook": {
            "query": [make_row("s1", "pants", "black", raw=photo), make_row("s2", "shirt", "white", raw=photo)],
            "gallery": [make_row("s1", "pants", "black"), make_row("s2", "shirt", "white")],
        },
    }
    if noise:
        spec["noise"] = {"gallery": [make_row("n0", "dress", "red"), make_row("n1", "pants", "black")]}
    return write_snapshot(root, spec, "v20260301")


def _embeddings(root: Path) -> Path:
    vectors = {
        # query a equals noise n0 (cosine 1) and is 0.995 from its own gallery item: noise wins top-1
        "real_studio_flat/query": np.stack([E[0] + 0.1 * E[7], E[1], E[3]]),
        # c is a black top, the query a white one: top-1 coarse but never fine
        "real_studio_flat/gallery": np.stack([E[0], E[2], E[1], E[3]]),
        # s1's own item is 0.894 away, noise n1 0.995: noise wins top-1; s2 hits its own item
        "real_streetlook/query": np.stack([E[4], E[2]]),
        "real_streetlook/gallery": np.stack([E[4] + 0.5 * E[5], E[2]]),
        "noise/gallery": np.stack([E[0] + 0.1 * E[7], E[4] + 0.1 * E[6]]),
    }
    for key, array in vectors.items():
        path = root / f"{key}.npy"
        path.parent.mkdir(parents=True, exist_ok=True)
        np.save(path, array.astype(np.float32))
    return root


def _run(snapshot: Path, emb: Path, out: Path, *extra: str) -> dict:
    template = str(out / "{model}__{rule}{noise}.json")
    r = runner.invoke(app, ["eval", "-s", str(snapshot), "-m", f"embeddings:{emb}", "-o", template, *extra])
    assert r.exit_code == 0, r.output
    files = sorted(out.glob("*.json"))
    return {f.name: json.loads(f.read_text()) for f in files}


def test_noise_free_scores_match_the_hand_count(tmp_path: Path) -> None:
    snap = _snapshot(tmp_path / "snap")
    emb = _embeddings(tmp_path / "emb")
    with_noise = _run(snap, emb, tmp_path / "res")["emb__main.json"]
    without = _run(snap, emb, tmp_path / "res", "--noise", "none")["emb__main__noise-none.json"]

    # by hand: with noise, studio hits b only (a loses to n0, c is the wrong colour); street hits s2 only
    expected = {
        "with": {"real_studio_flat": (1 / 3, 1 / 3), "real_streetlook": (1 / 2, 1 / 2), "overall": (2 / 5, 2 / 5)},
        "without": {"real_studio_flat": (2 / 3, 0.0), "real_streetlook": (1.0, 0.0), "overall": (4 / 5, 0.0)},
    }
    for label, data in (("with", with_noise), ("without", without)):
        for scope, (fine, share) in expected[label].items():
            metrics = data["metrics"][scope]
            assert metrics["fine_recall@1"]["value"] == pytest.approx(fine), (label, scope)
            assert metrics["distractor_share@1"]["value"] == pytest.approx(share), (label, scope)
            low, high = metrics["distractor_share@1"]["ci_low"], metrics["distractor_share@1"]["ci_high"]
            assert low <= share <= high
    assert with_noise["config"]["noise"] == "all" and without["config"]["noise"] == "none"
    assert with_noise["snapshot"]["noise_rows"] == 2 and without["snapshot"]["noise_rows"] == 0
    assert without["snapshot"]["subsets"]["real_studio_flat"]["corpus"] == 4


def test_noise_none_without_a_noise_pool_scores_as_all(tmp_path: Path) -> None:
    snap = _snapshot(tmp_path / "snap", noise=False)
    emb = _embeddings(tmp_path / "emb")
    files = _run(snap, emb, tmp_path / "res") | _run(snap, emb, tmp_path / "res", "--noise", "none")
    full, none = files["emb__main.json"], files["emb__main__noise-none.json"]
    assert full["metrics"] == none["metrics"]
    # without noise the studio query a finds its own item first
    assert none["metrics"]["real_studio_flat"]["fine_recall@1"]["value"] == pytest.approx(2 / 3)
    assert none["metrics"]["overall"]["distractor_share@1"]["value"] == 0.0


def test_tables_show_the_distractor_share_on_request(tmp_path: Path) -> None:
    snap = _snapshot(tmp_path / "snap")
    emb = _embeddings(tmp_path / "emb")
    _run(snap, emb, tmp_path / "res")
    _run(snap, emb, tmp_path / "res", "--noise", "none")
    results = [str(tmp_path / "res" / name) for name in ("emb__main.json", "emb__main__noise-none.json")]
    plain = runner.invoke(app, ["tables", *results])
    shown = runner.invoke(app, ["tables", *results, "--distractor-share", "--out", str(tmp_path / "t")])
    assert plain.exit_code == 0 and shown.exit_code == 0, shown.output
    assert "distractor_share@1" not in plain.output and "distractor_share@1" in shown.output
    rows = [line.split(",") for line in (tmp_path / "t" / "tables.csv").read_text().splitlines()]
    shares = {row[0]: float(row[3]) for row in rows if row[1:3] == ["distractor_share@1", "overall"]}
    assert shares == {"emb ?": pytest.approx(0.4), "emb [no noise] ?": 0.0}
