"""Windows keep or drop whole outfits, the same in `eval --since`, `tables --since` and the page's data; throughput."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from site_fixtures import synth_data_fixture, synth_runs_fixture  # noqa: F401

from lookbench.embeddings.precomputed import PrecomputedEmbeddings
from lookbench.evaluation.contamination.tables import load_with_per_query
from lookbench.evaluation.runner import EvalSettings, evaluate
from lookbench.evaluation.window import filter_window, outfit_dates, query_dates, window_mask
from lookbench.models.embed_options import EmbedOptions
from lookbench.models.registry import resolve_model
from lookbench.publish.reports.sitedata import build_site_data
from lookbench.snapshot import open_snapshot

NAT = np.datetime64("NaT", "us")


def _days(*texts: str | None) -> np.ndarray:
    return np.array([NAT if t is None else np.datetime64(t, "us") for t in texts], dtype="datetime64[us]")


def test_outfit_dates_take_the_earliest_crop() -> None:
    dates = _days("2026-01-15", "2025-12-01", "2026-01-15", "2026-01-20", None, None)
    outfits = ["a", "a", None, "b", "b", "c"]
    got = outfit_dates(dates, outfits)
    # a: both crops take 2025-12-01; the keyless row keeps its own; b's undated crop takes b's date; c stays NaT
    assert got.tolist() == _days("2025-12-01", "2025-12-01", "2026-01-15", "2026-01-20", "2026-01-20", None).tolist()
    assert dates[0] == np.datetime64("2026-01-15", "us")  # the input is not modified


def test_window_mask_keeps_or_drops_whole_outfits() -> None:
    dates = _days("2025-12-01", "2026-01-15", "2026-01-15", "2026-01-15")
    outfits = ["a", "a", "b", "b"]
    since = np.datetime64("2026-01-01", "us")
    assert window_mask(dates, 4, since, None, None).tolist() == [False, True, True, True]  # crop by crop
    assert window_mask(dates, 4, since, None, None, outfits).tolist() == [False, False, True, True]
    until = np.datetime64("2025-12-31", "us")
    assert window_mask(dates, 4, None, until, None, outfits).tolist() == [True, True, False, False]
    fallback = np.datetime64("2026-02-01", "us")
    undated = _days(None, None, None, None)
    assert window_mask(undated, 4, since, None, fallback, outfits).tolist() == [True] * 4
    assert window_mask(undated, 4, since, None, None, outfits).tolist() == [False] * 4  # no date: dropped


def _queries(table: pa.Table) -> list[tuple[str, int]]:
    return sorted(zip(table["subset"].to_pylist(), table["query_row"].to_pylist(), strict=True))


def _outfits(table: pa.Table) -> dict[tuple[str, str], int]:
    out: dict[tuple[str, str], int] = {}
    for subset, key in zip(table["subset"].to_pylist(), table["outfit_key"].to_pylist(), strict=True):
        if key is not None:
            out[(subset, key)] = out.get((subset, key), 0) + 1
    return out


@pytest.mark.parametrize(("since", "until"), [("2026-01-01", None), (None, "2025-12-31"), ("2025-12-01", "2026-01-15")])
def test_eval_tables_and_page_keep_the_same_whole_outfits(
    synth_runs: tuple[Path, list[Path]], since: str | None, until: str | None
) -> None:
    snapshot, paths = synth_runs
    result, full = load_with_per_query(paths[0])
    assert full is not None
    start = None if since is None else np.datetime64(since, "us")
    end = None if until is None else np.datetime64(until, "us")
    provider = PrecomputedEmbeddings(paths[0].parent.parent / "emb" / "sharp")
    direct = evaluate(open_snapshot(snapshot), provider, EvalSettings(resamples=10, since=start, until=end))
    tables = filter_window(full, result.snapshot.id, start, end)
    assert _queries(direct.per_query) == _queries(tables)
    whole = _outfits(full)
    assert all(whole[o] == n for o, n in _outfits(tables).items())  # every kept outfit has all its crops
    spanning = ("real_streetlook", "look-4")  # crops first seen 2025-12-01 and 2026-01-15
    assert whole[spanning] == 3
    # the page embeds the same per-query day as the window sees, so its filter keeps the same queries
    data = build_site_data([paths[0]])
    days = data["queries"][data["runs"][0]["q"]["shared"]]["d"]
    lo = -(10**9) if start is None else int(start.astype("datetime64[D]").astype(int))
    hi = 10**9 if end is None else int(end.astype("datetime64[D]").astype(int))
    assert sum(1 for d in days if d is not None and lo <= d <= hi) == tables.num_rows
    dates = query_dates(full, result.snapshot.id)
    street = pc.equal(full["subset"], "real_streetlook").to_numpy(zero_copy_only=False)
    look4 = np.array([k == "look-4" for k in full["outfit_key"].to_pylist()]) & street
    assert len(set(dates[look4].tolist())) == 1


USER_MODULE = """
import numpy as np

class Means:
    model_id = "channel-means"
    revision = "1"

    def embed(self, images):
        return np.stack([np.asarray(im, dtype=np.float32).mean(axis=(0, 1)) + 1 for im in images])

def make():
    return Means()
"""


def test_embedded_images_counts_only_what_the_model_ran_on(
    synth_runs: tuple[Path, list[Path]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    snapshot, _ = synth_runs
    (tmp_path / "means_model.py").write_text(USER_MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    snap = open_snapshot(snapshot)
    distinct = set()
    for subset in snap.subsets:
        for split in ("query", "gallery"):
            for _, images in snap.iter_images(subset, split):
                distinct.update(hashlib.sha256(data).digest() for data in images if data)
    for _, images in snap.iter_images("noise", "gallery"):
        distinct.update(hashlib.sha256(data).digest() for data in images if data)
    options = EmbedOptions(cache_dir=tmp_path / "cache", progress=False)
    first = evaluate(snap, resolve_model("python:means_model:make", options), EvalSettings(resamples=10))
    assert first.result.timings["embedded_images"] == len(distinct)
    again = evaluate(snap, resolve_model("python:means_model:make", options), EvalSettings(resamples=10))
    assert again.result.timings["embedded_images"] == 0  # served from the embedding cache
    assert first.result.metrics == again.result.metrics
