"""Dedup search at scale: per-look-up time and transient memory of each tier's table against the faiss floor.

Synthetic fingerprints of the real format (a 256-bit pHash and twelve 64-bit window hashes per entry, uniformly
random; a tenth of the queries are near copies of an indexed entry, the rest new images) fill the tables the dedup
stage uses (`lookbench.search.duplicates.tables`): all but the last 2,000 entries in bulk, those one `add` each
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

    python benchmarks/dedup/scale.py --sizes 10000 100000 1000000
    python benchmarks/dedup/scale.py --sizes 10000 100000 --near-identical --queries 20
    python benchmarks/dedup/scale.py --whole --sizes 10000 --crop-pairs full-frame
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: measure.py and the dedup package

import argparse
import json
import os
import statistics
import tempfile
import time
import tracemalloc
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, get_args

import faiss
import numpy as np
import pyarrow as pa
from measure import results_file

from dedup.common import (
    CROP_LIMIT,
    PHASH_RADIUS,
    WINDOW_RADIUS,
    W,
    process_cpu_s,
    random_words,
    schedule_hours,
    synthetic_parts,
)
from lookbench.search.duplicates.crops import CropPairs
from lookbench.search.duplicates.index import (
    FingerprintIndex,
)
from lookbench.search.duplicates.store import open_store, write_store
from lookbench.search.duplicates.tables import (
    FRAME,
    FaissWindows,
    HashedPhashes,
    ScanPhashes,
    ScanWindows,
    as_bytes,
    one_thread,
)
from lookbench.shards.executor import Needs, Progress
from lookbench.shards.local import LocalExecutor
from lookbench.shards.table import Mapped, RowStream, TableItems, TableJob, map_items


def rss_mb() -> float:
    """Resident memory of this process, MB."""
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


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


def queries_of(
    rng: np.random.Generator, phashes: np.ndarray, windows: np.ndarray, queries: int, worst: bool
) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Look-ups (pHash pairs, window rows): a tenth near copies of indexed entries, the rest new; `worst`: all near."""
    copies = max(1, queries // 10)
    picks = rng.integers(0, len(phashes), copies)
    q_phash = [np.stack([flipped(rng, phashes[i], 10), random_words(rng, (4,))]) for i in picks]
    q_phash += [random_words(rng, (2, 4)) for _ in range(queries - copies)]
    q_windows = [flipped(rng, windows[i], 40) for i in picks] + [random_words(rng, (W,)) for _ in picks[copies:]]
    q_windows += [random_words(rng, (W,)) for _ in range(queries - len(q_windows))]
    if worst:
        q_phash = [np.stack([flipped(rng, phashes[0], 4)] * 2) for _ in range(queries)]
        q_windows = [flipped(rng, windows[0], 4) for _ in range(queries)]
    return q_phash, q_windows


def scan_paths(
    phashes: np.ndarray, windows: np.ndarray, q_phash: list[np.ndarray], q_windows: list[np.ndarray]
) -> tuple[dict[str, Callable[[], object]], ScanWindows]:
    """The exact numpy scans (the path without faiss) over the same entries, on these queries, and the window scan."""
    scan_phash, scan_windows = ScanPhashes(), ScanWindows()
    scan_phash.codes.add(phashes)
    scan_windows.codes.add(windows)
    scan_windows.present.add(np.ones((len(windows), 1), np.uint64))
    return {
        "phash scan (numpy, no faiss)": lambda: [scan_phash.within(q, PHASH_RADIUS) for q in q_phash],
        "crop candidates scan (numpy, no faiss)": lambda: [
            scan_windows.nearest(q, WINDOW_RADIUS, CROP_LIMIT) for q in q_windows
        ],
        "crop candidates scan, full-frame pairs (numpy, no faiss)": lambda: [
            scan_windows.nearest(q, WINDOW_RADIUS, CROP_LIMIT, "full-frame") for q in q_windows
        ],
    }, scan_windows


def exact_over_full_frames(window_table: FaissWindows, scans: ScanWindows, q_windows: list[np.ndarray]) -> None:
    """Raise unless the faiss answer over the full-frame pairs is the scan's."""
    for q in q_windows:
        faiss_rows, _ = window_table.nearest(q, WINDOW_RADIUS, CROP_LIMIT, "full-frame")
        if not np.array_equal(faiss_rows, scans.nearest(q, WINDOW_RADIUS, CROP_LIMIT, "full-frame")[0]):
            raise AssertionError("FaissWindows.nearest over full-frame pairs differs from the scan")


def over_floor(result: dict[str, Any]) -> dict[str, float]:
    """Median ratios of each measured path to its faiss floor, wall and CPU."""
    out: dict[str, float] = {}
    for kind in ("ms_per_lookup", "cpu_ms_per_lookup"):
        ms = result[kind]
        floor = ms["crop floor: faiss IndexBinaryFlat knn"]["median"]
        measured = ms["crop candidates: FaissWindows.nearest"]["median"]
        out[f"crop_over_floor_median_{kind}"] = round(measured / floor, 2)
        floor = ms["crop floor, full-frame pairs: faiss IndexBinaryFlat knn x2"]["median"]
        measured = ms["crop candidates, full-frame pairs: FaissWindows.nearest"]["median"]
        out[f"full_frame_crop_over_floor_median_{kind}"] = round(measured / floor, 2)
        out[f"full_frame_crop_over_all_pairs_median_{kind}"] = round(
            measured / ms["crop candidates: FaissWindows.nearest"]["median"], 3
        )
        floor = ms["phash floor: faiss IndexBinaryFlat range_search"]["median"]
        out[f"phash_over_floor_median_{kind}"] = round(ms["phash: HashedPhashes.within"]["median"] / floor, 2)
    return out


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

    q_phash, q_windows = queries_of(rng, phashes, windows, queries, worst)
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
        few = max(1, queries // 10)
        scans, scan_windows = scan_paths(phashes, windows, q_phash[:few], q_windows[:few])
        paths |= scans
        # The faiss answer over the full-frame pairs is the scan's: exactness checked where the scan runs.
        exact_over_full_frames(window_table, scan_windows, q_windows[:few])
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
    result |= over_floor(result)
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


if __name__ == "__main__":
    with results_file("dedup-scale"):
        main_scale()
