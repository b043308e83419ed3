"""Both error kinds of the builder's duplicate detection, measured (docs/build.md, "De-duplication").

Missed copies: the first `--count` Fashion-MNIST test images (28x28, upscaled to 224x224 RGB) are indexed; each
edited copy (resize, JPEG re-encode, mirror, crop, small colour jitter) is looked up and counts as found only when
it matches its own original. False matches: each original is looked up among the others. False merges: a
LookBench-Synth release (every product known) is de-duplicated the way the dedup stage does it (first seen wins);
a merge of two images of different products is false, and one of products whose labels differ too is a merge of
distinct designs.

    apt-get install dataset-fashion-mnist
    python benchmarks/dedup_errors.py \\
        --fashion-mnist "$(dirname "$(dpkg -L dataset-fashion-mnist | grep t10k-images)")" --synth small
"""

from __future__ import annotations

import argparse
import gzip
import io
import tempfile
import time
from collections.abc import Callable
from datetime import date
from pathlib import Path

import numpy as np
from PIL import Image, ImageEnhance, ImageOps

from lookbench.release.fingerprints.colour import colour_difference
from lookbench.release.fingerprints.hashes import Fingerprint, fingerprint, hamming, to_words
from lookbench.release.fingerprints.index import MAX_CANDIDATES, FingerprintIndex
from lookbench.snapshot import open_snapshot
from lookbench.snapshot.reader import Snapshot
from lookbench.snapshot.schema import NOISE, SPLITS

PHASH_THRESHOLD = 24
COLOUR_THRESHOLDS: tuple[float, ...] = (1.0, 0.05, 0.02, 0.01, 0.005)
"""1.0 is the colour check switched off (every pHash candidate accepted): the tier before this change."""


def encoded(im: Image.Image, fmt: str = "PNG", quality: int = 90) -> bytes:
    """Encoded image bytes."""
    buf = io.BytesIO()
    im.save(buf, format=fmt, quality=quality)
    return buf.getvalue()


def cropped(im: Image.Image, share: float) -> Image.Image:
    """The image less `share` of its width and height on every side."""
    dx, dy = int(im.width * share), int(im.height * share)
    return im.crop((dx, dy, im.width - dx, im.height - dy))


def jittered(im: Image.Image) -> Image.Image:
    """A small colour jitter: 5% brighter, 5% less contrast, 10% more saturated."""
    im = ImageEnhance.Brightness(im).enhance(1.05)
    return ImageEnhance.Color(ImageEnhance.Contrast(im).enhance(0.95)).enhance(1.1)


EDITS: dict[str, Callable[[Image.Image], bytes]] = {
    "resize 50%": lambda im: encoded(im.resize((112, 112), Image.Resampling.BILINEAR)),
    "JPEG q60": lambda im: encoded(im, "JPEG", 60),
    "resize 75% + JPEG q75": lambda im: encoded(im.resize((168, 168), Image.Resampling.LANCZOS), "JPEG", 75),
    "mirror": lambda im: encoded(ImageOps.mirror(im)),
    "mirror + JPEG q70": lambda im: encoded(ImageOps.mirror(im), "JPEG", 70),
    "colour jitter + JPEG q85": lambda im: encoded(jittered(im), "JPEG", 85),
    "crop 5% per side": lambda im: encoded(cropped(im, 0.05)),
}
"""Edits a duplicate detector must see through; originals are 224x224 upscales of the 28x28 photos."""


def fashion_mnist(folder: Path, count: int) -> list[Image.Image]:
    """The first `count` test images of Fashion-MNIST's idx files, as 224x224 RGB."""
    with gzip.open(folder / "t10k-images-idx3-ubyte.gz") as fh:
        arrays = np.frombuffer(fh.read(), dtype=np.uint8, offset=16).reshape(-1, 28, 28)[:count]
    return [Image.fromarray(a).convert("RGB").resize((224, 224), Image.Resampling.BICUBIC) for a in arrays]


def indexed(images: dict[str, bytes]) -> tuple[FingerprintIndex, dict[str, Fingerprint]]:
    """An index over encoded images and their fingerprints."""
    index = FingerprintIndex(images.__getitem__)
    prints = {}
    for key, data in images.items():
        prints[key] = fingerprint(data)
        index.add(key, prints[key].sha256, prints[key].phash)
    return index, prints


def missed_copies(originals: list[Image.Image]) -> tuple[dict[str, list[float]], list[int]]:
    """Per edit, the share of copies not matched to their own original, per colour threshold; false matches."""
    images = {f"fm{i}": encoded(im) for i, im in enumerate(originals)}
    index, prints = indexed(images)
    misses: dict[str, list[float]] = {}
    for name, edit in EDITS.items():
        copies = [fingerprint(edit(im)) for im in originals]
        rates = []
        for threshold in COLOUR_THRESHOLDS:
            found = [index.lookup(c, PHASH_THRESHOLD, threshold).match for c in copies]
            rates.append(float(np.mean([m is None or m.key != f"fm{i}" for i, m in enumerate(found)])))
        misses[name] = rates
        print(f"  {name}: miss rates {[round(r, 4) for r in rates]}", flush=True)
    return misses, false_matches(list(prints.values()))


def false_matches(prints: list[Fingerprint]) -> list[int]:
    """Per colour threshold: how many images match another (distinct) one, as the index would decide."""
    straight = to_words([p.phash for p in prints])
    mirrored = to_words([p.phash_mirror for p in prints])
    best: list[float] = []
    for i, query in enumerate(prints):
        plain, flipped = hamming(straight, straight[i]), hamming(straight, mirrored[i])
        distances = np.minimum(plain, flipped)
        distances[i] = PHASH_THRESHOLD + 1
        near = np.flatnonzero(distances <= PHASH_THRESHOLD)
        diffs = []
        for j in near[np.argsort(distances[near], kind="stable")][:MAX_CANDIDATES]:
            lab = query.lab[:, ::-1] if flipped[j] < plain[j] else query.lab
            diffs.append(colour_difference(lab, prints[int(j)].lab))
        best.append(min(diffs, default=2.0))
    return [sum(d <= threshold for d in best) for threshold in COLOUR_THRESHOLDS]


def embedding_tier(originals: list[Image.Image], spec: str, threshold: float) -> dict[str, float]:
    """Per edit, the share of copies whose nearest original (cosine) is not their own or is below `threshold`;
    and the share of originals whose nearest other original is at or above it (false matches)."""
    from lookbench.release.embedding import image_embedder, unit_rows

    embedder = image_embedder(spec, "--embedding-model")
    base = unit_rows(embedder.embed_images([encoded(im) for im in originals]))
    found: dict[str, float] = {}
    for name, edit in EDITS.items():
        sims = unit_rows(embedder.embed_images([edit(im) for im in originals])) @ base.T
        best = sims.argmax(axis=1)
        ok = (best == np.arange(len(originals))) & (sims.max(axis=1) >= threshold)
        found[f"missed copies, {name}"] = float(1 - ok.mean())
        print(f"  {name}: {found[f'missed copies, {name}']:.4f}", flush=True)
    pairs = base @ base.T
    np.fill_diagonal(pairs, -1.0)
    found["false matches"] = float((pairs.max(axis=1) >= threshold).mean())
    return found


def synth_rows(snap: Snapshot) -> list[tuple[str, frozenset[str], bytes]]:
    """(product, label set, image) of every image of a Synth snapshot, in the order the synth source collects them."""
    rows = []
    parts = [(s, sp) for s in snap.subsets for sp in SPLITS] + ([(NOISE, "gallery")] if snap.has_noise else [])
    for subset, split in parts:
        labels = snap.labels(subset, split)
        for start, images in snap.iter_images(subset, split):
            for offset, data in enumerate(images):
                row = start + offset
                product = f"{subset}/{labels.item_id[row]}" if subset != NOISE else f"noise/{row}"
                design = frozenset([labels.category[row], labels.main_attribute[row], *labels.other_attributes[row]])
                rows.append((product, design, data or b""))
    return rows


def false_merges(rows: list[tuple[str, frozenset[str], bytes]]) -> list[tuple[int, int, int]]:
    """Per colour threshold: (merges, merges of different products, of different designs), first seen wins."""
    prints = [fingerprint(data) for _, _, data in rows]
    by_key = {str(i): data for i, (_, _, data) in enumerate(rows)}
    results = []
    for threshold in COLOUR_THRESHOLDS:
        index = FingerprintIndex(by_key.__getitem__)
        merged = different = distinct = 0
        for i, query in enumerate(prints):
            match = index.lookup(query, PHASH_THRESHOLD, threshold).match
            if match is None:
                index.add(str(i), query.sha256, query.phash)
                continue
            other = int(match.key)
            merged += 1
            different += rows[i][0] != rows[other][0]
            distinct += rows[i][1] != rows[other][1]
        results.append((merged, different, distinct))
        print(f"  colour threshold {threshold}: merged {merged}, different products {different}, designs {distinct}")
    return results


def main() -> None:
    """Print the measurements as Markdown tables."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--fashion-mnist", type=Path, required=True, help="folder of t10k-images-idx3-ubyte.gz")
    parser.add_argument("--count", type=int, default=2000)
    parser.add_argument("--synth", default="small", help="LookBench-Synth size to de-duplicate (or a snapshot folder)")
    parser.add_argument("--embedding-model", help="also measure the embedding tier with this model spec (FMNIST)")
    parser.add_argument("--embedding-threshold", type=float, default=0.97)
    parser.add_argument("--skip-phash", action="store_true", help="only the embedding tier")
    args = parser.parse_args()
    if args.embedding_model:
        print(f"embedding tier {args.embedding_model} at cosine {args.embedding_threshold}", flush=True)
        tier = embedding_tier(
            fashion_mnist(args.fashion_mnist, args.count), args.embedding_model, args.embedding_threshold
        )
        for name, rate in tier.items():
            print(f"| embedding tier, {name} | {100 * rate:.2f}% |")
        if args.skip_phash:
            return
    started = time.monotonic()
    print(f"Fashion-MNIST: {args.count} test images", flush=True)
    misses, wrong = missed_copies(fashion_mnist(args.fashion_mnist, args.count))
    with tempfile.TemporaryDirectory() as tmp:
        if Path(args.synth).is_dir():
            snap = open_snapshot(args.synth)
        else:
            from lookbench.synth.generate import generate_snapshot

            snap = open_snapshot(generate_snapshot(Path(tmp), date(2026, 5, 1), args.synth, seed=0))
        rows = synth_rows(snap)
        print(f"Synth {args.synth}: {len(rows)} images", flush=True)
        merges = false_merges(rows)
    labels = ["off" if t >= 1 else f"{t:.1%}" for t in COLOUR_THRESHOLDS]
    print(f"\npHash threshold {PHASH_THRESHOLD} of 256 bits; colour check threshold per column\n")
    print("| | " + " | ".join(labels) + " |")
    print("|---|" + "---|" * len(labels))
    for name, rates in misses.items():
        print(f"| missed copies, {name} | " + " | ".join(f"{100 * r:.2f}%" for r in rates) + " |")
    print(f"| false matches among {args.count} distinct images | " + " | ".join(str(w) for w in wrong) + " |")
    total = len(rows)
    for title, column in (("merges", 0), ("false merges (different products)", 1), ("... of different designs", 2)):
        cells = " | ".join(f"{m[column]} ({100 * m[column] / total:.1f}%)" for m in merges)
        print(f"| Synth {args.synth}, {title}, of {total} images | {cells} |")
    print(f"\n{time.monotonic() - started:.0f} s")


if __name__ == "__main__":
    main()
