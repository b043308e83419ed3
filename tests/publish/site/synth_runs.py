"""Build a small Synth-style snapshot (queries first seen across two releases) and evaluated runs of it.

Street outfits are cut so that one of them (`look-4`: queries 11, 12, 13) has crops first seen in both releases,
the case a window must keep or drop whole.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from conftest import make_row, png_bytes, write_snapshot
from lookbench.embeddings.precomputed import PrecomputedEmbeddings
from lookbench.evaluation.runner import EvalSettings, evaluate
from lookbench.models.meta import ModelMeta
from lookbench.results.io import save_result
from lookbench.results.per_query import write_per_query
from lookbench.snapshot import open_snapshot
from lookbench.snapshot.schema import STREETLOOK_SUBSETS

RELEASES = (dt.datetime(2025, 12, 1, tzinfo=dt.timezone.utc), dt.datetime(2026, 1, 15, 9, 30, tzinfo=dt.timezone.utc))
CATEGORIES = {
    "dress": ("red", "blue", "black"),
    "skirt": ("pleated", "denim"),
    "pants": ("black", "beige", "grey"),
    "shirt": ("white", "striped"),
}
OTHERS = ("v-neck", "long-sleeve", "cotton", "slim", "midi")
SNAPSHOT_ID = "v20260201"
DEFAULT_SIZES = {"real_studio_flat": 24, "real_streetlook": 24}
DIM = 24


@dataclass(frozen=True)
class Model:
    """A fake embedding model: query = its gallery twin + `noise`, and its model card."""

    name: str
    noise: float
    card: dict[str, Any]
    display: str = ""


def _labels(rng: np.random.Generator, i: int) -> tuple[str, str, list[str]]:
    category = list(CATEGORIES)[i % len(CATEGORIES)]
    mains = CATEGORIES[category]
    return category, mains[int(rng.integers(len(mains)))], list(rng.choice(OTHERS, size=2, replace=False))


def build_snapshot(
    root: Path, sizes: dict[str, int] | None = None, seed: int = 0
) -> tuple[Path, dict[str, np.ndarray]]:
    """Write the snapshot (queries per subset); return it and the 'true' item vectors per subset/split."""
    rng = np.random.default_rng(seed)
    spec: dict[str, dict[str, list[dict[str, Any]]]] = {}
    vectors: dict[str, np.ndarray] = {}
    sources = ("shop", "street-blog")
    for s_index, (subset, per_subset) in enumerate((sizes or DEFAULT_SIZES).items()):
        street = subset in STREETLOOK_SUBSETS
        queries, gallery, q_vec, g_vec = [], [], [], []
        for i in range(per_subset):
            category, main, others = _labels(rng, i)
            item = f"{subset}-{i}"
            outfit = f"look-{(i + 1) // 3}" if street else None
            extra: dict[str, Any] = {
                "first_seen_at": RELEASES[int(i >= per_subset // 2)],
                "source": sources[int(street)],
            }
            if outfit:
                extra["outfit_id"] = outfit
            queries.append(
                make_row(
                    item,
                    category,
                    main,
                    others,
                    seed=1000 * s_index + i,
                    raw=png_bytes(i, 24) if street else None,
                    **extra,
                )
            )
            gallery.append(make_row(item, category, main, others, seed=5000 + 1000 * s_index + i))
            base = rng.normal(size=DIM)
            q_vec.append(base)
            g_vec.append(base)
        for j in range(per_subset // 2):
            category, main, others = _labels(rng, j + 1)
            gallery.append(make_row(f"{subset}-extra{j}", category, main, others, seed=9000 + 100 * s_index + j))
            g_vec.append(rng.normal(size=DIM))
        spec[subset] = {"query": queries, "gallery": gallery}
        vectors[f"{subset}/query"] = np.array(q_vec)
        vectors[f"{subset}/gallery"] = np.array(g_vec)
    spec["noise"] = {"gallery": [make_row(f"noise-{j}", "dress", "red", [], seed=7000 + j) for j in range(6)]}
    vectors["noise/gallery"] = rng.normal(size=(6, DIM))
    return write_snapshot(root, spec, SNAPSHOT_ID), vectors


def write_embeddings(root: Path, vectors: dict[str, np.ndarray], noise: float, seed: int) -> Path:
    """Embeddings of one fake model: queries perturbed by `noise`."""
    rng = np.random.default_rng(seed)
    for key, array in vectors.items():
        out = array + noise * rng.normal(size=array.shape) if key.endswith("/query") else array
        path = root / f"{key}.npy"
        path.parent.mkdir(parents=True, exist_ok=True)
        np.save(path, out.astype(np.float32))
    return root


def evaluate_models(
    root: Path,
    snapshot: Path,
    vectors: dict[str, np.ndarray],
    models: list[Model],
    since: str | None = None,
    settings: EvalSettings | None = None,
) -> list[Path]:
    """Evaluate each model with `lookbench.evaluation.evaluate` and save result + per-query files with cards.

    With `since`, only queries first seen on or after that day are scored (files are named `MODEL-since.json`);
    `settings` (subsets, cut-offs) replace the defaults.
    """
    snap = open_snapshot(snapshot)
    paths = []
    start = None if since is None else np.datetime64(since, "us")
    for index, model in enumerate(models):
        provider = PrecomputedEmbeddings(write_embeddings(root / "emb" / model.name, vectors, model.noise, index))
        out = evaluate(snap, provider, replace(settings or EvalSettings(), resamples=200, since=start))
        card = ModelMeta.model_validate(model.card)
        meta = out.result.model.meta.merged(**card.model_dump(exclude_defaults=True))
        out.result.model = out.result.model.model_copy(update={"name": model.display or model.name, "meta": meta})
        target = root / "results" / f"{model.name}{'-since' if since else ''}.json"
        write_per_query(out.per_query, target.with_name(target.stem + ".per_query.parquet"))
        out.result.per_query_file = target.stem + ".per_query.parquet"
        save_result(out.result, target)
        paths.append(target)
    return paths


def copy_run(source: Path, target: Path, edit: Callable[[dict[str, Any]], None]) -> Path:
    """A copy of a result file, changed by `edit`, beside a copy of its per-query file; returns the copy."""
    result = json.loads(source.read_text())
    edit(result)
    target.write_text(json.dumps(result))
    name = result["per_query_file"]
    target.with_name(name).write_bytes(source.with_name(name).read_bytes())
    return target


def with_timings(timings: dict[str, float], name: str | None = None) -> Callable[[dict[str, Any]], None]:
    """An edit for `copy_run`: these timings (and this model name)."""

    def edit(result: dict[str, Any]) -> None:
        result["timings"] = timings
        if name is not None:
            result["model"]["name"] = name

    return edit


def older_release(result: dict[str, Any]) -> None:
    """An edit for `copy_run`: the same run as if scored on an earlier release (other id, other content)."""
    result["snapshot"]["id"] = "v20251215"
    result["snapshot"]["content_hash"] = "e" * 64


FRESH = {"embed_s": 2.0, "embedded_images": 120.0}
"""Timings of a run that embedded 120 images in 2 s: 60 images/s."""
CACHED = {"embed_s": 0.02, "embedded_images": 0.0}
"""Timings of a re-run served from the embedding cache."""

NASTY_NAME = 'blurry</script><img src=x onerror="document.title=1">&amp;'
"""A user-written model name that must show as text, never run or break the page."""

DEFAULT_MODELS = [
    Model(
        "sharp",
        0.9,
        {
            "name": "sharp",
            "release_date": "2025-06",
            "training_cutoff": "2025-05",
            "training_data": ["laion"],
            "params": 150_000_000,
        },
    ),
    Model(
        "twin",
        0.95,
        {
            "name": "twin",
            "release_date": "2026-01-20",
            "training_cutoff": "2025-12-20",
            "training_data": [],
            "params": 400_000_000,
        },
    ),
    Model(
        "blurry",
        1.6,
        {"name": "blurry", "release_date": None, "training_cutoff": "unknown", "training_data": ["v20260201", "shop"]},
        display=NASTY_NAME,
    ),
]


def confused_per_query(snapshot: Path, per_query: pa.Table) -> pa.Table:
    """The per-query table with each rank-1 result replaced by a same-category item of another main attribute."""
    snap = open_snapshot(snapshot)
    tops = per_query["topk_rows"].to_pylist()
    for i, (subset, row) in enumerate(
        zip(per_query["subset"].to_pylist(), per_query["query_row"].to_pylist(), strict=True)
    ):
        queries, corpus = snap.labels(subset, "query"), snap.corpus_labels(subset)
        gallery = snap.num_rows(subset, "gallery")
        other = next(
            (
                g
                for g in range(gallery)
                if corpus.category[g] == queries.category[row]
                and corpus.main_attribute[g] != queries.main_attribute[row]
            ),
            None,
        )
        if other is not None:
            tops[i] = [other, *tops[i][1:]]
    column = per_query.schema.get_field_index("topk_rows")
    return per_query.set_column(column, "topk_rows", pa.array(tops, per_query.schema.field("topk_rows").type))


def confused_run(snapshot: Path, source: Path, target: Path) -> Path:
    """A copy of a run whose every rank-1 result is a same-category item of another main attribute."""
    from lookbench.evaluation.contamination.tables import load_with_per_query
    from lookbench.results.io import load_result

    _, per_query = load_with_per_query(source)
    assert per_query is not None

    def unchecked(result: dict[str, Any]) -> None:  # the per-query file is replaced below
        result["per_query_sha256"] = None

    copy = copy_run(source, target, unchecked)
    pq.write_table(confused_per_query(snapshot, per_query), target.parent / load_result(copy).per_query_file)
    return copy
