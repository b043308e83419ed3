"""Label-rule consistency check: rank by labels alone (ties by image similarity) and score with the metric code.

Formerly `benchmarks/label_oracle.py` (the "label oracle"), renamed for what it is (issue 23). For each query every
corpus row (gallery, then noise) is scored by its labels only: rows of another category score 0, rows of the query's
category 1 + the Jaccard overlap of the attribute sets A = {main} U other. Rows with equal scores are ordered by a
plain image similarity (cosine of 8 x 8 colour thumbnails). The ranking is scored with lookbench's own metric code.
It checks the label rule: the query's own product can be found by labels, and no distractor carries a query's full
label set. A Synth noise pool is redrawn until none does, so its near-100 Fine R@1 is true by construction and is no
evidence that a size is hard or easy for models. `lookbench audit` reports the same check as `label_consistency`.

    python benchmarks/label_rule_consistency.py --size small --size real          # Synth releases (generated, cached)
    python benchmarks/label_rule_consistency.py --snapshot PATH                     # any snapshot
"""

from __future__ import annotations

import argparse
import io
import sys
from datetime import date
from pathlib import Path

import numpy as np
from PIL import Image

from lookbench.metrics.definitions import FineRule
from lookbench.metrics.relevance import Relevance
from lookbench.metrics.scoring import score_task
from lookbench.models.features import THUMB, thumbnail
from lookbench.snapshot import open_snapshot
from lookbench.snapshot.labels import SplitLabels
from lookbench.snapshot.reader import Snapshot
from lookbench.snapshot.schema import NOISE

sys.path.insert(0, str(Path(__file__).parent))
from synth_validity import snapshot_for  # noqa: E402

KS = (1, 5, 10)
EPSILON = 1e-4
"""Weight of image similarity: below the smallest step between two label scores."""
CARRIERS = "noise rows carrying a query's labels"
COLUMNS = (
    ("fine_recall@1", FineRule.MAIN, "Fine R@1"),
    ("fine_recall@1", FineRule.STRICT, "Fine R@1 strict"),
    ("coarse_recall@1", FineRule.MAIN, "Coarse R@1"),
    ("item_recall@1", FineRule.MAIN, "Item R@1"),
    ("ndcg@5", FineRule.MAIN, "nDCG@5"),
)


def thumbnails(snap: Snapshot, subset: str, split: str) -> np.ndarray:
    """(rows, 192) zero-mean, unit-length 8 x 8 RGB thumbnails of a split's images."""
    out = np.zeros((snap.num_rows(subset, split), THUMB * THUMB * 3), dtype=np.float32)
    for start, images in snap.iter_images(subset, split):
        for offset, data in enumerate(images):
            vector = thumbnail(Image.open(io.BytesIO(data)), THUMB)
            out[start + offset] = vector / (np.linalg.norm(vector) + 1e-6)
    return out


def _encode(labels: SplitLabels, vocab: dict[str, int], categories: dict[str, int]) -> tuple[np.ndarray, np.ndarray]:
    words = -(-len(vocab) // 64)
    bits = np.zeros((len(labels), words), dtype=np.uint64)
    for row in range(len(labels)):
        for attr in labels.attribute_set(row):
            code = vocab[attr]
            bits[row, code // 64] |= np.uint64(1) << np.uint64(code % 64)
    cats = np.fromiter((categories[c] for c in labels.category), dtype=np.int64, count=len(labels))
    return bits, cats


def _vocabularies(*splits: SplitLabels) -> tuple[dict[str, int], dict[str, int]]:
    attributes = sorted({a for split in splits for row in range(len(split)) for a in split.attribute_set(row)})
    categories = sorted({c for split in splits for c in split.category})
    return {a: i for i, a in enumerate(attributes)}, {c: i for i, c in enumerate(categories)}


def label_ranking(
    queries: SplitLabels, corpus: SplitLabels, q_thumbs: np.ndarray, c_thumbs: np.ndarray, k: int, block: int = 64
) -> np.ndarray:
    """(Q, k) corpus rows ranked by label score (category, then Jaccard of A) and then by image similarity."""
    vocab, categories = _vocabularies(queries, corpus)
    q_bits, q_cat = _encode(queries, vocab, categories)
    c_bits, c_cat = _encode(corpus, vocab, categories)
    q_count = np.bitwise_count(q_bits).sum(axis=1)
    c_count = np.bitwise_count(c_bits).sum(axis=1)
    top = np.zeros((len(queries), k), dtype=np.int64)
    for start in range(0, len(queries), block):
        stop = min(start + block, len(queries))
        inter = np.bitwise_count(q_bits[start:stop, None, :] & c_bits[None, :, :]).sum(axis=2)
        union = q_count[start:stop, None] + c_count[None, :] - inter
        same = q_cat[start:stop, None] == c_cat[None, :]
        score = np.where(same, 1.0 + inter / np.maximum(union, 1), 0.0)
        score += EPSILON * (1.0 + q_thumbs[start:stop] @ c_thumbs.T)
        part = np.argpartition(-score, k - 1, axis=1)[:, :k]
        order = np.argsort(-np.take_along_axis(score, part, axis=1), axis=1, kind="stable")
        top[start:stop] = np.take_along_axis(part, order, axis=1)
    return top


def carriers(queries: SplitLabels, rows: SplitLabels, block: int = 32) -> int:
    """How many (query, row) pairs have the row carrying the query's full label set (same category, A_q in A_i)."""
    vocab, categories = _vocabularies(queries, rows)
    q_bits, q_cat = _encode(queries, vocab, categories)
    r_bits, r_cat = _encode(rows, vocab, categories)
    count = 0
    for start in range(0, len(queries), block):
        stop = min(start + block, len(queries))
        missing = q_bits[start:stop, None, :] & ~r_bits[None, :, :]
        same = q_cat[start:stop, None] == r_cat[None, :]
        count += int((same & (missing.sum(axis=2) == 0)).sum())
    return count


def label_rule_consistency(snap: Snapshot) -> dict[str, dict[str, float]]:
    """Label-only ranking metrics (percent) per subset and overall, and noise rows carrying a query's labels."""
    noise_thumbs = (
        thumbnails(snap, NOISE, "gallery") if snap.has_noise else np.zeros((0, THUMB * THUMB * 3), np.float32)
    )
    table: dict[str, dict[str, float]] = {}
    sums: dict[str, float] = {}
    total = 0
    for subset in snap.subsets:
        queries = snap.labels(subset, "query")
        corpus = snap.corpus_labels(subset)
        gallery_rows = snap.num_rows(subset, "gallery")
        c_thumbs = np.concatenate([thumbnails(snap, subset, "gallery"), noise_thumbs])
        top = label_ranking(queries, corpus, thumbnails(snap, subset, "query"), c_thumbs, max(KS))
        relevance = Relevance.build(queries, corpus, gallery_rows)
        row = {}
        for metric, rule, label in COLUMNS:
            row[label] = 100 * float(np.mean(score_task(relevance, top, KS, rule).values[metric]))
            sums[label] = sums.get(label, 0.0) + row[label] * len(queries)
        noise = corpus.take(np.arange(gallery_rows, len(corpus)))
        row[CARRIERS] = float(carriers(queries, noise)) if len(noise) else 0.0
        sums[CARRIERS] = sums.get(CARRIERS, 0.0) + row[CARRIERS]
        table[subset] = row
        total += len(queries)
    table["overall"] = {k: v if k == CARRIERS else v / total for k, v in sums.items()}
    return table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", action="append", default=[], help="a Synth size (repeatable)")
    parser.add_argument("--snapshot", action="append", default=[], type=Path, help="a snapshot folder (repeatable)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--release", type=date.fromisoformat, default=date(2026, 6, 1))
    args = parser.parse_args()
    targets = [(f"synth {s}", snapshot_for(s, args.release, args.seed)) for s in args.size]
    targets += [(str(p), p) for p in args.snapshot]
    if not targets:
        parser.error("give --size or --snapshot")
    labels = [label for _, _, label in COLUMNS]
    print(f"| snapshot | subset | {' | '.join(labels)} | {CARRIERS} |")
    print("| --- " * (len(labels) + 3) + "|")
    for name, path in targets:
        for scope, row in label_rule_consistency(open_snapshot(path)).items():
            cells = " | ".join(f"{row[label]:.2f}" for label in labels)
            print(f"| {name} | {scope} | {cells} | {int(row[CARRIERS])} |", flush=True)


if __name__ == "__main__":
    main()
