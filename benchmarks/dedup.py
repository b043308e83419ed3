"""The release builder's duplicate detection, measured: `errors` (missed copies, false matches, false merges), `scale`
(look-up time and memory of the dedup tables at scale), `lookup` (where a look-up's time goes on real images).

    python benchmarks/dedup.py errors|scale|lookup|cluster|release [options]     # --help after the subcommand

`errors`:
Both error kinds of the builder's duplicate detection, measured (docs/release.md, "De-duplication").

Missed copies: the first `--count` Fashion-MNIST test images (28x28, upscaled to 224x224 RGB) are indexed; each
edited copy (resize, JPEG re-encode, mirror, crops, small colour jitter) is looked up and counts as found only when
it matches its own original. False matches: each original is looked up among the originals before it. False
merges: a LookBench-Synth release (every product known) is de-duplicated the way the dedup stage does it (first
seen wins); a merge of two images of different products is false, and one of products whose labels differ too is
a merge of distinct designs. Each is measured per setting (pHash threshold, colour threshold, crop tier on/off),
and per crop-candidate rule (`--crop-rule CANDIDATES:FLOOR`: crop candidates per side and the alignment's start
floor), so a more selective rule is measured against the default in one run.

    apt-get install dataset-fashion-mnist
    python benchmarks/dedup.py errors \
        --fashion-mnist "$(dirname "$(dpkg -L dataset-fashion-mnist | grep t10k-images)")" --synth small

`cluster`:
The dedup stage end to end (hashing, the batch's store, candidate pairs, pair decisions, groups) on a published
Synth snapshot as the history and batches made from its images (edits of history images, images it does not hold,
edits of those), per batch size on 1 and 2 local processes and on 1, 2, 4 local Ray workers: wall seconds, each
job's shard seconds, and the tables' sha256 (the same for every executor). With `--growth SIZES` the candidate
search of one batch image in a history of each size (synthetic codes) is timed too, and a whole release of n
against n is projected from it and the measured CPU per pair decision at the candidate caps.

    python benchmarks/dedup.py cluster SNAPSHOT --growth 10000 30000 100000 300000 --ray-workers 1 2 4

`release`:
A batch of `--batch` images made the same way against a whole published snapshot as the history (the real-size
Synth, 69k images), on `--processes` local processes, `--repeats` times: the stage's wall time per batch image (min
and median), the wall time of a batch of the history's size projected from it (the candidates job counted twice: the
batch's own index then is as large as the history's), the crop-candidate search's growth on the snapshot's own
window codes, and a 1M-image crawl deduped as one batch projected from both.

    python benchmarks/dedup.py release SNAPSHOT --batch 10000 --processes 2

`scale`:
Dedup search at scale: per-look-up time and transient memory of each tier's table against the faiss floor.

Synthetic fingerprints of the real format (a 256-bit pHash and twelve 64-bit window hashes per entry, uniformly
random; a tenth of the queries are near copies of an indexed entry, the rest new images) fill the tables the dedup
stage uses (`lookbench.build.fingerprints.tables`): all but the last 2,000 entries in bulk, those one `add` each
(timed: the cost of an add at that size). Each repeat times the measured path
and then its floor on the same queries, alternately, so load drifts hit both:

* pHash tier: `HashedPhashes.within(both hashes, 24 bits)` (multi-index hashing over numpy arrays) against
  faiss's exhaustive `IndexBinaryFlat` range search (the floor) and faiss's multi-index hashing
  (`IndexBinaryMultiHash`, 16 tables of 16 bits, exact at 24 bits with one flip per table);
* crop candidates: `FaissWindows.nearest(12 windows, 16 bits, 16 entries)` against the bare faiss
  `IndexBinaryFlat` k-nearest search it calls; with `dedup.crop_pairs: full-frame` (the 23 pairs with a full
  frame on either side) against its two bare searches (the query's full frame among every window code, its 12
  windows among the full frames' codes), its answers checked against the blocked scan over the same pairs up to
  `--scan-up-to`;
* the exact numpy scans (the path without faiss, and the search before the tables) up to `--scan-up-to`.

Times are wall and CPU (this thread's) milliseconds per look-up; on shared cores the CPU time is the cost that
load does not inflate. Transient memory is tracemalloc's peak during one look-up (numpy and faiss's numpy
outputs) per indexed entry; resident memory is the growth of the process's RSS while the tables were filled.

With `--near-identical` every entry is a near copy of one image and every query is near it too (the worst case
for candidate lists: the pHash tier's range search returns every entry, the crop tier's k-nearest answer cannot
be proven complete and the blocked scan decides).

    python benchmarks/dedup.py scale --sizes 10000 100000 1000000
    python benchmarks/dedup.py scale --sizes 10000 100000 --near-identical --queries 20
    python benchmarks/dedup.py scale --whole --sizes 10000 --crop-pairs full-frame

`lookup`:
Where a dedup look-up's time goes at scale, per sample, on real images: hashing, candidate search, crop alignment,
image fetches.

`dedup.py scale` times the candidate searches on synthetic codes; this measures what comes after them, on the
images of a published Synth snapshot (JPEG rows in parquet row groups, as a history version is stored):

* how many indexed images a look-up finds within the crop tier's 16 of 64 bits (the share of distinct images with
  a window pair that close, from their real window hashes), hence how many candidates it aligns at 1M entries, and
  within how many bits its 16 nearest would lie at 1M (the radius an exact search of them would have to reach), and
  how many codes multi-index hashing of the window codes would have to read to reach each radius (`--codes-only`:
  these statistics alone);
* per kind of crop (of one image, or two crops of one photo), the share whose indexed image would still rank among
  the 16 candidates in an index of 10k, 100k and 1M images (its nearest window pair against how many of the other
  images come nearer; resolution: one image of the snapshot stands for 1M / its size);
* hashing a new image (`fingerprint` plus its window hashes, both sides, and its colour thumbnail);
* the history store of the snapshot as the stage writes it (`history_store`: every image's fingerprints, grey
  thumbnail and aspect): its size per file and per entry, and the time to open it (every file's sha256 checked);
* the crop tier of one look-up (`FingerprintIndex._cropped`, straight and mirrored) with its candidates' crop views
  decoded anew (`cold`: at 1M entries a candidate seldom recurs), read from that store (`stored thumbnails`: an index
  `of_store` over its rows other than the queries, no fetch, no decode; the query hashed but nothing of the look-up
  cached; with `--before-src` the other checkout's views are built from the same thumbnails) and the same look-up
  repeated (`warm`: views and resampled overlaps cached), in turn query by query; and decoding one image at a crawl's
  size (800x1000 JPEG q90) into a crop view;
* fetching one candidate's encoded image from the published snapshot (`PublishedImages`, the history's
  `image_of`) with its row group not cached (`cold`) and cached (`warm`), alternated.

With `--before-src DIR` (another checkout's `src`, e.g. `git archive COMMIT src | tar -x -C DIR`) the crop tier
is also timed with that checkout's `crops.py` (views and alignment), in turn with this one's query by query (the
order swapped every other query), so their ratio is measured under the same load; the candidates, hence the work
asked of both, are the same.

Every figure is CPU seconds of this thread (min and median); the load is recorded. The model line adds them to the
search model of `dedup.py scale --extrapolate` (CPU of the history look-up and of the batch look-up of each
sample) for a release of the real one's size (69k against 69k) and a 1M crawl against a 1M history, with
candidate views decoded everywhere, read from the history store (the batch's still decoded: what the dedup stage
does), and as if the batch's were as cheap as the store's.

    python benchmarks/dedup.py lookup ~/.cache/lookbench/synth/synth-4-small-seed0-20260601/v20260601
"""

from __future__ import annotations

import argparse
import gzip
import importlib.util
import io
import json
import math
import os
import resource
import shutil
import statistics
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from types import ModuleType
from typing import Any, get_args

import faiss
import numpy as np
import pyarrow as pa
from measure import record, run_subcommand
from PIL import Image, ImageEnhance, ImageOps

from lookbench._util.hashing import file_sha256
from lookbench._util.images import decode_image
from lookbench.build.config import CropPairs, DedupConfig
from lookbench.build.fingerprints import crops, hashes, history, tables
from lookbench.build.fingerprints import index as index_module
from lookbench.build.fingerprints.crops import GREY_BYTES, WINDOWS, CropView
from lookbench.build.fingerprints.hashes import Fingerprint, fingerprint
from lookbench.build.fingerprints.index import (
    CROP_CANDIDATE_BITS,
    MAX_CANDIDATES,
    MAX_CROP_CANDIDATES,
    Candidate,
    FingerprintIndex,
    decide,
)
from lookbench.build.fingerprints.pairs import Entries, candidate_rows
from lookbench.build.fingerprints.store import StoredCodes, open_store, write_store
from lookbench.build.fingerprints.tables import (
    FRAME,
    Codes,
    FaissWindows,
    HashedPhashes,
    HashedWindows,
    ScanPhashes,
    ScanWindows,
    as_bytes,
    nearest_pairs,
    one_thread,
)
from lookbench.build.records import Sample, write_samples
from lookbench.build.stages.base import StageContext
from lookbench.build.stages.dedup import DedupStage, DedupStats
from lookbench.shards.executor import Executor, Needs, Progress
from lookbench.shards.local import LocalExecutor
from lookbench.shards.table import Mapped, RowStream, TableItems, TableJob, map_items
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


def encoded(im: Image.Image, fmt: str = "PNG", quality: int = 90) -> bytes:
    """Encoded image bytes."""
    buf = io.BytesIO()
    im.save(buf, format=fmt, quality=quality)
    return buf.getvalue()


def cropped(
    im: Image.Image, left: float, top: float | None = None, right: float | None = None, bottom: float | None = None
) -> Image.Image:
    """The image less these shares of its width/height on each side (one share: the same on every side)."""
    top, right, bottom = (left, left, left) if top is None else (top, right or 0.0, bottom or 0.0)
    w, h = im.size
    return im.crop((round(left * w), round(top * h), w - round(right * w), h - round(bottom * h)))


def random_crop(im: Image.Image, seed: int) -> Image.Image:
    """A crop of 0-12% off each side, each side drawn on its own (seeded by the image's index)."""
    return cropped(im, *np.random.default_rng(seed).uniform(0.0, 0.12, 4).tolist())


def jittered(im: Image.Image) -> Image.Image:
    """A small colour jitter: 5% brighter, 5% less contrast, 10% more saturated."""
    im = ImageEnhance.Brightness(im).enhance(1.05)
    return ImageEnhance.Color(ImageEnhance.Contrast(im).enhance(0.95)).enhance(1.1)


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
    from lookbench.build.embedding import image_embedder, unit_rows

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


Rule = tuple[int, float, int | None]
"""(crop candidates per side, the alignment's start floor, the quarter flips a counted window pair may have)."""


@contextmanager
def crop_rule(rule: Rule) -> Iterator[None]:
    """Look-ups with another crop-candidate rule for a while: the nearest `candidates` by counted window pair per
    side (`index.MAX_CROP_CANDIDATES`), alignments given up when they start below `floor` (`crops._START_FLOOR`),
    window pairs counted when a quarter is within `flips` bits, or every pair (`tables.CROP_CANDIDATE_FLIPS`)."""
    saved = index_module.MAX_CROP_CANDIDATES, crops._START_FLOOR, tables.CROP_CANDIDATE_FLIPS
    index_module.MAX_CROP_CANDIDATES, crops._START_FLOOR, tables.CROP_CANDIDATE_FLIPS = rule
    try:
        yield
    finally:
        index_module.MAX_CROP_CANDIDATES, crops._START_FLOOR, tables.CROP_CANDIDATE_FLIPS = saved


DEFAULT_RULE: Rule = (index_module.MAX_CROP_CANDIDATES, crops._START_FLOOR, tables.CROP_CANDIDATE_FLIPS)


def parse_rule(text: str) -> Rule:
    """`CANDIDATES:FLOOR:FLIPS`, e.g. `16:0.5:1` (the defaults); FLIPS `all` counts every window pair."""
    try:
        count, floor, flips = text.split(":")
        return int(count), float(floor), None if flips == "all" else int(flips)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"{text!r}: expected CANDIDATES:FLOOR:FLIPS|all ({exc})") from exc


def rule_label(rule: Rule) -> str:
    """How a rule reads in the output."""
    counted = "every window pair" if rule[2] is None else f"window pairs with a quarter within {rule[2]} bits"
    return f"{rule[0]} per side, alignment start floor {rule[1]}, {counted}"


def main_errors() -> None:
    """Print the measurements as a Markdown table, one column per setting (one table per crop-candidate rule)."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--fashion-mnist", type=Path, help="folder of t10k-images-idx3-ubyte.gz")
    parser.add_argument("--count", type=int, default=2000)
    parser.add_argument("--synth", help="LookBench-Synth size to de-duplicate (e.g. small), or a snapshot folder")
    parser.add_argument("--setting", type=Setting.parse, action="append", help="BITS:COLOUR:CROPBITS|off (repeatable)")
    parser.add_argument("--embedding-model", help="also measure the embedding tier with this model spec (FMNIST)")
    parser.add_argument("--embedding-threshold", type=float, default=0.97)
    parser.add_argument("--crop-pairs", choices=get_args(CropPairs), default="all", help="dedup.crop_pairs")
    parser.add_argument(
        "--crop-rule",
        type=parse_rule,
        action="append",
        help="CANDIDATES:FLOOR:FLIPS, crop candidates per side, the alignment's start floor and the quarter flips "
        "of a counted window pair, `all` for every pair (repeatable; default: "
        f"{DEFAULT_RULE[0]}:{DEFAULT_RULE[1]}:{DEFAULT_RULE[2]})",
    )
    args = parser.parse_args()
    for rule in args.crop_rule or [DEFAULT_RULE]:
        print(f"\ncrop-candidate rule: {rule_label(rule)}", flush=True)
        with crop_rule(rule):
            errors_table(args)


def errors_table(args: argparse.Namespace) -> None:
    """The measurements under the crop-candidate rule in force."""
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


W = len(WINDOWS)


PHASH_RADIUS = 24


WINDOW_RADIUS = 16


CROP_LIMIT = 16


def rss_mb() -> float:
    """Resident memory of this process, MB."""
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def random_words(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """Uniform random uint64 words."""
    return rng.integers(0, 2**64, size=shape, dtype=np.uint64, endpoint=False)


def flipped(rng: np.random.Generator, words: np.ndarray, bits: int) -> np.ndarray:
    """A copy of a word row with `bits` random bits flipped."""
    out = words.copy()
    for bit in rng.choice(64 * len(words), bits, replace=False):
        out[bit // 64] ^= np.uint64(1) << np.uint64(bit % 64)
    return out


def near_identical(rng: np.random.Generator, n: int, words: int) -> np.ndarray:
    """`n` copies of one random code, each with 3 random bits flipped (a history of near-identical images)."""
    out = np.repeat(random_words(rng, (1, words)), n, axis=0)
    for _ in range(3):
        bit = rng.integers(0, 64 * words, n)
        out[np.arange(n), bit // 64] ^= np.left_shift(np.uint64(1), (bit % 64).astype(np.uint64))
    return out


def timed(run: Callable[[], object], queries: int) -> tuple[float, float]:
    """(wall, CPU) milliseconds per look-up of `run` (which does every query once), faiss on one thread like the
    tables: the CPU time of this thread is what the look-up costs whatever else shares the cores."""
    started, cpu = time.perf_counter(), time.thread_time()
    with one_thread():
        run()
    return 1000 * (time.perf_counter() - started) / queries, 1000 * (time.thread_time() - cpu) / queries


def transient_bytes(run: Callable[[], object]) -> int:
    """tracemalloc's peak allocation during `run`, beyond what was held before."""
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    run()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak - before


def summary_scale(values: list[float]) -> dict[str, float]:
    """min and median, rounded."""
    return {"min": round(min(values), 4), "median": round(statistics.median(values), 4)}


def measure_size(n: int, queries: int, repeats: int, scan: bool, seed: int, worst: bool) -> dict[str, Any]:
    """Every path at `n` indexed entries (`worst`: all near-identical, queries near them too)."""
    rng = np.random.default_rng(seed)
    if worst:
        phashes, windows = near_identical(rng, n, 4), near_identical(rng, n, W)
    else:
        phashes, windows = random_words(rng, (n, 4)), random_words(rng, (n, W))
    rss = rss_mb()
    phash_table, window_table = HashedPhashes(), FaissWindows()
    singles = min(n, 2000)
    phash_table.add(phashes[: n - singles])
    window_table.add(windows[: n - singles], np.ones(n - singles, bool))
    started = time.perf_counter()
    for i in range(n - singles, n):
        phash_table.add(phashes[i])
        window_table.add(windows[i : i + 1], np.ones(1, bool))
    add_us = 1e6 * (time.perf_counter() - started) / singles
    resident = rss_mb() - rss
    flat = faiss.IndexBinaryFlat(256)
    flat.add(as_bytes(phashes))
    multi = faiss.IndexBinaryMultiHash(256, 16, 16)
    multi.add(as_bytes(phashes))
    multi.nflip = PHASH_RADIUS // 16
    window_codes = faiss.IndexBinaryFlat(64)
    window_codes.add(as_bytes(windows.reshape(-1, 1)))
    frame_codes = faiss.IndexBinaryFlat(64)
    frame_codes.add(as_bytes(windows[:, FRAME : FRAME + 1]))

    copies = max(1, queries // 10)
    picks = rng.integers(0, n, copies)
    q_phash = [np.stack([flipped(rng, phashes[i], 10), random_words(rng, (4,))]) for i in picks]
    q_phash += [random_words(rng, (2, 4)) for _ in range(queries - copies)]
    q_windows = [flipped(rng, windows[i], 40) for i in picks] + [random_words(rng, (W,)) for _ in picks[copies:]]
    q_windows += [random_words(rng, (W,)) for _ in range(queries - len(q_windows))]
    if worst:
        q_phash = [np.stack([flipped(rng, phashes[0], 4)] * 2) for _ in range(queries)]
        q_windows = [flipped(rng, windows[0], 4) for _ in range(queries)]
    q_phash_bytes = [as_bytes(q) for q in q_phash]
    q_window_bytes = [as_bytes(q.reshape(-1, 1)) for q in q_windows]
    q_frame_bytes = [as_bytes(q[FRAME : FRAME + 1].reshape(-1, 1)) for q in q_windows]
    k = CROP_LIMIT * W
    window_table.nearest(q_windows[0], WINDOW_RADIUS, CROP_LIMIT, "full-frame")  # the full frames' copy, once

    paths: dict[str, Callable[[], object]] = {
        "phash: HashedPhashes.within": lambda: [phash_table.within(q, PHASH_RADIUS) for q in q_phash],
        "phash floor: faiss IndexBinaryFlat range_search": lambda: [
            flat.range_search(q, PHASH_RADIUS + 1) for q in q_phash_bytes
        ],
        "phash reference: faiss IndexBinaryMultiHash range_search": lambda: [
            multi.range_search(q, PHASH_RADIUS + 1) for q in q_phash_bytes
        ],
        "crop candidates: FaissWindows.nearest": lambda: [
            window_table.nearest(q, WINDOW_RADIUS, CROP_LIMIT) for q in q_windows
        ],
        "crop floor: faiss IndexBinaryFlat knn": lambda: [window_codes.search(q, k) for q in q_window_bytes],
        "crop candidates, full-frame pairs: FaissWindows.nearest": lambda: [
            window_table.nearest(q, WINDOW_RADIUS, CROP_LIMIT, "full-frame") for q in q_windows
        ],
        "crop floor, full-frame pairs: faiss IndexBinaryFlat knn x2": lambda: [
            (window_codes.search(frame, k), frame_codes.search(q, CROP_LIMIT))
            for frame, q in zip(q_frame_bytes, q_window_bytes, strict=True)
        ],
    }
    if scan:
        scan_phash, scan_windows = ScanPhashes(), ScanWindows()
        scan_phash.codes.add(phashes)
        scan_windows.codes.add(windows)
        scan_windows.present.add(np.ones((n, 1), np.uint64))
        few = max(1, queries // 10)
        paths["phash scan (numpy, no faiss)"] = lambda: [scan_phash.within(q, PHASH_RADIUS) for q in q_phash[:few]]
        paths["crop candidates scan (numpy, no faiss)"] = lambda: [
            scan_windows.nearest(q, WINDOW_RADIUS, CROP_LIMIT) for q in q_windows[:few]
        ]
        paths["crop candidates scan, full-frame pairs (numpy, no faiss)"] = lambda: [
            scan_windows.nearest(q, WINDOW_RADIUS, CROP_LIMIT, "full-frame") for q in q_windows[:few]
        ]
        for q in q_windows[:few]:
            # The faiss answer over the full-frame pairs is the scan's: exactness checked where the scan runs.
            faiss_rows, _ = window_table.nearest(q, WINDOW_RADIUS, CROP_LIMIT, "full-frame")
            if not np.array_equal(faiss_rows, scan_windows.nearest(q, WINDOW_RADIUS, CROP_LIMIT, "full-frame")[0]):
                raise AssertionError("FaissWindows.nearest over full-frame pairs differs from the scan")
    for q, raw in zip(q_phash, q_phash_bytes, strict=True):
        # The hashed answer is faiss's exhaustive one: exactness checked at every size measured.
        exhaustive = np.unique(flat.range_search(raw, PHASH_RADIUS + 1)[2])
        if not np.array_equal(phash_table.within(q, PHASH_RADIUS), exhaustive):
            raise AssertionError("HashedPhashes.within differs from faiss's exhaustive range search")
    counts = {name: (max(1, queries // 10) if "scan" in name else queries) for name in paths}
    times: dict[str, list[float]] = {name: [] for name in paths}
    cpu_times: dict[str, list[float]] = {name: [] for name in paths}
    for _ in range(repeats):
        for name, run in paths.items():
            wall, cpu = timed(run, counts[name])
            times[name].append(wall)
            cpu_times[name].append(cpu)
    memory = {}
    for name, fn in (
        ("phash: HashedPhashes.within", lambda: phash_table.within(q_phash[-1], PHASH_RADIUS)),
        ("crop candidates: FaissWindows.nearest", lambda: window_table.nearest(q_windows[-1], WINDOW_RADIUS, 16)),
        ("crop floor: faiss IndexBinaryFlat knn", lambda: window_codes.search(q_window_bytes[-1], k)),
        (
            "crop candidates, full-frame pairs: FaissWindows.nearest",
            lambda: window_table.nearest(q_windows[-1], WINDOW_RADIUS, 16, "full-frame"),
        ),
    ):
        memory[name] = round(transient_bytes(fn) / n, 3)
    result: dict[str, Any] = {
        "entries": n,
        "near_identical": worst,
        "add_us_per_entry": round(add_us, 2),
        "tables_resident_mb": round(resident, 1),
        "ms_per_lookup": {name: summary_scale(values) for name, values in times.items()},
        "cpu_ms_per_lookup": {name: summary_scale(values) for name, values in cpu_times.items()},
        "transient_bytes_per_entry": memory,
        "scan_fallbacks": window_table.scanned,
        "phash_scan_fallbacks": phash_table.scanned,
        "load_average_1min": round(os.getloadavg()[0], 2),
    }
    for kind in ("ms_per_lookup", "cpu_ms_per_lookup"):
        ms = result[kind]
        floor = ms["crop floor: faiss IndexBinaryFlat knn"]["median"]
        measured = ms["crop candidates: FaissWindows.nearest"]["median"]
        result[f"crop_over_floor_median_{kind}"] = round(measured / floor, 2)
        floor = ms["crop floor, full-frame pairs: faiss IndexBinaryFlat knn x2"]["median"]
        measured = ms["crop candidates, full-frame pairs: FaissWindows.nearest"]["median"]
        result[f"full_frame_crop_over_floor_median_{kind}"] = round(measured / floor, 2)
        result[f"full_frame_crop_over_all_pairs_median_{kind}"] = round(
            measured / ms["crop candidates: FaissWindows.nearest"]["median"], 3
        )
        floor = ms["phash floor: faiss IndexBinaryFlat range_search"]["median"]
        result[f"phash_over_floor_median_{kind}"] = round(ms["phash: HashedPhashes.within"]["median"] / floor, 2)
    print(json.dumps(result), flush=True)
    return result


def memory_kb() -> dict[str, float]:
    """This process's anonymous (heap) and file-backed (mapped files) resident memory, KB."""
    fields = {}
    with open("/proc/self/status") as fh:
        for line in fh:
            name, _, value = line.partition(":")
            if name in ("RssAnon", "RssFile"):
                fields[name] = float(value.split()[0])
    return fields


def synthetic_parts(rng: np.random.Generator, n: int, chunk: int = 100_000) -> Iterator[StoredCodes]:
    """`n` entries of synthetic fingerprints keyed like published rows, a chunk at a time."""
    for start in range(0, n, chunk):
        size = min(chunk, n - start)
        yield StoredCodes(
            pa.array([f"v20260101/real_studio_flat/gallery#{start + i}" for i in range(size)]),
            random_words(rng, (size, 4)),
            random_words(rng, (size, 4)),
            random_words(rng, (size, W)),
            np.ones((size, 1), np.uint64),
            np.broadcast_to(np.zeros(GREY_BYTES, np.uint8), (size, GREY_BYTES)),
            np.ones((size, 1)),
        )


def measure_history(n: int, seed: int, folder: Path) -> dict[str, Any]:
    """Resident memory per entry of a history of `n` entries: opened from its memory-mapped store (after one
    look-up of each tier) against the same entries added to an in-memory index (keys and sha256 digests as Python
    strings, codes copied), as the history was held before the store."""
    rng = np.random.default_rng(seed)
    write_store(folder, synthetic_parts(rng, n), n, W)
    phash_words, windows = random_words(rng, (2, 4)), random_words(rng, (W,))
    result: dict[str, Any] = {"entries": n}
    before = memory_kb()
    started = time.perf_counter()
    index = FingerprintIndex.of_store(lambda key: b"", open_store(folder))
    result["open_s"] = round(time.perf_counter() - started, 2)
    index._phashes.within(phash_words, PHASH_RADIUS)
    index._windows.nearest(windows, WINDOW_RADIUS, CROP_LIMIT)
    found = index.keys.row_of(_hex(open_store(folder).sha[n // 2]))
    after = memory_kb()
    assert found == n // 2
    result["mapped_anon_bytes_per_entry"] = round(1024 * (after["RssAnon"] - before["RssAnon"]) / n, 1)
    result["mapped_file_bytes_per_entry"] = round(1024 * (after["RssFile"] - before["RssFile"]) / n, 1)
    del index
    before = memory_kb()
    memory = FingerprintIndex(lambda key: b"")
    stored = open_store(folder)
    for start in range(0, n, 100_000):
        end = min(n, start + 100_000)
        memory.add_many(
            stored.keys[start:end].to_pylist(),
            [_hex(row) for row in stored.sha[start:end]],
            np.array(stored.phash[start:end]),
            np.array(stored.windows[start:end]),
            np.ones(end - start, bool),
        )
    memory._phashes.within(phash_words, PHASH_RADIUS)
    memory._windows.nearest(windows, WINDOW_RADIUS, CROP_LIMIT)
    after = memory_kb()
    result["in_memory_anon_bytes_per_entry"] = round(1024 * (after["RssAnon"] - before["RssAnon"]) / n, 1)
    result["load_average_1min"] = round(os.getloadavg()[0], 2)
    print(json.dumps({"history_memory": result}), flush=True)
    return result


def measure_whole(n: int, seed: int, folder: Path, pairs: CropPairs) -> dict[str, Any]:
    """The search part of a whole release, measured: a batch of `n` new entries against a history of `n` (opened
    from its mapped store), in the dedup stage's order: each sample is looked up in the history (pHash tier, crop
    candidates straight and mirrored), then in the batch kept so far, then added to the batch. Synthetic codes, no
    image decoding, alignment or colour check (those run only on candidates)."""
    rng = np.random.default_rng(seed)
    write_store(folder, synthetic_parts(rng, n), n, W)
    history = FingerprintIndex.of_store(lambda key: b"", open_store(folder), pairs)
    batch_phash, batch_windows = HashedPhashes(), FaissWindows()
    phashes, windows = random_words(rng, (n, 2, 4)), random_words(rng, (n, 2, W))
    started, cpu = time.perf_counter(), time.thread_time()
    for i in range(n):
        for phash_table, window_table in ((history._phashes, history._windows), (batch_phash, batch_windows)):
            phash_table.within(phashes[i], PHASH_RADIUS)
            for side in windows[i]:
                window_table.nearest(side, WINDOW_RADIUS, CROP_LIMIT, pairs)
        batch_phash.add(phashes[i, 0])
        batch_windows.add(windows[i, :1], np.ones(1, bool))
    result = {
        "history": n,
        "batch": n,
        "crop_pairs": pairs,
        "wall_s": round(time.perf_counter() - started, 1),
        "cpu_s": round(time.thread_time() - cpu, 1),
        "load_average_1min": round(os.getloadavg()[0], 2),
    }
    print(json.dumps({"whole_release": result}), flush=True)
    return result


HISTORY_SCHEMA = pa.schema([("candidates", pa.int64())])


@dataclass(frozen=True)
class SyntheticHistory:
    """The `history` shard job's searches on synthetic codes: per query, the pHash tier and the crop candidates
    (straight and mirrored) in the mapped history store; each worker maps the store once (as `HistoryLookups`)."""

    folder: str
    pairs: CropPairs

    def open(self, slots: int) -> SyntheticHistoryRows:
        """Map the store."""
        return SyntheticHistoryRows(self, FingerprintIndex.of_store(lambda key: b"", open_store(Path(self.folder))))


@dataclass
class SyntheticHistoryRows:
    """An opened synthetic history job."""

    job: SyntheticHistory
    index: FingerprintIndex

    def __call__(self, items: list[tuple[np.ndarray, np.ndarray]], progress: Progress, /) -> Mapped:
        """One row per query: how many pHash candidates it had."""
        rows = []
        for phash, windows in items:
            found = self.index._phashes.within(phash, PHASH_RADIUS)
            for side in windows:
                self.index._windows.nearest(side, WINDOW_RADIUS, CROP_LIMIT, self.job.pairs)
            rows.append({"candidates": len(found)})
        progress(len(items))
        return Mapped(rows)

    def close(self) -> None:
        """Nothing to release."""


def batch_pass(rows: Iterator[dict[str, Any]], phashes: np.ndarray, windows: np.ndarray, pairs: CropPairs):
    """The in-order pass of the dedup stage on synthetic codes: each sample once its history row is in, looked up
    in the batch so far, then added; (this thread's CPU s, wall s spent waiting for history rows)."""
    batch_phash, batch_windows = HashedPhashes(), FaissWindows()
    cpu, waited = time.thread_time(), 0.0
    for i in range(len(phashes)):
        started = time.perf_counter()
        next(rows)
        waited += time.perf_counter() - started
        batch_phash.within(phashes[i], PHASH_RADIUS)
        for side in windows[i]:
            batch_windows.nearest(side, WINDOW_RADIUS, CROP_LIMIT, pairs)
        batch_phash.add(phashes[i, 0])
        batch_windows.add(windows[i, :1], np.ones(1, bool))
    if next(rows, None) is not None:
        raise AssertionError("more history rows than samples")
    return time.thread_time() - cpu, waited


def process_cpu_s() -> float:
    """CPU seconds of this process (every thread) and of its reaped children (the worker processes)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def measure_schedules(n: int, seed: int, folder: Path, pairs: CropPairs, processes: int, repeats: int):
    """A whole release's search (n new against an n history, as `measure_whole`) through the shard machinery on
    `processes` worker processes, in two schedules alternated: `sequential` (every history shard, then the batch
    pass: the stage before) and `pipelined` (the batch pass reads each shard's rows as it finishes: `RowStream`,
    the stage now). Wall and CPU (this process and its workers), the batch pass's CPU and its waits."""
    rng = np.random.default_rng(seed)
    write_store(folder / "store", synthetic_parts(rng, n), n, W)
    phashes, windows = random_words(rng, (n, 2, 4)), random_words(rng, (n, 2, W))
    items = list(zip(phashes, windows, strict=True))
    job = TableJob("history", Needs("cpu"), HISTORY_SCHEMA, SyntheticHistory(str(folder / "store"), pairs))
    runs: dict[str, list[dict[str, float]]] = {"sequential": [], "pipelined": []}
    for repeat in range(repeats):
        for schedule in runs:
            work = TableItems(job, folder / f"{schedule}-{repeat}", items, [str(i) for i in range(n)], "v1", None, 1024)
            load, started, cpu = os.getloadavg()[0], time.perf_counter(), process_cpu_s()
            if schedule == "sequential":
                rows = map_items(LocalExecutor(processes), work).rows
                batch_cpu, waited = batch_pass(iter(rows), phashes, windows, pairs)
            else:
                with RowStream(LocalExecutor(processes), work) as stream:
                    batch_cpu, waited = batch_pass(iter(stream), phashes, windows, pairs)
            run = {
                "wall_s": round(time.perf_counter() - started, 1),
                "cpu_s": round(process_cpu_s() - cpu, 1),
                "batch_pass_cpu_s": round(batch_cpu, 1),
                "batch_pass_waited_s": round(waited, 1),
                "load_average_1min": round(load, 2),
                "load_average_1min_end": round(os.getloadavg()[0], 2),
            }
            runs[schedule].append(run)
            print(json.dumps({"schedule": schedule, "entries": n, "crop_pairs": pairs, **run}), flush=True)
    result = {
        name: {key: summary_scale([run[key] for run in values]) for key in ("wall_s", "cpu_s", "batch_pass_cpu_s")}
        for name, values in runs.items()
    }
    ratio = [p["wall_s"] / s["wall_s"] for s, p in zip(runs["sequential"], runs["pipelined"], strict=True)]
    print(json.dumps({"schedules": result, "pipelined_over_sequential_wall": summary_scale(ratio)}), flush=True)
    return result


MEASURED_CPU_MS = {
    "all": {"phash": (0.61, 0.61, 0.63), "crop": (5.03, 32.1, 263.0)},
    "full-frame": {"phash": (0.61, 0.61, 0.63), "crop": (1.28, 6.26, 50.3)},
}


"""Median CPU ms per look-up at 10k, 100k and 1M entries, as `dedup.py scale` measured them on 2 shared cores at
load ~9: the pHash tier and one crop-candidate search (the inputs of `--extrapolate`)."""


MEASURED_AT = (10_000, 100_000, 1_000_000)


def lookup_ms(pairs: CropPairs, entries: np.ndarray) -> np.ndarray:
    """CPU ms of one look-up (a pHash search and two crop-candidate searches) at these index sizes, interpolated
    log-log between the measured sizes (extended along the nearest segment outside them)."""
    logs = np.log(MEASURED_AT)
    size = np.log(np.maximum(entries, 1))
    total = np.zeros(len(size))
    for part, times in MEASURED_CPU_MS[pairs].items():
        slopes = np.diff(np.log(times)) / np.diff(logs)
        segment = np.clip(np.searchsorted(logs, size) - 1, 0, len(slopes) - 1)
        ms = np.exp(np.log(np.array(times))[segment] + slopes[segment] * (size - logs[segment]))
        total += ms * (2 if part == "crop" else 1)
    return total


def schedule_hours(new: int, history: int, pairs: CropPairs, workers: int, pipelined: bool, cores: int = 2):
    """Hours of a whole dedup's search on `cores` cores: the history look-ups as shards of 1,024 on `workers`
    worker processes (taken in order), the batch pass in the driver (sample i against the i kept before it, none
    dropped), every runnable process an equal share of the cores (at most one each). `pipelined`: the batch pass
    takes each shard's samples once that shard is finished; else once every shard is."""
    shard = 1024
    starts = list(range(0, new, shard))
    per_lookup = float(lookup_ms(pairs, np.array([history]))[0]) if history else 0.0  # no history: no shard job
    history_s = [min(shard, new - start) * per_lookup / 1000 for start in starts]
    batch_ms = lookup_ms(pairs, np.arange(new))
    batch_s = [float(batch_ms[start : start + shard].sum()) / 1000 for start in starts]
    done = [False] * len(starts)
    running: dict[int, float] = {}  # worker -> remaining CPU s of its shard
    taken: dict[int, int] = {}  # worker -> its shard
    next_shard, block, left, clock = 0, 0, batch_s[0], 0.0
    for worker in range(workers):
        if next_shard < len(starts):
            running[worker], taken[worker], next_shard = history_s[next_shard], next_shard, next_shard + 1
    while block < len(starts):
        ready = done[block] if pipelined else all(done)
        share = min(1.0, cores / (len(running) + ready))
        step = min([left] * ready + list(running.values())) / share
        clock += step
        if ready:
            left -= step * share
            if left <= 1e-12:
                block += 1
                left = batch_s[block] if block < len(starts) else 0.0
        for worker in list(running):
            running[worker] -= step * share
            if running[worker] <= 1e-12:
                done[taken[worker]] = True
                del running[worker]
                if next_shard < len(starts):
                    running[worker], taken[worker], next_shard = history_s[next_shard], next_shard, next_shard + 1
    return clock / 3600


def extrapolate() -> None:
    """The modelled hours of each schedule at the real release's size and at a 1M crawl, per crop-pair setting."""
    for pairs in ("full-frame", "all"):
        for new, old in ((69_000, 69_000), (1_000_000, 0), (1_000_000, 1_000_000)):
            hours = {
                "one core": schedule_hours(new, old, pairs, 1, False, cores=1),
                "history on 2 workers, then the batch pass": schedule_hours(new, old, pairs, 2, False),
                "pipelined, history on 2 workers": schedule_hours(new, old, pairs, 2, True),
                "pipelined, history on 1 worker": schedule_hours(new, old, pairs, 1, True),
                "floor: all CPU over 2 cores": schedule_hours(new, old, pairs, 1, False, cores=1) / 2,
            }
            rounded = {name: round(h, 2) for name, h in hours.items()}
            print(json.dumps({"crop_pairs": pairs, "new": new, "history": old, "hours": rounded}), flush=True)


def _hex(words: np.ndarray) -> str:
    return np.asarray(words, dtype=np.uint64).astype(">u8").tobytes().hex()


def main_scale() -> None:
    """Measure each size and print one JSON line per size, then the growth exponents."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--scan-up-to", type=int, default=100_000, help="largest size the numpy scans run at")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--near-identical", action="store_true", help="the worst case: one image, n near copies")
    parser.add_argument("--history-memory", action="store_true", help="only resident memory of a mapped history")
    parser.add_argument("--whole", action="store_true", help="only a whole release's search: n new against n")
    parser.add_argument("--crop-pairs", choices=get_args(CropPairs), default="all", help="--whole's crop pairs")
    parser.add_argument("--extrapolate", action="store_true", help="only the modelled hours of each schedule")
    parser.add_argument(
        "--processes",
        type=int,
        help="--whole through the history shard job on this many worker processes, sequential and pipelined",
    )
    args = parser.parse_args()
    if args.extrapolate:
        extrapolate()
        return
    print(json.dumps({"load_average": [round(x, 2) for x in os.getloadavg()], "cpus": os.cpu_count()}))
    if args.history_memory or args.whole:
        for n in args.sizes:
            with tempfile.TemporaryDirectory() as tmp:
                if args.history_memory:
                    measure_history(n, args.seed, Path(tmp) / "store")
                elif args.processes:
                    measure_schedules(n, args.seed, Path(tmp), args.crop_pairs, args.processes, args.repeats)
                else:
                    measure_whole(n, args.seed, Path(tmp) / "store", args.crop_pairs)
        print(json.dumps({"load_average_end": [round(x, 2) for x in os.getloadavg()]}))
        return
    results = [
        measure_size(n, args.queries, args.repeats, n <= args.scan_up_to, args.seed, args.near_identical)
        for n in args.sizes
    ]
    if len(results) > 1:
        first, last = results[0], results[-1]
        growth = {
            name: round(
                float(
                    np.log(last["cpu_ms_per_lookup"][name]["median"] / first["cpu_ms_per_lookup"][name]["median"])
                    / np.log(last["entries"] / first["entries"])
                ),
                2,
            )
            for name in first["cpu_ms_per_lookup"]
            if name in last["cpu_ms_per_lookup"]
        }
        print(json.dumps({"growth_exponent_of_median_cpu": growth}))
    print(json.dumps({"load_average_end": [round(x, 2) for x in os.getloadavg()]}))


VERSION = "v20260601"


REAL_RELEASE = 69_000


"""The real release's size, as in `dedup.py scale --extrapolate`: its dedup against a history of its size."""


def summary_lookup(values: list[float]) -> dict[str, float]:
    """min and median, ms."""
    return {"min": round(1e3 * min(values), 2), "median": round(1e3 * statistics.median(values), 2)}


def cpu(run: Callable[[], object]) -> float:
    """CPU seconds of this thread for one call."""
    started = time.thread_time()
    run()
    return time.thread_time() - started


def published(folder: Path) -> list[tuple[str, bytes]]:
    """(published key, encoded image) of every image of a snapshot, keyed as a history version's rows."""
    snap = open_snapshot(folder)
    rows = []
    parts = [(s, sp) for s in snap.subsets for sp in SPLITS] + ([(NOISE, "gallery")] if snap.has_noise else [])
    for subset, split in parts:
        for start, images in snap.iter_images(subset, split):
            rows += [(f"{VERSION}/{subset}/{split}#{start + i}", data) for i, data in enumerate(images) if data]
    return rows


def model(hashing_s: float, views: dict[str, tuple[float, float, float]], crawl: int = 1_000_000) -> None:
    """A crawl against a history of its size: the search CPU of `dedup.py scale`'s model (one core, the history's
    look-ups and the batch pass's) plus, per sample, its hashing, the crop tier's alignment in the history and in
    the batch and the history candidates' image fetches, with the candidates' views as in `views` (name: (alignment
    s per look-up in the history, in the batch, fetches s per look-up)). The batch pass runs in order, so its search
    and alignment bound the wall time from below however many cores; all CPU over 2 cores is another bound."""
    for pairs in ("full-frame", "all"):
        search_h = schedule_hours(crawl, crawl, pairs, 1, False, cores=1)
        batch_search_h = schedule_hours(crawl, 0, pairs, 1, False, cores=1)
        for name, (history_crop_s, batch_crop_s, fetch_s) in views.items():
            parts = {
                "search (dedup_scale model)": search_h,
                "hashing": crawl * hashing_s / 3600,
                "crop alignment (history + batch)": crawl * (history_crop_s + batch_crop_s) / 3600,
                "history candidates' image fetches": crawl * fetch_s / 3600,
            }
            total_h, batch_h = sum(parts.values()), batch_search_h + crawl * batch_crop_s / 3600
            print(
                json.dumps(
                    {
                        "model": f"{crawl} against {crawl}",
                        "crop_pairs": pairs,
                        "candidate_views": name,
                        "cpu_hours": {part: round(h, 1) for part, h in parts.items()},
                        "all_cpu_over_2_cores_days": round(total_h / 48, 2),
                        "batch_pass_in_order_days": round(batch_h / 24, 2),
                        "lower_bound_days": round(max(total_h / 2, batch_h) / 24, 2),
                    }
                ),
                flush=True,
            )


CROPS: dict[str, tuple[Callable[[Image.Image], Image.Image], Callable[[Image.Image], Image.Image]]] = {
    "crop 10% off the left": (lambda im: im, lambda im: cropped(im, 0.10, 0, 0, 0)),
    "crop 5% per side": (lambda im: im, lambda im: cropped(im, 0.05)),
    "two crops: 10% off the left / the right": (
        lambda im: cropped(im, 0.10, 0, 0, 0),
        lambda im: cropped(im, 0, 0, 0.10, 0),
    ),
    "two crops: 8% off the top-left / the bottom-right": (
        lambda im: cropped(im, 0.08, 0.08, 0, 0),
        lambda im: cropped(im, 0, 0, 0.08, 0.08),
    ),
}


"""(indexed image, looked-up image) of each kind of crop, from one photo."""


SIZES = (10_000, 100_000, 1_000_000)


def recall_at_scale(originals: list[bytes], others: np.ndarray) -> None:
    """Per kind of crop and crop-pair setting, the share of crops whose indexed image would still be among the
    `MAX_CROP_CANDIDATES` a look-up aligns in an index of each size: its nearest window pair within 16 bits and
    fewer than that many other images expected nearer (`others`' share nearer, half the ties, times the size)."""
    for name, (indexed_of, query_of) in CROPS.items():
        pairs_found: dict[str, dict[int, float]] = {}
        for pairs in ("all", "full-frame"):
            found = {n: [] for n in SIZES}
            for data in originals:
                image = decode_image(data)
                indexed, query = (fingerprint(encoded(edit(image))).windows for edit in (indexed_of, query_of))
                if indexed is None or query is None:
                    continue
                own = int(nearest_pairs(query, indexed[None], pairs, tables.CROP_CANDIDATE_FLIPS)[0])
                rest = nearest_pairs(query, others, pairs, tables.CROP_CANDIDATE_FLIPS)
                ahead = float((rest < own).mean() + 0.5 * (rest == own).mean())
                for n in SIZES:
                    found[n].append(own <= CROP_CANDIDATE_BITS and ahead * n < MAX_CROP_CANDIDATES)
            pairs_found[pairs] = {n: round(float(np.mean(v)), 3) for n, v in found.items()}
        print(json.dumps({"crop": name, "share_among_candidates_at_size": pairs_found}), flush=True)


def probe_volume(codes: np.ndarray, picks: np.ndarray) -> None:
    """What multi-index hashing of the window codes (4 substrings of 16 bits each) would read at 1M entries: per
    look-up (12 query windows), the other images' codes that share a substring within f flips with a query window,
    summed over windows and substrings, times 1M / images. Probing f flips finds every code within 4f + 3 bits."""
    parts = np.ascontiguousarray(codes).view(np.uint16).reshape(len(codes), -1)  # (entries, 12 windows x 4)
    bits = np.unpackbits(np.arange(1 << 16, dtype=np.uint16).view(np.uint8).reshape(-1, 2), axis=1).sum(
        axis=1, dtype=np.uint8
    )
    volume: dict[int, list[float]] = {f: [] for f in range(4)}
    for i in picks:
        mine = parts[i].reshape(-1, 4)
        theirs = np.delete(parts, i, axis=0).reshape(-1, 4)
        differ = np.stack([bits[theirs ^ window] for window in mine])  # (query window, code, substring)
        for f in volume:
            volume[f].append(float((differ <= f).sum()) * 1e6 / (len(codes) - 1))
    print(
        json.dumps(
            {
                "codes_probed_per_lookup_at_1M": {
                    f"{f} flips (reach {4 * f + 3} bits)": {
                        "median": int(statistics.median(v)),
                        "90th percentile": int(np.percentile(v, 90)),
                    }
                    for f, v in volume.items()
                },
                "uniform_codes_for_comparison": {
                    f: int(48 * 12e6 / 65536 * sum(math.comb(16, i) for i in range(f + 1))) for f in range(4)
                },
            }
        ),
        flush=True,
    )


def crop_tier_of(src: Path) -> ModuleType:
    """The crop tier (`crops.py`) of another checkout's `src` folder, loaded beside this one's."""
    spec = importlib.util.spec_from_file_location("before_crops", src / "lookbench/release/fingerprints/crops.py")
    if spec is None or spec.loader is None:
        raise SystemExit(f"{src}: no lookbench/release/fingerprints/crops.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the module runs
    spec.loader.exec_module(module)
    return module


@contextmanager
def crop_tier(module: ModuleType) -> Iterator[None]:
    """Queries hashed and candidates aligned with `module`'s crop views and alignment for a while."""
    names = ("align", "Placement", "CropView")
    saved = [getattr(index_module, name) for name in names]
    for name in names:
        setattr(index_module, name, getattr(module, name))
    hashes.CropView = module.CropView  # type: ignore[misc]
    try:
        yield
    finally:
        for name, value in zip(names, saved, strict=True):
            setattr(index_module, name, value)
        hashes.CropView = crops.CropView  # type: ignore[misc]


def history_of(snapshot: Path, cache: Path) -> StoredCodes:
    """The snapshot's history store as the dedup stage writes it (in `cache`), its size and open time printed."""
    (cache / "out").mkdir()
    (cache / "out" / VERSION).symlink_to(snapshot.resolve())
    started = time.perf_counter()
    folder, _ = history.history_store(cache / "out", "v99999999", cache)
    written_s = time.perf_counter() - started
    assert folder is not None
    opened = []
    for _ in range(5):
        started = time.perf_counter()
        stored = open_store(folder)
        opened.append(time.perf_counter() - started)
    sizes = {file.name: file.stat().st_size for file in sorted(folder.iterdir())}
    print(
        json.dumps(
            {
                "history_store": {
                    "entries": len(stored),
                    "bytes": sizes,
                    "bytes_per_entry": round(sum(sizes.values()) / len(stored), 1),
                    "written_s_with_hashing": round(written_s, 1),
                    "open_ms_wall": summary_lookup(opened),
                }
            }
        ),
        flush=True,
    )
    return stored


def rows_from(stored: StoredCodes, start: int) -> StoredCodes:
    """A store's rows from `start` on (views of its mapped arrays)."""
    return StoredCodes(
        *(
            stored.keys[start:],
            stored.sha[start:],
            stored.phash[start:],
            stored.windows[start:],
            stored.present[start:],
            stored.grey[start:],
            stored.aspect[start:],
        )
    )


def fresh(data: bytes) -> Fingerprint:
    """A query as the stage has it: hashed (its crop views computed), nothing of a look-up cached yet."""
    found = fingerprint(data)
    _ = (found.view.windows, found.mirror_view.windows)
    return found


def main_lookup() -> None:
    """Measure each part and print one JSON line each, then the model."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("snapshot", type=Path, help="a published Synth version folder (vYYYYMMDD)")
    parser.add_argument("--queries", type=int, default=30)
    parser.add_argument("--codes-only", action="store_true", help="only the statistics of the window codes")
    parser.add_argument("--before-src", type=Path, help="also time the crop tier with this src folder's crops.py")
    args = parser.parse_args()
    print(json.dumps({"load_average": [round(x, 2) for x in os.getloadavg()]}), flush=True)
    rows = published(args.snapshot)
    prints: list[Fingerprint] = []
    hashing = []
    for _, data in rows:
        found = fingerprint(data)
        hashing.append(cpu(lambda found=found: (found.windows, found.mirror_view.windows, found.lab)))
        prints.append(found)
    # The decode and pHashes of `fingerprint` itself, timed apart on a sample (the rest were needed untimed).
    hashing_decode = [cpu(lambda data=data: fingerprint(data)) for _, data in rows[:: max(1, len(rows) // 200)]]
    print(
        json.dumps(
            {
                "images": len(rows),
                "hashing_ms": {
                    "windows and colours": summary_lookup(hashing),
                    "decode and pHashes": summary_lookup(hashing_decode),
                },
            }
        ),
        flush=True,
    )

    codes = np.stack([p.windows for p in prints if p.windows is not None])
    picks = np.random.default_rng(0).choice(len(codes), size=min(200, len(codes)), replace=False)
    for pairs in ("all", "full-frame"):
        nearest = np.stack(
            [nearest_pairs(codes[i], np.delete(codes, i, axis=0), pairs, tables.CROP_CANDIDATE_FLIPS) for i in picks]
        )
        shares = (nearest <= CROP_CANDIDATE_BITS).mean(axis=1).tolist()
        # Per look-up, the share of images within t bits for every t: the radius holding its 16 nearest at 1M.
        within = np.stack([(nearest <= t).mean(axis=1) for t in range(65)], axis=1)
        radius_at_1m = (within * 1e6 >= MAX_CROP_CANDIDATES).argmax(axis=1)
        print(
            json.dumps(
                {
                    "crop_pairs": pairs,
                    "share_of_other_images_within_16_bits": {
                        "min": round(min(shares), 4),
                        "median": round(statistics.median(shares), 4),
                    },
                    "expected_within_16_bits_at_1M": int(statistics.median(shares) * 1e6),
                    "expected_within_t_bits_at_1M_mean": {t: int(within[:, t].mean() * 1e6) for t in (2, 4, 8, 12)},
                    "bits_holding_16_nearest_at_1M": {
                        "median": float(np.median(radius_at_1m)),
                        "90th percentile": float(np.percentile(radius_at_1m, 90)),
                        "max": int(radius_at_1m.max()),
                    },
                }
            ),
            flush=True,
        )

    probe_volume(codes, picks)
    if args.codes_only:
        return
    others = np.stack([p.windows for p in prints[args.queries :] if p.windows is not None])
    recall_at_scale([data for _, data in rows[: args.queries]], others)

    queries = list(range(args.queries))
    by_key = dict(rows)
    index = FingerprintIndex(by_key.__getitem__)
    for (key, _), found in zip(rows[args.queries :], prints[args.queries :], strict=True):
        index.add(key, found.sha256, found.phash, found.windows)
    cache = tempfile.TemporaryDirectory()
    stored = history_of(args.snapshot, Path(cache.name))
    assert stored.keys.to_pylist() == [key for key, _ in rows]
    from_store = FingerprintIndex.of_store(by_key.__getitem__, rows_from(stored, args.queries))
    row_of = {key: row for row, (key, _) in enumerate(rows)}

    def stored_views(query: Fingerprint, keys: list[str], module: ModuleType) -> object:
        if module is crops:  # the real path: views read from the store's rows
            from_store._views.clear()
            return list(from_store._cropped(query, 16))
        # another checkout's views, built from the same stored thumbnails
        index._views.clear()
        for key in keys:
            index._views[key] = module.CropView(
                Image.frombytes("L", (128, 128), bytes(stored.grey[row_of[key]])), float(stored.aspect[row_of[key], 0])
            )
        return list(index._cropped(query, 16))

    tiers = {"": crops} | ({" (before)": crop_tier_of(args.before_src)} if args.before_src else {})
    aligned: dict[str, list[float]] = {}
    candidates = []
    for q in queries:
        data = rows[q][1]
        for suffix, module in list(tiers.items())[:: 1 if q % 2 == 0 else -1]:
            with crop_tier(module):
                query = fresh(data)
                index._views.clear()
                aligned.setdefault(f"cold{suffix}", []).append(cpu(lambda query=query: list(index._cropped(query, 16))))
                keys = list(index._views)
                query = fresh(data)
                aligned.setdefault(f"stored thumbnails{suffix}", []).append(
                    cpu(lambda query=query, keys=keys, module=module: stored_views(query, keys, module))
                )
                aligned.setdefault(f"warm{suffix}", []).append(cpu(lambda query=query: list(index._cropped(query, 16))))
        candidates.append(len(keys))
    index._views.clear()
    large = []
    for _, data in rows[: 3 * args.queries]:
        image = decode_image(data)
        buffer = io.BytesIO()
        image.resize((800, 1000), Image.Resampling.BICUBIC).save(buffer, "JPEG", quality=90)
        encoded = buffer.getvalue()
        large.append(cpu(lambda encoded=encoded: CropView.of(decode_image(encoded)).levels))
    print(
        json.dumps(
            {
                "crop_tier_ms_per_lookup": {name: summary_lookup(values) for name, values in aligned.items()},
                "candidates_aligned_per_lookup": statistics.median(candidates),
                "decode_and_view_ms_of_an_800x1000_jpeg": summary_lookup(large),
            }
        ),
        flush=True,
    )

    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / VERSION).symlink_to(args.snapshot.resolve())
        images = history.PublishedImages(Path(tmp))
        fetched = {"cold": [], "warm": []}
        for i in np.random.default_rng(1).choice(len(rows), size=min(60, len(rows)), replace=False):
            history._row_group_images.cache_clear()
            fetched["cold"].append(cpu(lambda key=rows[i][0]: images(key)))
            fetched["warm"].append(cpu(lambda key=rows[i][0]: images(key)))
        mean_bytes = statistics.mean(len(data) for _, data in rows)
    print(
        json.dumps(
            {
                "fetch_ms_per_image": {n: summary_lookup(v) for n, v in fetched.items()},
                "mean_image_bytes": round(mean_bytes),
            }
        ),
        flush=True,
    )

    fetches = statistics.median(candidates) * statistics.median(fetched["cold"])
    for crawl in (REAL_RELEASE, 1_000_000):
        model(
            statistics.median(hashing) + statistics.median(hashing_decode),
            {
                f"{name}{suffix}": (
                    statistics.median(aligned[f"{history}{suffix}"]),
                    statistics.median(aligned[f"{batch}{suffix}"]),
                    cost,
                )
                for suffix in tiers
                for name, history, batch, cost in (
                    ("decoded", "cold", "cold", fetches),
                    ("stored thumbnails in the history", "stored thumbnails", "cold", 0.0),
                    ("stored thumbnails, batch too", "stored thumbnails", "stored thumbnails", 0.0),
                )
            },
            crawl,
        )
    cache.cleanup()
    print(json.dumps({"load_average_end": [round(x, 2) for x in os.getloadavg()]}), flush=True)


def cluster_batch(images: list[bytes], n: int, seed: int) -> list[Sample]:
    """`n` batch samples made from a published snapshot's images: a third edits of history images (near copies,
    crops, mirrored crops), a third images the history does not hold (a history image turned a quarter), and a
    third edits of those new ones; seen at random times."""
    rng = np.random.default_rng(seed)
    fresh: list[int] = []  # the new images' sources, not their pixels: a release-sized batch holds 23k of them

    def turned(source: int) -> Image.Image:
        return decode_image(images[source]).transpose(Image.Transpose.ROTATE_90)

    samples = []
    for row in range(n):
        roll = rng.random()
        drawn = int(rng.integers(0, len(images)))
        if roll < 1 / 3 or not fresh:
            im = turned(drawn)
            fresh.append(drawn)
        else:
            im = decode_image(images[drawn]) if roll < 2 / 3 else turned(fresh[int(rng.integers(0, len(fresh)))])
            im = [jittered, lambda x: cropped(x, 0.06), lambda x: ImageOps.mirror(cropped(x, 0.05))][row % 3](im)
        seen = datetime(2026, 5, 1, tzinfo=UTC) + timedelta(minutes=int(rng.integers(0, 100_000)))
        data = encoded(im, "JPEG", 90)
        samples.append(Sample("shop", "feed", f"p{row}", data, seen, "dress", "red", ["real_studio_flat"], "cc0"))
    return samples


def marker_seconds(folder: Path) -> float:
    """Seconds the shards of one job folder worked, summed over their markers."""
    return round(sum(json.loads(path.read_text())["seconds"] for path in folder.glob("*.done.json")), 2)


def timed_stage(
    root: Path,
    out: Path,
    samples: list[Sample],
    executor: Executor,
    shards: int,
    pairs: CropPairs,
    state: Path | None = None,
):
    """One run of the dedup stage from scratch but for the history's store (built once, before, under `state`,
    default next to `out`: every release after the first finds it cached): wall seconds, shard seconds per job, and
    its counters."""
    state = state or out.parent / "state"
    ctx = StageContext("v20260601", date(2026, 6, 1), out, root / "work", state, executor=executor, shards=shards)
    ctx.say = lambda _line: None
    previous = write_samples(samples, root / "collected.parquet")
    started = time.perf_counter()
    result = DedupStage(DedupConfig(crop_pairs=pairs)).run(ctx, previous)
    wall = time.perf_counter() - started
    jobs = {
        job: marker_seconds(root / "work" / "dedup" / "shards" / job) for job in ("hash", "candidates", "decisions")
    }
    stats = result.stats
    assert isinstance(stats, DedupStats)
    tables = {name: file_sha256(ctx.work / "dedup" / name) for name in ("samples.parquet", "dropped.parquet")}
    return {
        "wall_s": round(wall, 2),
        "shard_seconds": jobs,
        "candidate_pairs": stats.candidate_pairs,
        "accepted_pairs": stats.accepted_pairs,
        "kept": stats.kept,
        "transitive_chains": stats.transitive_chains,
        "tables_sha256": tables,
    }


def main_cluster() -> None:
    """The sharded dedup stage end to end (hash, batch store, candidates, decisions, groups) on real images."""
    parser = argparse.ArgumentParser(prog="dedup.py cluster", description=main_cluster.__doc__)
    parser.add_argument("snapshot", type=Path, help="a published Synth version folder (vYYYYMMDD): the history")
    parser.add_argument("--sizes", type=int, nargs="+", default=[250, 500, 1000, 2000], help="batch sizes")
    parser.add_argument("--processes", type=int, nargs="+", default=[1, 2], help="local worker processes")
    parser.add_argument("--ray-workers", type=int, nargs="*", default=[], help="local Ray workers (e.g. 1 2 4)")
    parser.add_argument("--ray-size", type=int, default=500, help="batch size of the Ray runs")
    parser.add_argument("--crop-pairs", choices=get_args(CropPairs), default="all")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--growth", type=int, nargs="*", default=[], help="history sizes of the search growth")
    args = parser.parse_args()
    print(json.dumps({"load_average": [round(x, 2) for x in os.getloadavg()]}), flush=True)
    growth = search_growth(args.growth, args.seed, args.crop_pairs) if args.growth else []
    images = [data for _, data in published(args.snapshot)]
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out"
        out.mkdir()
        (out / "v20260101").symlink_to(args.snapshot.resolve(), target_is_directory=True)
        history.history_store(out, "v20260601", Path(tmp) / "state" / "fingerprints")
        runs = []
        for size in args.sizes:
            samples = cluster_batch(images, size, args.seed)
            for processes in args.processes:
                executor = LocalExecutor(processes if processes > 1 else None)
                root = Path(tmp) / f"local-{size}-{processes}"
                found = timed_stage(root, out, samples, executor, 2 * processes * 4, args.crop_pairs)
                runs.append({"batch": size, "history": len(images), "executor": f"local x{processes}", **found})
                print(json.dumps(runs[-1]), flush=True)
                shutil.rmtree(root)
        if args.ray_workers:
            from lookbench.shards.ray_executor import RayExecutor

            samples = cluster_batch(images, args.ray_size, args.seed)
            for workers in args.ray_workers:
                executor = RayExecutor(None, workers)
                root = Path(tmp) / f"ray-{workers}"
                try:
                    found = timed_stage(root, out, samples, executor, 4 * max(args.ray_workers), args.crop_pairs)
                finally:
                    executor.close()
                runs.append({"batch": args.ray_size, "history": len(images), "executor": f"ray x{workers}", **found})
                print(json.dumps(runs[-1]), flush=True)
                shutil.rmtree(root)
    record(
        growth=growth,
        runs=runs,
        fits=cluster_fits(runs),
        projection=projection(runs, growth),
        load_average_end=[round(x, 2) for x in os.getloadavg()],
    )


def main_release() -> None:
    """A batch as large as a release against a whole published snapshot: the wall time of the dedup stage per
    batch image, and the projected wall time of a batch of the history's size."""
    parser = argparse.ArgumentParser(prog="dedup.py release", description=main_release.__doc__)
    parser.add_argument("snapshot", type=Path, help="a published Synth version folder (vYYYYMMDD): the history")
    parser.add_argument("--batch", type=int, default=10_000, help="batch images (edits of history images and new)")
    parser.add_argument("--processes", type=int, default=2, help="local worker processes")
    parser.add_argument("--state", type=Path, help="state folder kept between runs (default: a temporary one)")
    parser.add_argument("--repeats", type=int, default=3, help="runs of the stage (each from scratch)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    load = [round(x, 2) for x in os.getloadavg()]
    images = [data for _, data in published(args.snapshot)]
    with tempfile.TemporaryDirectory() as tmp:
        out, state = Path(tmp) / "out", args.state or Path(tmp) / "state"
        cache = state / "fingerprints"
        out.mkdir()
        (out / "v20260101").symlink_to(args.snapshot.resolve(), target_is_directory=True)
        started = time.perf_counter()
        history.history_store(out, "v20260601", cache)
        store_s = time.perf_counter() - started
        started = time.perf_counter()
        samples = cluster_batch(images, args.batch, args.seed)
        made_s = time.perf_counter() - started
        executor = LocalExecutor(args.processes if args.processes > 1 else None)
        runs = []
        for repeat in range(args.repeats):
            runs.append(
                timed_stage(Path(tmp) / f"run{repeat}", out, samples, executor, 8 * args.processes, "all", state)
            )
            print(json.dumps(runs[-1]), flush=True)
            shutil.rmtree(Path(tmp) / f"run{repeat}")
        if len({json.dumps(run["tables_sha256"]) for run in runs}) != 1:
            raise AssertionError("the repeats wrote different tables")
        walls = sorted(run["wall_s"] for run in runs)
        found = min(runs, key=lambda run: run["wall_s"])
        store_folder, _ = history.history_store(out, "v20260601", cache)
        assert store_folder is not None
        growth = real_search_growth(open_store(store_folder), args.seed)
    n, shard = len(images), found["shard_seconds"]
    per_image = found["wall_s"] / args.batch
    median_per_image = walls[len(walls) // 2] / args.batch
    # The batch's own index is searched by every batch image: at the history's size its search costs what the
    # history's does, so the candidates job's time per image is counted twice (an upper bound).
    extra = shard["candidates"] / args.batch / args.processes
    # A crawl deduped as one batch of 1M: hashing and decisions per image as measured, the search in one index of
    # 1M from the growth fit on real window codes, spread over the processes at the run's own efficiency.
    efficiency = sum(shard.values()) / (args.processes * found["wall_s"])
    fixed_ms = 1000 * (shard["hash"] + shard["decisions"]) / args.batch
    b = exponent([(g["history"], g["cpu_ms_per_image"]) for g in growth])
    a = growth[-1]["cpu_ms_per_image"] / growth[-1]["history"] ** b
    crawl = 1_000_000
    crawl_ms = fixed_ms + a * crawl**b
    record(
        history=n,
        batch=args.batch,
        processes=args.processes,
        history_store_s=round(store_s, 1),
        batch_made_s=round(made_s, 1),
        **found,
        wall_s_of_repeats=walls,
        wall_ms_per_batch_image={"min": round(1000 * per_image, 2), "median": round(1000 * median_per_image, 2)},
        search_growth_on_real_codes=growth,
        search_exponent=b,
        efficiency=round(efficiency, 3),
        projected={
            f"{n} against {n}": {
                "wall_hours": {
                    "min": round(n * (per_image + extra) / 3600, 3),
                    "median": round(n * (median_per_image + extra) / 3600, 3),
                }
            },
            f"{crawl} in one batch": {
                "cpu_ms_per_image": {"hash and decisions": round(fixed_ms, 1), "search": round(a * crawl**b, 1)},
                "wall_hours": round(crawl * crawl_ms / 1000 / 3600 / (args.processes * efficiency), 2),
            },
        },
        load_average={"before": load, "after": [round(x, 2) for x in os.getloadavg()]},
    )


def real_search_growth(stored: StoredCodes, seed: int, queries: int = 300) -> list[dict[str, Any]]:
    """CPU milliseconds of one image's crop-candidate search (straight and mirrored) in the first n entries of a
    store of real window codes, for n from an eighth of it to all but the queries (other entries of it)."""
    rng = np.random.default_rng(seed)
    rows = len(stored)
    picked = rng.choice(rows, queries, replace=False)
    straight = np.asarray(stored.windows)[picked]
    mirrored = np.stack([stored.view(int(row)).mirrored().windows for row in picked])
    keep = np.setdiff1d(np.arange(rows), picked)
    windows, present = np.asarray(stored.windows)[keep], np.asarray(stored.present)[keep]
    found = []
    for n in sorted({len(keep) // 8, len(keep) // 4, len(keep) // 2, len(keep)}):
        table = HashedWindows(Codes.of(windows[:n]), Codes.of(present[:n]))
        table.nearest_many(straight[:2], CROP_CANDIDATE_BITS, MAX_CROP_CANDIDATES)
        times = []
        for _ in range(3):
            started = process_cpu_s()
            table.nearest_many(straight, CROP_CANDIDATE_BITS, MAX_CROP_CANDIDATES)
            table.nearest_many(mirrored, CROP_CANDIDATE_BITS, MAX_CROP_CANDIDATES)
            times.append(1000 * (process_cpu_s() - started) / queries)
        found.append({"history": n, "cpu_ms_per_image": round(min(times), 3), "median": round(sorted(times)[1], 3)})
        print(json.dumps({"real_search_growth": found[-1]}), flush=True)
    return found


def synthetic_entries(rng: np.random.Generator, n: int, queries: bool = False) -> Entries:
    """`n` entries of synthetic fingerprints in memory (uniform codes: no aligned candidate), as the dedup stage's
    candidate search sees a store; with `queries`, mirror pHashes too."""
    (stored,) = synthetic_parts(rng, n, chunk=n)
    return Entries(stored, lambda _row: b"", random_words(rng, (n, 4)) if queries else None)


def search_growth(sizes: list[int], seed: int, pairs: CropPairs, shard: int = 512) -> list[dict[str, Any]]:
    """Per history size, the CPU milliseconds of one batch image's candidate search in it (pHash tier, window
    pairs straight and mirrored): a shard of `shard` queries searched together, as the candidates job does, and one
    by one."""
    rng = np.random.default_rng(seed)
    queries = synthetic_entries(rng, shard, queries=True)
    settings, none = DedupConfig(crop_pairs=pairs), np.zeros(0, dtype=np.int64)
    rows = list(range(shard))
    found = []
    for n in sizes:
        history = synthetic_entries(rng, n)

        def together(history: Entries = history) -> object:
            return candidate_rows(queries, rows, history, settings, lambda _: none)

        def alone(history: Entries = history) -> object:
            return [candidate_rows(queries, [q], history, settings, lambda _: none) for q in rows[:64]]

        ms = {"together": 1000 * cpu(together) / shard, "alone": 1000 * cpu(alone) / 64}
        found.append({"history": n, "cpu_ms_per_image": {name: round(value, 3) for name, value in ms.items()}})
        print(json.dumps({"search_growth": found[-1]}), flush=True)
    return found


def exponent(points: list[tuple[float, float]]) -> float:
    """b of y = a * x^b fitted to the points (least squares in logs)."""
    slope, _ = np.polyfit(np.log([p[0] for p in points]), np.log([p[1] for p in points]), 1)
    return round(float(slope), 3)


PAIRS_AT_CAPS = 2 * (2 * MAX_CROP_CANDIDATES + MAX_CANDIDATES)
"""Pairs one batch image can bring when every cap is reached in the history and in the batch: crop candidates
straight and mirrored and pHash candidates, on each side (an upper bound: a pair found from both sides counts once)."""


def projection(runs: list[dict[str, Any]], growth: list[dict[str, Any]], cores: int = 2) -> dict[str, Any]:
    """CPU and wall hours of a whole dedup of n new images against a history of n, per image: its hashing and
    decisions at the caps (CPU per pair from the largest one-process run) and its candidate search in both indexes
    (the growth fit), spread over `cores` at the efficiency measured with two processes."""
    local = [run for run in runs if run["executor"] == "local x1"]
    if not local or len(growth) < 2:
        return {}
    largest = max(local, key=lambda run: run["batch"])
    pair_ms = 1000 * largest["shard_seconds"]["decisions"] / largest["candidate_pairs"]
    hash_ms = 1000 * largest["shard_seconds"]["hash"] / largest["batch"]
    points = [(g["history"], g["cpu_ms_per_image"]["together"]) for g in growth]
    b = exponent(points)
    a = points[-1][1] / points[-1][0] ** b
    two = [run for run in runs if run["executor"] == "local x2" and run["batch"] == largest["batch"]]
    efficiency = largest["wall_s"] / (2 * two[0]["wall_s"]) if two else 1.0
    out: dict[str, Any] = {
        "cpu_ms_per_pair": round(pair_ms, 3),
        "pairs_per_image_measured": round(largest["candidate_pairs"] / largest["batch"], 1),
        "pairs_per_image_at_caps": PAIRS_AT_CAPS,
        "hash_ms_per_image": round(hash_ms, 2),
        "search_exponent": b,
        "two_process_efficiency": round(efficiency, 3),
    }
    for n in (69_000, 1_000_000):
        search_ms = 2 * a * n**b
        per_image = hash_ms + search_ms + PAIRS_AT_CAPS * pair_ms
        cpu_hours = n * per_image / 1000 / 3600
        out[f"{n} against {n}"] = {
            "cpu_ms_per_image": {"search": round(search_ms, 1), "decisions": round(PAIRS_AT_CAPS * pair_ms, 1)},
            "cpu_hours": round(cpu_hours, 2),
            "wall_hours_on_2_cores": round(cpu_hours / (cores * min(efficiency, 1.0)), 2),
        }
    lookup = [(n, a * n**b + PAIRS_AT_CAPS / 2 * pair_ms) for n in (10_000, 300_000)]
    out["lookup_cost_exponent_10k_to_300k"] = exponent(lookup)
    return out


def cluster_fits(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Per executor, wall = a * batch^b fitted over the batch sizes, and its projection to 69k and 1M images."""
    fits = {}
    for name in sorted({run["executor"] for run in runs}):
        points = [(run["batch"], run["wall_s"]) for run in runs if run["executor"] == name]
        if len(points) < 2:
            continue
        slope, intercept = np.polyfit(np.log([p[0] for p in points]), np.log([p[1] for p in points]), 1)
        fits[name] = {
            "exponent": round(float(slope), 3),
            "projected_hours": {
                str(n): round(float(np.exp(intercept) * n**slope) / 3600, 2) for n in (69_000, 1_000_000)
            },
        }
    return fits


SUBCOMMANDS = {
    "errors": main_errors,
    "scale": main_scale,
    "lookup": main_lookup,
    "cluster": main_cluster,
    "release": main_release,
}


def main() -> None:
    run_subcommand("dedup", SUBCOMMANDS)


if __name__ == "__main__":
    main()
