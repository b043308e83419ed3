"""Write the schema-1.2 fixture: a tiny snapshot, an embeddings folder with a card, and the results the code of
commit 87b3758 wrote for them (run once with that code; `test_schema_compat.py` reads what it wrote)."""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

import numpy as np
from typer.testing import CliRunner

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from conftest import make_row, png_bytes, write_snapshot  # noqa: E402

HERE = Path(__file__).parent / "v1_2"
CARD = {
    "name": "tiny-vectors",
    "release_date": "2025-06",
    "training_cutoff": "2025-05-31",
    "training_data": ["laion"],
    "params": "4.7M",
}


def snapshot_spec() -> dict[str, dict[str, list[dict[str, object]]]]:
    """Two subsets and a noise pool, each image drawn from its own seed (street queries carry a raw photo)."""
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
                make_row("s1", "pants", "black", seed=6, raw=png_bytes(11, 32)),
                make_row("s2", "shirt", "white", seed=7, raw=png_bytes(12, 32)),
            ],
            "gallery": [make_row("s1", "pants", "black", seed=8), make_row("s2", "shirt", "grey", seed=9)],
        },
        "noise": {"gallery": [make_row("n0", "dress", "red", ["v-neck"], seed=10), make_row("n1", "pants", "black")]},
    }


def vectors() -> dict[str, np.ndarray]:
    """Row-aligned vectors for the embeddings folder."""
    e = np.eye(8)
    return {
        "real_studio_flat/query": np.stack([e[0] + 0.1 * e[7], e[1]]),
        "real_studio_flat/gallery": np.stack([e[0], e[2], e[1]]),
        "real_streetlook/query": np.stack([e[3], e[4]]),
        "real_streetlook/gallery": np.stack([e[3], e[4]]),
        "noise/gallery": np.stack([e[0] + 0.2 * e[7], e[6]]),
    }


def main() -> None:
    from lookbench.cli.main import app

    snap = write_snapshot(HERE, snapshot_spec(), "v20260301")
    emb = HERE / "tiny-vectors"
    for key, array in vectors().items():
        (emb / key).parent.mkdir(parents=True, exist_ok=True)
        np.save(emb / f"{key}.npy", array.astype(np.float32))
    (emb / "model.json").write_text(json.dumps(CARD, indent=2) + "\n")
    out = str(HERE / "results" / "{model}__{snapshot}__{rule}.json")
    cache = tempfile.mkdtemp()
    for model in (f"embeddings:{emb}", "efficientnet-lite0"):
        args = ["eval", "-s", str(snap), "-m", model, "-o", out, "--resamples", "50", "--cache-dir", cache]
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 0, result.output


if __name__ == "__main__":
    main()
