"""LookBench subsets as MTEB image-to-image retrieval tasks, so `mteb.evaluate(model, tasks=lookbench_tasks(S))`
runs them: queries searched against the subset's gallery plus the snapshot's noise pool, relevant = same item_ID.

Needs `pip install 'lookbench[mteb]'`; nothing in lookbench's core imports this module.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from datasets import Dataset, Features, Value
from datasets import Image as ImageFeature
from mteb.abstasks.retrieval import AbsTaskRetrieval
from mteb.abstasks.retrieval_dataset_loaders import RetrievalSplitData
from mteb.abstasks.task_metadata import TaskMetadata
from mteb.types._metadata import Licenses

from lookbench._util.dates import snapshot_date
from lookbench.errors import SnapshotError
from lookbench.models.mteb_model import CITATION, HF_SUBSET, REFERENCE, SPLIT
from lookbench.snapshot import open_snapshot
from lookbench.snapshot.reader import Snapshot
from lookbench.snapshot.schema import NOISE, SUBSET_TITLES
from lookbench.snapshot.source import parse_hub_uri

K_VALUES = (1, 5, 10, 20, 100)
"""MTEB's cut-offs for these tasks: LookBench's (1, 5, 10, 20) and 100."""


def query_id(row: int) -> str:
    """The MTEB id of a query row."""
    return f"q{row}"


def corpus_id(split: str, row: int) -> str:
    """The MTEB id of a corpus row: `g` for the subset's gallery, `n` for the noise pool."""
    return f"{'n' if split == NOISE else 'g'}{row}"


def _licence(snapshot: Snapshot) -> str:
    """The dataset card's licence when MTEB knows it (or it is a URL), else `not specified`."""
    text = (snapshot.card.licence if snapshot.card is not None else "").strip()
    known: tuple[str, ...] = Licenses.__args__  # type: ignore[attr-defined]
    if text.lower() in known:
        return text.lower()
    return text if text.startswith(("http://", "https://")) else "not specified"


def _date_range(snapshot: Snapshot, subset: str) -> tuple[str, str] | None:
    """First and last `first_seen_at` of the subset's queries, else the snapshot's version date."""
    dates = snapshot.labels(subset, "query").first_seen_at
    if dates is not None and not np.isnat(dates).all():
        valid = dates[~np.isnat(dates)]
        return str(valid.min())[:10], str(valid.max())[:10]
    day = snapshot_date(snapshot.snapshot_id)
    return None if day is None else (str(day)[:10], str(day)[:10])


def _dataset_ref(snapshot: Snapshot) -> dict[str, str]:
    """The Hub dataset (and revision) of an hf:// snapshot, else its folder; the revision is its content hash."""
    path = snapshot.location
    if path.startswith("hf://"):
        path = parse_hub_uri(path)[0]
    return {"path": path, "revision": snapshot.content_hash}


def task_metadata(snapshot: Snapshot, subset: str) -> TaskMetadata:
    """MTEB metadata of one subset: name, dates (release window), licence, reference and citation."""
    title = SUBSET_TITLES.get(subset, subset)
    noise = snapshot.num_rows(NOISE, "gallery") if snapshot.has_noise else 0
    return TaskMetadata(
        name=f"LookBench-{snapshot.name}-{subset}",
        description=(
            f"LookBench {title} ({snapshot.name}): find the same product (item_ID) in the subset's gallery "
            f"plus {noise} distractors."
        ),
        reference=REFERENCE,
        dataset=_dataset_ref(snapshot),  # type: ignore[arg-type]
        type="Any2AnyRetrieval",
        category="i2i",
        eval_splits=[SPLIT],
        eval_langs=["eng-Latn"],
        main_score="ndcg_at_10",
        date=_date_range(snapshot, subset),
        domains=["Web"],
        task_subtypes=["Object recognition"],
        license=_licence(snapshot),
        annotations_creators="derived",
        dialect=[],
        modalities=["image"],
        sample_creation="found",
        bibtex_citation=snapshot.card.citation if snapshot.card is not None and snapshot.card.citation else CITATION,
    )


def _images(snapshot: Snapshot, subset: str, split: str) -> list[dict[str, Any]]:
    """The split's encoded images as `datasets` Image values (decoded by MTEB's loader, bytes untouched)."""
    out: list[dict[str, Any]] = []
    for start, batch in snapshot.iter_images(subset, split, batch_size=256):
        for offset, data in enumerate(batch):
            if not data:
                raise SnapshotError(f"{subset}/{split} row {start + offset}: no image")
            out.append({"bytes": data, "path": None})
    return out


def split_data(snapshot: Snapshot, subset: str) -> RetrievalSplitData:
    """Queries, the corpus (gallery then noise) and the relevant gallery rows of every query (same item_ID)."""
    features = Features({"id": Value("string"), "image": ImageFeature()})
    queries = snapshot.labels(subset, "query")
    gallery = snapshot.labels(subset, "gallery")
    by_item: dict[str, list[int]] = {}
    for row, item in enumerate(gallery.item_id):
        by_item.setdefault(item, []).append(row)
    corpus_ids = [corpus_id(subset, r) for r in range(len(gallery))]
    corpus_images = _images(snapshot, subset, "gallery")
    if snapshot.has_noise:
        noise_images = _images(snapshot, NOISE, "gallery")
        corpus_ids += [corpus_id(NOISE, r) for r in range(len(noise_images))]
        corpus_images += noise_images
    relevant = {
        query_id(q): {corpus_id(subset, g): 1 for g in by_item.get(item, [])} for q, item in enumerate(queries.item_id)
    }
    query_ids = [query_id(q) for q in range(len(queries))]
    return RetrievalSplitData(
        queries=Dataset.from_dict({"id": query_ids, "image": _images(snapshot, subset, "query")}, features=features),
        corpus=Dataset.from_dict({"id": corpus_ids, "image": corpus_images}, features=features),
        relevant_docs=relevant,
        top_ranked=None,
    )


class LookBenchTask(AbsTaskRetrieval):
    """One LookBench subset as an MTEB retrieval task; `lookbench_tasks` makes one subclass per subset."""

    k_values = K_VALUES
    data_loaded: bool
    lookbench_snapshot: Snapshot
    lookbench_subset: str

    def load_data(self, num_proc: int | None = None, **kwargs: Any) -> None:
        """Read the subset from the snapshot (no download)."""
        if self.data_loaded:
            return
        data = split_data(self.lookbench_snapshot, self.lookbench_subset)
        self.dataset = {HF_SUBSET: {SPLIT: data}}
        self.data_loaded = True


def lookbench_tasks(snapshot: str | Path | Snapshot, subsets: list[str] | None = None) -> list[LookBenchTask]:
    """One MTEB task per image subset of a snapshot (composed subsets are not image-to-image retrieval)."""
    snap = snapshot if isinstance(snapshot, Snapshot) else open_snapshot(snapshot)
    names = snap.check_subsets(subsets) if subsets else snap.subsets
    tasks = []
    for subset in names:
        if snap.kinds[subset] == "composed":
            continue
        snap.check_task(subset, "image")
        attributes = {"metadata": task_metadata(snap, subset), "lookbench_snapshot": snap, "lookbench_subset": subset}
        cls = type(f"LookBench_{subset}", (LookBenchTask,), attributes)
        tasks.append(cls())
    if not tasks:
        raise SnapshotError(f"{snap.root}: no image subsets to expose as MTEB tasks")
    return tasks
