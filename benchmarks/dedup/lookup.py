"""Where a dedup look-up's time goes at scale, per sample, on real images: hashing, candidate search, crop alignment,
image fetches.

`dedup/scale.py` times the candidate searches on synthetic codes; this measures what comes after them, on the
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
  cached) and the same look-up
  repeated (`warm`: views and resampled overlaps cached), in turn query by query; and decoding one image at a crawl's
  size (800x1000 JPEG q90) into a crop view;
* fetching one candidate's encoded image from the published snapshot (`PublishedImages`, the history's
  `image_of`) with its row group not cached (`cold`) and cached (`warm`), alternated.

Every figure is CPU seconds of this thread (min and median); the load is recorded. The model line adds them to the
search model of `dedup/scale.py --extrapolate` (CPU of the history look-up and of the batch look-up of each
sample) for a release of the real one's size (69k against 69k) and a 1M crawl against a 1M history, with
candidate views decoded everywhere, read from the history store (the batch's still decoded: what the dedup stage
does), and as if the batch's were as cheap as the store's.

    python benchmarks/dedup/lookup.py ~/.cache/lookbench/synth/synth-6-small-seed0-20260601/v20260601
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: measure.py and the dedup package

import argparse
import io
import json
import math
import os
import statistics
import tempfile
import time
from collections.abc import Callable

import numpy as np
from measure import results_file
from PIL import Image

from dedup.common import (
    VERSION,
    cpu,
    cropped,
    encoded,
    published,
    schedule_hours,
)
from lookbench._util.images import decode_image
from lookbench.search.duplicates import history, tables
from lookbench.search.duplicates.crops import CropView
from lookbench.search.duplicates.hashes import Fingerprint, fingerprint
from lookbench.search.duplicates.index import (
    CROP_CANDIDATE_BITS,
    MAX_CROP_CANDIDATES,
    FingerprintIndex,
)
from lookbench.search.duplicates.store import StoredCodes, open_store
from lookbench.search.duplicates.tables import (
    nearest_pairs,
)

REAL_RELEASE = 69_000


"""The real release's size, as in `scale.py --extrapolate`: its dedup against a history of its size."""


def summary_lookup(values: list[float]) -> dict[str, float]:
    """min and median, ms."""
    return {"min": round(1e3 * min(values), 2), "median": round(1e3 * statistics.median(values), 2)}


def model(hashing_s: float, views: dict[str, tuple[float, float, float]], crawl: int = 1_000_000) -> None:
    """A crawl against a history of its size: the search CPU of `scale.py`'s model (one core, the history's
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


def hashing_times(rows: list[tuple[str, bytes]]) -> tuple[list[Fingerprint], list[float], list[float]]:
    """Every image's fingerprint, with the CPU seconds of its windows and colours, and of decoding on a sample."""
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
    return prints, hashing, hashing_decode


def code_statistics(codes: np.ndarray, picks: np.ndarray) -> None:
    """Per crop-pair setting, how many images lie within the crop tier's bits of a look-up, at 1M entries."""
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


def crop_tier_times(
    snapshot: Path, rows: list[tuple[str, bytes]], prints: list[Fingerprint], queries: int
) -> tuple[dict[str, list[float]], list[int]]:
    """CPU seconds of the crop tier per look-up (candidate views cold, read from the store, warm), and candidates."""
    by_key = dict(rows)
    index = FingerprintIndex(by_key.__getitem__)
    for (key, _), found in zip(rows[queries:], prints[queries:], strict=True):
        index.add(key, found.sha256, found.phash, found.windows)
    with tempfile.TemporaryDirectory() as cache:
        stored = history_of(snapshot, Path(cache))
        assert stored.keys.to_pylist() == [key for key, _ in rows]
        from_store = FingerprintIndex.of_store(by_key.__getitem__, rows_from(stored, queries))

        def stored_views(query: Fingerprint) -> object:
            from_store._views.clear()
            return list(from_store._cropped(query, 16))

        aligned: dict[str, list[float]] = {"cold": [], "stored thumbnails": [], "warm": []}
        candidates = []
        for _, data in rows[:queries]:
            query = fresh(data)
            index._views.clear()
            aligned["cold"].append(cpu(lambda query=query: list(index._cropped(query, 16))))
            candidates.append(len(index._views))
            query = fresh(data)
            aligned["stored thumbnails"].append(cpu(lambda query=query: stored_views(query)))
            aligned["warm"].append(cpu(lambda query=query: list(index._cropped(query, 16))))
    index._views.clear()
    return aligned, candidates


def large_view_times(rows: list[tuple[str, bytes]]) -> list[float]:
    """CPU seconds of decoding an 800x1000 JPEG (a crawl's size) into a crop view."""
    large = []
    for _, data in rows:
        buffer = io.BytesIO()
        decode_image(data).resize((800, 1000), Image.Resampling.BICUBIC).save(buffer, "JPEG", quality=90)
        encoded = buffer.getvalue()
        large.append(cpu(lambda encoded=encoded: CropView.of(decode_image(encoded)).levels))
    return large


def fetch_times(snapshot: Path, rows: list[tuple[str, bytes]]) -> dict[str, list[float]]:
    """CPU seconds of fetching one image from the published snapshot, its row group cold and warm, alternated."""
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / VERSION).symlink_to(snapshot.resolve())
        images = history.PublishedImages(Path(tmp))
        fetched: dict[str, list[float]] = {"cold": [], "warm": []}
        for i in np.random.default_rng(1).choice(len(rows), size=min(60, len(rows)), replace=False):
            history._row_group_images.cache_clear()
            fetched["cold"].append(cpu(lambda key=rows[i][0]: images(key)))
            fetched["warm"].append(cpu(lambda key=rows[i][0]: images(key)))
    print(
        json.dumps(
            {
                "fetch_ms_per_image": {n: summary_lookup(v) for n, v in fetched.items()},
                "mean_image_bytes": round(statistics.mean(len(data) for _, data in rows)),
            }
        ),
        flush=True,
    )
    return fetched


def main_lookup() -> None:
    """Measure each part and print one JSON line each, then the model."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("snapshot", type=Path, help="a published Synth version folder (vYYYYMMDD)")
    parser.add_argument("--queries", type=int, default=30)
    parser.add_argument("--codes-only", action="store_true", help="only the statistics of the window codes")
    args = parser.parse_args()
    print(json.dumps({"load_average": [round(x, 2) for x in os.getloadavg()]}), flush=True)
    rows = published(args.snapshot)
    prints, hashing, hashing_decode = hashing_times(rows)
    codes = np.stack([p.windows for p in prints if p.windows is not None])
    picks = np.random.default_rng(0).choice(len(codes), size=min(200, len(codes)), replace=False)
    code_statistics(codes, picks)
    probe_volume(codes, picks)
    if args.codes_only:
        return
    others = np.stack([p.windows for p in prints[args.queries :] if p.windows is not None])
    recall_at_scale([data for _, data in rows[: args.queries]], others)
    aligned, candidates = crop_tier_times(args.snapshot, rows, prints, args.queries)
    print(
        json.dumps(
            {
                "crop_tier_ms_per_lookup": {name: summary_lookup(values) for name, values in aligned.items()},
                "candidates_aligned_per_lookup": statistics.median(candidates),
                "decode_and_view_ms_of_an_800x1000_jpeg": summary_lookup(large_view_times(rows[: 3 * args.queries])),
            }
        ),
        flush=True,
    )
    fetched = fetch_times(args.snapshot, rows)
    fetches = statistics.median(candidates) * statistics.median(fetched["cold"])
    cost = {key: statistics.median(values) for key, values in aligned.items()}
    views = {
        "decoded": (cost["cold"], cost["cold"], fetches),
        "stored thumbnails in the history": (cost["stored thumbnails"], cost["cold"], 0.0),
        "stored thumbnails, batch too": (cost["stored thumbnails"], cost["stored thumbnails"], 0.0),
    }
    for crawl in (REAL_RELEASE, 1_000_000):
        model(statistics.median(hashing) + statistics.median(hashing_decode), views, crawl)
    print(json.dumps({"load_average_end": [round(x, 2) for x in os.getloadavg()]}), flush=True)


if __name__ == "__main__":
    with results_file("dedup-lookup"):
        main_lookup()
