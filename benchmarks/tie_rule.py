"""How often a feature as blind as image size ranks a distractor first, under each tie rule.

Embeds every image of a snapshot as its (width, height), which ties whole groups of corpus rows (every image of one
aspect ratio), and reports per subset the share of queries whose top 1 is a noise row:

* `lower_row`: ties to the lower corpus row (the rule before `lookbench.search.ties`; gallery rows come first);
* `tie_rule`: the evaluator's rule, from `lookbench eval -m embeddings:DIR` itself (`distractor_share@1`);
* `random_expected`: the expected share under uniformly random tie-breaks (noise rows / rows in each query's top
  tie group, averaged), computed from the scores alone.

    python benchmarks/tie_rule.py SNAPSHOT [--out bench-out/tie_rule]

SNAPSHOT: a snapshot folder with a noise pool (`lookbench synth --default` prints the default's folder).
"""

from __future__ import annotations

import argparse
import io
import json
import subprocess
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
from measure import lookbench, record, results_file
from PIL import Image

from lookbench.search import ExactSearch
from lookbench.snapshot.reader import open_snapshot
from lookbench.snapshot.schema import NOISE


def image_sizes(files: list[Path]) -> np.ndarray:
    """(rows, 2) float32 width and height of every image, read from the image headers."""
    sizes = []
    for path in files:
        for value in pq.read_table(path, columns=["image"])["image"].to_pylist():
            sizes.append(Image.open(io.BytesIO(value["bytes"])).size)
    return np.asarray(sizes, dtype=np.float32)


def unit(rows: np.ndarray) -> np.ndarray:
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("snapshot", type=Path)
    parser.add_argument("--out", type=Path, default=Path("bench-out/tie_rule"))
    args = parser.parse_args()
    snapshot = open_snapshot(args.snapshot)
    vectors = args.out / "image-size"
    subsets = snapshot.subsets_of_kind("image")
    arrays = {(s, split): image_sizes(snapshot.files(s, split)) for s in subsets for split in ("query", "gallery")}
    arrays[(NOISE, "gallery")] = image_sizes(snapshot.files(NOISE, "gallery"))
    for (subset, split), array in arrays.items():
        (vectors / subset).mkdir(parents=True, exist_ok=True)
        np.save(vectors / subset / f"{split}.npy", array)
    result = args.out / "image-size.json"
    subprocess.run(
        lookbench("eval", "-s", str(args.snapshot), "-m", f"embeddings:{vectors}", "-o", str(result)), check=True
    )
    metrics = json.loads(result.read_text())["metrics"]
    noise = unit(arrays[(NOISE, "gallery")])
    figures: dict[str, dict[str, float]] = {}
    for subset in subsets:
        queries, gallery = unit(arrays[(subset, "query")]), unit(arrays[(subset, "gallery")])
        top = ExactSearch().search(queries, [gallery, noise], 1).indices[:, 0]
        scores = (queries.astype(np.float64) @ np.concatenate([gallery, noise]).astype(np.float64).T).astype(np.float32)
        best = scores == scores.max(axis=1, keepdims=True)
        figures[subset] = {
            "queries": len(queries),
            "noise_share_of_corpus": round(len(noise) / (len(gallery) + len(noise)), 4),
            "lower_row": round(float(np.mean(top >= len(gallery))), 4),
            "tie_rule": round(metrics[subset]["distractor_share@1"]["value"], 4),
            "random_expected": round(float(np.mean(best[:, len(gallery) :].sum(axis=1) / best.sum(axis=1))), 4),
        }
    figures["overall_tie_rule"] = {"value": round(metrics["overall"]["distractor_share@1"]["value"], 4)}
    record(**figures)
    print(json.dumps(figures, indent=1))


if __name__ == "__main__":
    with results_file("tie_rule"):
        main()
