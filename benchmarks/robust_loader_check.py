"""Check that `trained:DIR?trained_share=A` (both networks in torch) embeds what the sweep's composition does.

    python benchmarks/robust_loader_check.py --trained runs/demo --share 0.8 --snapshot ood/fashion-mnist-validation

Embeds one split with the mixed loader and composes the same vectors from the fine-tuned model alone and the frozen
`efficientnet-lite0` (ONNX) as `benchmarks/robust_sweep.py` and `robust_score.py` do; prints the largest vector and
cosine differences and the share of queries whose nearest other query is the same under both.
"""

from __future__ import annotations

import argparse

import numpy as np

from lookbench.embeddings.options import EmbedOptions
from lookbench.models.registry import DEFAULT_MODEL, resolve_model
from lookbench.synth.embedded import open_location


def unit(vectors: np.ndarray) -> np.ndarray:
    found = np.asarray(vectors, dtype=np.float32)
    return found / np.linalg.norm(found, axis=1, keepdims=True)  # type: ignore[no-any-return]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trained", required=True)
    parser.add_argument("--share", type=float, required=True)
    parser.add_argument("--snapshot", required=True)
    parser.add_argument("--split", default="fashion_mnist/query", help="SUBSET/SPLIT")
    args = parser.parse_args()
    snapshot, (subset, split) = open_location(args.snapshot), args.split.split("/")

    def embed(spec: str) -> np.ndarray:
        return unit(resolve_model(spec, EmbedOptions()).embed_split(snapshot, subset, split))

    mixed = embed(f"trained:{args.trained}?trained_share={args.share}")
    tuned, frozen = embed(f"trained:{args.trained}?trained_share=1"), embed(DEFAULT_MODEL)
    composed = np.concatenate([np.sqrt(args.share) * tuned, np.sqrt(1 - args.share) * frozen], axis=1)
    a, b = mixed @ mixed.T, composed @ composed.T
    np.fill_diagonal(a, -9)
    np.fill_diagonal(b, -9)
    print(f"max |difference| of the vectors: {float(np.abs(mixed - composed).max()):.2e}")
    print(f"max |difference| of the cosines: {float(np.abs(a - b).max()):.2e}")
    print(f"same nearest other query: {float((a.argmax(1) == b.argmax(1)).mean()):.4f} of {len(a)}")


if __name__ == "__main__":
    main()
