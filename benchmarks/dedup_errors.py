"""Measure pHash miss and false-match rates per threshold on Fashion-MNIST (see docs/build.md)."""

from __future__ import annotations

import argparse
import gzip
import io
from pathlib import Path

import numpy as np
from PIL import Image, ImageOps

from lookbench.release.dedup.hashes import hamming, phash_pair, to_words

DEFAULT_DIR = Path("/usr/share/datasets/fashion-mnist")


def load_images(folder: Path, count: int) -> tuple[np.ndarray, np.ndarray]:
    """The first `count` test images (28x28 uint8) and labels of Fashion-MNIST's idx files."""
    with gzip.open(folder / "t10k-images-idx3-ubyte.gz") as fh:
        images = np.frombuffer(fh.read(), dtype=np.uint8, offset=16).reshape(-1, 28, 28)
    with gzip.open(folder / "t10k-labels-idx1-ubyte.gz") as fh:
        labels = np.frombuffer(fh.read(), dtype=np.uint8, offset=8)
    return images[:count], labels[:count]


def _encode(im: Image.Image, fmt: str = "PNG", quality: int = 90) -> bytes:
    buf = io.BytesIO()
    im.save(buf, format=fmt, quality=quality)
    return buf.getvalue()


TRANSFORMS = {
    "resize 50%": lambda im: _encode(im.resize((112, 112), Image.Resampling.BILINEAR)),
    "jpeg q60": lambda im: _encode(im, "JPEG", 60),
    "resize 75% + jpeg q75": lambda im: _encode(im.resize((168, 168), Image.Resampling.LANCZOS), "JPEG", 75),
    "mirror": lambda im: _encode(ImageOps.mirror(im)),
    "mirror + jpeg q70": lambda im: _encode(ImageOps.mirror(im), "JPEG", 70),
}
"""Re-uses the detector must catch; originals are 224x224 upscales of the 28x28 photos."""


def main() -> None:
    """Print the miss rate per transform and the false-match rate over distinct image pairs, per threshold."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", type=Path, default=DEFAULT_DIR)
    parser.add_argument("--count", type=int, default=2000)
    args = parser.parse_args()
    images, labels = load_images(args.data, args.count)
    originals = [Image.fromarray(a).convert("RGB").resize((224, 224), Image.Resampling.BICUBIC) for a in images]
    pairs = [phash_pair(_encode(im)) for im in originals]
    base, flips = to_words([p[0] for p in pairs]), to_words([p[1] for p in pairs])
    thresholds = [8, 16, 24, 32, 40, 48, 56, 64]
    print(f"{len(originals)} Fashion-MNIST test images; rates per Hamming threshold {thresholds}")
    for name, transform in TRANSFORMS.items():
        copies = to_words([phash_pair(transform(im))[0] for im in originals])
        dist = np.minimum(hamming(copies, base), hamming(copies, flips))
        misses = [f"{np.mean(dist > t):.4f}" for t in thresholds]
        print(f"miss rate, {name:24s}: {' '.join(misses)}  (max distance {int(dist.max())})")
    n = len(base)
    upper = np.triu_indices(n, k=1)
    pair = np.concatenate(
        [np.minimum(hamming(base[i], base[i + 1 :]), hamming(base[i], flips[i + 1 :])) for i in range(n - 1)]
    )
    same = (labels[:, None] == labels[None, :])[upper]
    for title, mask in (("all distinct pairs", np.ones_like(same)), ("same-class pairs", same)):
        rates = [f"{np.mean(pair[mask] <= t):.6f}" for t in thresholds]
        print(f"false-match rate, {title} ({int(mask.sum())}): {' '.join(rates)}  (min {int(pair[mask].min())})")


if __name__ == "__main__":
    main()
