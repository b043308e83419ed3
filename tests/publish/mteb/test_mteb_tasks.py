"""LookBench subsets as MTEB tasks: metadata, data, and MTEB's item-level numbers against lookbench's."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.torch
mteb = pytest.importorskip("mteb")

from lookbench._util.images import decode_image  # noqa: E402
from lookbench.embeddings.precomputed import PrecomputedEmbeddings  # noqa: E402
from lookbench.evaluation.runner import EvalSettings, evaluate  # noqa: E402
from lookbench.publish.mteb import lookbench_tasks  # noqa: E402
from lookbench.snapshot import open_snapshot  # noqa: E402
from tiny_mteb import NAME, build_snapshot, embed, tiny_meta  # noqa: E402

KS = (1, 5, 10, 20)


def test_a_subset_becomes_an_image_to_image_task(tmp_path: Path) -> None:
    snapshot = open_snapshot(build_snapshot(tmp_path))
    (task,) = lookbench_tasks(snapshot)
    meta = task.metadata
    assert meta.name == "LookBench-v20260201-real_studio_flat"
    assert meta.type == "Any2AnyRetrieval" and meta.category == "i2i" and meta.modalities == ["image"]
    assert meta.date == ("2025-11-01", "2026-01-17")  # first and last query release, 11 weeks apart
    assert meta.license == "not specified"
    assert meta.dataset["revision"] == snapshot.content_hash
    task.load_data()
    data = task.dataset["default"]["test"]
    assert len(data["queries"]) == 12
    assert len(data["corpus"]) == 12 + 4 + 7  # twins, second photos of items 0, 3, 6, 9, noise
    assert data["relevant_docs"]["q0"] == {"g0": 1, "g1": 1}  # item-0's twin and its second photo
    assert data["relevant_docs"]["q1"] == {"g2": 1}
    assert not any(doc.startswith("n") for docs in data["relevant_docs"].values() for doc in docs)


def _lookbench_vectors(snapshot_dir: Path, out: Path) -> Path:
    snapshot = open_snapshot(snapshot_dir)
    for subset, split in (("real_studio_flat", "query"), ("real_studio_flat", "gallery"), ("noise", "gallery")):
        images = [decode_image(data) for _, batch in snapshot.iter_images(subset, split) for data in batch]
        (out / subset).mkdir(parents=True, exist_ok=True)
        np.save(out / subset / f"{split}.npy", embed(images))
    return out


def test_mteb_item_level_numbers_equal_lookbench(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("torchvision", reason="MTEB loads an image model only where torchvision is installed")
    from mteb.models.model_implementations import MODEL_REGISTRY

    snapshot_dir = build_snapshot(tmp_path / "snap")
    snapshot = open_snapshot(snapshot_dir)
    vectors = PrecomputedEmbeddings(_lookbench_vectors(snapshot_dir, tmp_path / "emb"))
    ours = evaluate(snapshot, vectors, EvalSettings(ks=KS, resamples=20))
    table = ours.per_query
    relevant = np.array([1 + (i % 3 == 0) for i in range(12)])  # gallery rows sharing the query's item_ID
    hits = np.array(table["item"].to_pylist(), dtype=float)  # (12, 20) item flags of lookbench's ranking
    assert 0 < hits[:, 0].mean() < 1  # some queries find their item at rank 1, some do not

    monkeypatch.setitem(MODEL_REGISTRY, NAME, tiny_meta())
    model = mteb.get_model(NAME)
    (task_result,) = mteb.evaluate(
        model, tasks=lookbench_tasks(snapshot), cache=None, show_progress_bar=False
    ).task_results
    scores = task_result.scores["test"][0]

    discounts = 1 / np.log2(np.arange(2, 12))
    ideal = np.array([discounts[:r].sum() for r in relevant])
    ndcg10 = ((hits[:, :10] * discounts).sum(1) / ideal).mean()
    assert scores["ndcg_at_10"] == pytest.approx(ndcg10, abs=1e-5)
    for k in KS:
        item_recall = ours.result.metrics["overall"][f"item_recall@{k}"].value
        assert scores[f"hit_rate_at_{k}"] == pytest.approx(item_recall, abs=1e-5)
        assert scores[f"recall_at_{k}"] == pytest.approx((hits[:, :k].sum(1) / relevant).mean(), abs=1e-5)
