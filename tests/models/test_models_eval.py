"""`lookbench eval` with the offline default model, with every non-loopback connection refused."""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from conftest import make_row, write_snapshot

pytest.importorskip("onnxruntime")


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    real_connect = socket.socket.connect

    def guarded(self: socket.socket, address: Any) -> Any:
        host = address[0] if isinstance(address, tuple) else str(address)
        if host not in ("127.0.0.1", "::1", "localhost") and not str(host).startswith("/"):
            raise OSError(f"network disabled in this test: {address}")
        return real_connect(self, address)

    monkeypatch.setattr(socket.socket, "connect", guarded)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")


def test_eval_with_the_default_model_offline(tmp_path: Path, no_network: None) -> None:
    from lookbench.cli.main import app

    cats = ["top", "skirt", "dress"]
    spec = {
        "real_studio_flat": {
            "query": [make_row(f"q{i}", cats[i % 3], "red", seed=i) for i in range(4)],
            "gallery": [make_row(f"g{i}", cats[i % 3], "red", seed=50 + i) for i in range(8)],
        },
        "noise": {"gallery": [make_row(f"n{i}", "bag", "black", seed=90 + i) for i in range(6)]},
    }
    snap = write_snapshot(tmp_path, spec)
    out = tmp_path / "out" / "{model}.json"
    args = [
        "eval",
        "--snapshot",
        str(snap),
        "--cache-dir",
        str(tmp_path / "cache"),
        "--resamples",
        "10",
        "-o",
        str(out),
    ]
    first = CliRunner().invoke(app, args)
    assert first.exit_code == 0, first.output
    result = json.loads((tmp_path / "out" / "efficientnet-lite0.json").read_text())
    meta = result["model"]["meta"]
    assert meta["spec"] == "builtin:efficientnet-lite0" and meta["embed_dim"] == 1280
    assert meta["id"] == "efficientnet-lite0" and meta["params"] == "4.7M"  # the facts contamination flags read
    chunks = sorted((tmp_path / "cache" / "embeddings").rglob("chunk-*.npz"))
    assert chunks
    second = CliRunner().invoke(app, args)
    assert second.exit_code == 0, second.output
    assert sorted((tmp_path / "cache" / "embeddings").rglob("chunk-*.npz")) == chunks  # nothing re-embedded
