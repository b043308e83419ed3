"""Both error kinds of the release builder's duplicate detection, measured (docs/release.md, "De-duplication").

Missed copies: the first `--count` Fashion-MNIST test images (28x28, upscaled to 224x224 RGB) are indexed; each
edited copy (resize, JPEG re-encode, mirror, crops, small colour jitter) is looked up and counts as found only when
it matches its own original. False matches: each original is looked up among the originals before it. False
merges: a LookBench-Synth release (every product known) is de-duplicated the way the dedup stage does it (first
seen wins); a merge of two images of different products is false, and one of products whose labels differ too is
a merge of distinct designs. Each is measured per setting (pHash threshold, colour threshold, crop tier on/off),
under the library's crop-candidate rule.

    apt-get install dataset-fashion-mnist
    python benchmarks/dedup/errors.py \
        --fashion-mnist "$(dirname "$(dpkg -L dataset-fashion-mnist | grep t10k-images)")" --synth small
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: measure.py and the dedup package

import argparse
import gzip
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import date
from typing import get_args

import numpy as np
from measure import results_file
from PIL import Image, ImageOps

from dedup.common import (
    cropped,
    encoded,
    jittered,
    random_crop,
)
from lookbench.search.duplicates import crops, tables
from lookbench.search.duplicates.crops import CropPairs
from lookbench.search.duplicates.hashes import Fingerprint, fingerprint
from lookbench.search.duplicates.index import (
    MAX_CROP_CANDIDATES,
    Candidate,
    FingerprintIndex,
    decide,
)
from lookbench.snapshot import open_snapshot
from lookbench.snapshot.reader import Snapshot
from lookbench.snapshot.schema import NOISE, SPLITS


@dataclass(frozen=True)
class Setting:
    """One column of the tables: the thresholds, and the crop tier's own pHash gate (None: the tier is off)."""

    phash_threshold: int
    colour_threshold: float
    crop_threshold: int | None

    @classmethod
    def parse(cls, text: str) -> Setting:
        """`BITS:COLOUR:CROPBITS`, e.g. `24:0.01:16`; a colour of 1 switches the colour check off, a CROPBITS of
        `off` the crop tier."""
        try:
            bits, colour, crops = text.split(":")
            return cls(int(bits), float(colour), None if crops == "off" else int(crops))
        except ValueError as exc:
            raise argparse.ArgumentTypeError(f"{text!r}: expected BITS:COLOUR:CROPBITS|off ({exc})") from exc

    @property
    def label(self) -> str:
        """Column heading."""
        colour = "colour off" if self.colour_threshold >= 1 else f"colour {self.colour_threshold:.1%}"
        crops = "crops off" if self.crop_threshold is None else f"crops {self.crop_threshold} bits"
        return f"{self.phash_threshold} bits, {colour}, {crops}"

    def decide(self, candidates: Iterable[Candidate]) -> str | None:
        """The key this setting matches among a look-up's candidates (taken with looser settings), or None."""
        kept = [c for c in candidates if self.crop_threshold is not None or c.tier != "crop"]
        match = decide(kept, self.phash_threshold, self.colour_threshold, self.crop_threshold or 0).match
        return None if match is None else match.key


SETTINGS = (
    Setting(24, 1.0, None),
    Setting(24, 0.01, None),
    Setting(24, 0.01, 16),
    Setting(24, 0.01, 24),
    Setting(24, 0.005, 16),
)


"""Defaults: before the colour check, the colour check alone, the crop tier (the default), crop and colour sweeps."""


EDITS: dict[str, Callable[[Image.Image, int], bytes]] = {
    "resize 50%": lambda im, _: encoded(im.resize((112, 112), Image.Resampling.BILINEAR)),
    "JPEG q60": lambda im, _: encoded(im, "JPEG", 60),
    "resize 75% + JPEG q75": lambda im, _: encoded(im.resize((168, 168), Image.Resampling.LANCZOS), "JPEG", 75),
    "mirror": lambda im, _: encoded(ImageOps.mirror(im)),
    "mirror + JPEG q70": lambda im, _: encoded(ImageOps.mirror(im), "JPEG", 70),
    "colour jitter + JPEG q85": lambda im, _: encoded(jittered(im), "JPEG", 85),
    "crop 5% per side": lambda im, _: encoded(cropped(im, 0.05)),
    "crop 10% per side": lambda im, _: encoded(cropped(im, 0.10)),
    "crop 10% off the left": lambda im, _: encoded(cropped(im, 0.10, 0, 0, 0)),
    "crop 10% off the bottom": lambda im, _: encoded(cropped(im, 0, 0, 0, 0.10)),
    "crop 8% off the top and right": lambda im, _: encoded(cropped(im, 0, 0.08, 0.08, 0)),
    "crop 7% per side + resize to 150 px + JPEG q75": lambda im, _: encoded(
        cropped(im, 0.07).resize((150, 150), Image.Resampling.LANCZOS), "JPEG", 75
    ),
    "mirror + crop 5% per side + JPEG q80": lambda im, _: encoded(ImageOps.mirror(cropped(im, 0.05)), "JPEG", 80),
    "random crop, 0-12% off each side": lambda im, i: encoded(random_crop(im, i)),
}


"""Edits a duplicate detector must see through; originals are 224x224 upscales of the 28x28 photos."""


CROP_PAIRS: dict[str, tuple[Callable[[Image.Image, int], bytes], Callable[[Image.Image, int], bytes]]] = {
    "two crops of one photo: 10% off the left, 10% off the right": (
        lambda im, _: encoded(cropped(im, 0.10, 0, 0, 0)),
        lambda im, _: encoded(cropped(im, 0, 0, 0.10, 0)),
    ),
    "two crops of one photo: 8% off the top and left, 8% off the bottom and right": (
        lambda im, _: encoded(cropped(im, 0.08, 0.08, 0, 0)),
        lambda im, _: encoded(cropped(im, 0, 0, 0.08, 0.08)),
    ),
    "two crops of one photo: 5% per side, 10% off the top + JPEG q80": (
        lambda im, _: encoded(cropped(im, 0.05)),
        lambda im, _: encoded(cropped(im, 0, 0.10, 0, 0), "JPEG", 80),
    ),
    "two random crops of one photo, 0-12% off each side each": (
        lambda im, i: encoded(random_crop(im, 1_000_000 + i)),
        lambda im, i: encoded(random_crop(im, 2_000_000 + i)),
    ),
}


"""Two different crops of one photo (neither a crop of the other): the first is indexed, the second looked up."""


def fashion_mnist(folder: Path, count: int) -> list[Image.Image]:
    """The first `count` test images of Fashion-MNIST's idx files, as 224x224 RGB."""
    with gzip.open(folder / "t10k-images-idx3-ubyte.gz") as fh:
        arrays = np.frombuffer(fh.read(), dtype=np.uint8, offset=16).reshape(-1, 28, 28)[:count]
    return [Image.fromarray(a).convert("RGB").resize((224, 224), Image.Resampling.BICUBIC) for a in arrays]


def taken(candidates: Iterator[Candidate], settings: tuple[Setting, ...]) -> list[Candidate]:
    """A look-up's candidates up to the first that every setting accepts (the rest cannot change any decision)."""
    strictest = Setting(
        min(s.phash_threshold for s in settings), min(s.colour_threshold for s in settings), crop_threshold=None
    )
    out = []
    for candidate in candidates:
        out.append(candidate)
        if candidate.tier != "crop" and strictest.decide([candidate]) is not None:
            break
    return out


def looked_up(index: FingerprintIndex, query: Fingerprint, settings: tuple[Setting, ...]) -> list[str | None]:
    """The key each setting matches for `query` (one pass over the candidates of the loosest setting)."""
    loosest = max(max(s.phash_threshold, s.crop_threshold or 0) for s in settings)
    found = taken(index.candidates(query, loosest, any(s.crop_threshold is not None for s in settings)), settings)
    return [setting.decide(found) for setting in settings]


def miss_rates(name: str, index: FingerprintIndex, copies: list[bytes], settings: tuple[Setting, ...]) -> list[float]:
    """Per setting, the share of the copies (copy i of the entry keyed `fm{i}`) not matched to their own entry."""
    started = time.monotonic()
    keys = [looked_up(index, fingerprint(copy), settings) for copy in copies]
    rates = [float(np.mean([k[s] != f"fm{i}" for i, k in enumerate(keys)])) for s in range(len(settings))]
    print(f"  {name}: miss rates {[round(r, 4) for r in rates]} ({time.monotonic() - started:.0f} s)", flush=True)
    return rates


def missed_copies(
    originals: list[Image.Image], settings: tuple[Setting, ...], pairs: CropPairs
) -> dict[str, list[float]]:
    """Per edit and setting, the share of copies not matched to their own original."""
    index = FingerprintIndex.of_images({f"fm{i}": encoded(im) for i, im in enumerate(originals)}, pairs)
    return {
        name: miss_rates(name, index, [edit(im, i) for i, im in enumerate(originals)], settings)
        for name, edit in EDITS.items()
    }


def missed_between_crops(
    originals: list[Image.Image], settings: tuple[Setting, ...], pairs: CropPairs
) -> dict[str, list[float]]:
    """Per pair of crops and setting, the share of second crops not matched to the first crop of their photo."""
    misses: dict[str, list[float]] = {}
    for name, (first, second) in CROP_PAIRS.items():
        index = FingerprintIndex.of_images({f"fm{i}": first(im, i) for i, im in enumerate(originals)}, pairs)
        misses[name] = miss_rates(name, index, [second(im, i) for i, im in enumerate(originals)], settings)
    return misses


def false_matches(originals: list[Image.Image], settings: tuple[Setting, ...], pairs: CropPairs) -> list[int]:
    """Per setting, how many originals match one of the (distinct) originals before them."""
    images = {f"fm{i}": encoded(im) for i, im in enumerate(originals)}
    index = FingerprintIndex(images.__getitem__, crop_pairs=pairs)
    counts = [0] * len(settings)
    for key, data in images.items():
        query = fingerprint(data)
        for s, found in enumerate(looked_up(index, query, settings)):
            counts[s] += found is not None
        index.add(key, query.sha256, query.phash, query.windows)
    print(f"  false matches {counts}", flush=True)
    return counts


def embedding_tier(originals: list[Image.Image], spec: str, threshold: float) -> dict[str, float]:
    """Per edit, the share of copies whose nearest original (cosine) is not their own or is below `threshold`;
    and the share of originals whose nearest other original is at or above it (false matches)."""
    from lookbench.release.embedding import image_embedder, unit_rows

    embedder = image_embedder(spec, "--embedding-model")
    base = unit_rows(embedder.embed_images([encoded(im) for im in originals]))
    found: dict[str, float] = {}
    for name, edit in EDITS.items():
        sims = unit_rows(embedder.embed_images([edit(im, i) for i, im in enumerate(originals)])) @ base.T
        best = sims.argmax(axis=1)
        ok = (best == np.arange(len(originals))) & (sims.max(axis=1) >= threshold)
        found[f"missed copies, {name}"] = float(1 - ok.mean())
        print(f"  {name}: {found[f'missed copies, {name}']:.4f}", flush=True)
    pairs = base @ base.T
    np.fill_diagonal(pairs, -1.0)
    found["false matches"] = float((pairs.max(axis=1) >= threshold).mean())
    return found


@dataclass(frozen=True)
class SynthImage:
    """One image of a Synth snapshot: its product, its label set, its bytes."""

    product: str
    design: frozenset[str]
    data: bytes


def synth_images(snap: Snapshot) -> list[SynthImage]:
    """Every image of a Synth snapshot, in the order the synth source collects them."""
    rows = []
    parts = [(s, sp) for s in snap.subsets for sp in SPLITS] + ([(NOISE, "gallery")] if snap.has_noise else [])
    for subset, split in parts:
        labels = snap.labels(subset, split)
        for start, images in snap.iter_images(subset, split):
            for offset, data in enumerate(images):
                row = start + offset
                product = f"{subset}/{labels.item_id[row]}" if subset != NOISE else f"noise/{row}"
                design = frozenset([labels.category[row], labels.main_attribute[row], *labels.other_attributes[row]])
                rows.append(SynthImage(product, design, data or b""))
    return rows


@dataclass(frozen=True)
class Merges:
    """A de-duplication of Synth under one setting: merges, false ones, of distinct designs, by the crop tier."""

    merged: int
    different_products: int
    different_designs: int
    false_by_crop_tier: int


def false_merges(rows: list[SynthImage], settings: tuple[Setting, ...], pairs: CropPairs) -> list[Merges]:
    """Per setting, the merges of a first-seen-wins de-duplication and how many are false."""
    prints = [fingerprint(row.data) for row in rows]
    by_key = {str(i): row.data for i, row in enumerate(rows)}
    results = []
    for setting in settings:
        started = time.monotonic()
        index = FingerprintIndex(by_key.__getitem__, crop_pairs=pairs)
        merged = different = distinct = by_crop = 0
        for i, query in enumerate(prints):
            crops = setting.crop_threshold is not None
            match = index.lookup(
                query, setting.phash_threshold, setting.colour_threshold, crops, setting.crop_threshold or 0
            ).match
            if match is None:
                index.add(str(i), query.sha256, query.phash, query.windows)
                continue
            other = rows[int(match.key)]
            merged += 1
            different += rows[i].product != other.product
            distinct += rows[i].design != other.design
            by_crop += rows[i].product != other.product and match.tier == "crop"
        results.append(Merges(merged, different, distinct, by_crop))
        print(f"  {setting.label}: {results[-1]} ({time.monotonic() - started:.0f} s)", flush=True)
    return results


def rule_label() -> str:
    """How the library's crop-candidate rule reads in the output."""
    flips = tables.CROP_CANDIDATE_FLIPS
    counted = "every window pair" if flips is None else f"window pairs with a quarter within {flips} bits"
    return f"{MAX_CROP_CANDIDATES} per side, alignment start floor {crops._START_FLOOR}, {counted}"


def main_errors() -> None:
    """Print the measurements as a Markdown table, one column per setting."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--fashion-mnist", type=Path, help="folder of t10k-images-idx3-ubyte.gz")
    parser.add_argument("--count", type=int, default=2000)
    parser.add_argument("--synth", help="LookBench-Synth size to de-duplicate (e.g. small), or a snapshot folder")
    parser.add_argument("--setting", type=Setting.parse, action="append", help="BITS:COLOUR:CROPBITS|off (repeatable)")
    parser.add_argument("--embedding-model", help="also measure the embedding tier with this model spec (FMNIST)")
    parser.add_argument("--embedding-threshold", type=float, default=0.97)
    parser.add_argument("--crop-pairs", choices=get_args(CropPairs), default="all", help="dedup.crop_pairs")
    args = parser.parse_args()
    print(f"\ncrop-candidate rule: {rule_label()}", flush=True)
    errors_table(args)


def errors_table(args: argparse.Namespace) -> None:
    """The measurements under the library's crop-candidate rule."""
    settings = tuple(args.setting or SETTINGS)
    started = time.monotonic()
    lines = ["| | " + " | ".join(s.label for s in settings) + " |", "|---|" + "---|" * len(settings)]
    if args.fashion_mnist:
        originals = fashion_mnist(args.fashion_mnist, args.count)
        if args.embedding_model:
            print(f"embedding tier {args.embedding_model} at cosine {args.embedding_threshold}", flush=True)
            for name, rate in embedding_tier(originals, args.embedding_model, args.embedding_threshold).items():
                print(f"| embedding tier, {name} | {100 * rate:.2f}% |")
        print(f"Fashion-MNIST: {args.count} test images", flush=True)
        missed = missed_copies(originals, settings, args.crop_pairs)
        missed |= missed_between_crops(originals, settings, args.crop_pairs)
        for name, rates in missed.items():
            lines.append(f"| missed copies, {name} | " + " | ".join(f"{100 * r:.2f}%" for r in rates) + " |")
        wrong = false_matches(originals, settings, args.crop_pairs)
        lines.append(f"| false matches among {args.count} distinct images | " + " | ".join(map(str, wrong)) + " |")
    if args.synth:
        with tempfile.TemporaryDirectory() as tmp:
            if Path(args.synth).is_dir():
                snap = open_snapshot(args.synth)
            else:
                from lookbench.datasets.synth.generate import generate_snapshot

                snap = open_snapshot(generate_snapshot(Path(tmp), date(2026, 5, 1), args.synth, seed=0))
            rows = synth_images(snap)
            print(f"Synth {args.synth}: {len(rows)} images", flush=True)
            merges = false_merges(rows, settings, args.crop_pairs)
        total = len(rows)
        for title, field in (
            ("merges", "merged"),
            ("false merges (different products)", "different_products"),
            ("... of products with different labels", "different_designs"),
            ("... made by the crop tier", "false_by_crop_tier"),
        ):
            cells = " | ".join(f"{getattr(m, field)} ({100 * getattr(m, field) / total:.1f}%)" for m in merges)
            lines.append(f"| Synth, {title}, of {total} images | {cells} |")
    print("\n" + "\n".join(lines))
    print(f"\n{time.monotonic() - started:.0f} s")


if __name__ == "__main__":
    with results_file("dedup-errors"):
        main_errors()
