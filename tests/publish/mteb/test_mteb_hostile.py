"""LookBench as MTEB tasks under hostile snapshots: one clear error naming the subset, split or row, never a task
built on data it cannot serve."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytestmark = pytest.mark.torch
mteb = pytest.importorskip("mteb")

from conftest import make_row, write_snapshot  # noqa: E402
from lookbench.errors import LookBenchError, SnapshotError  # noqa: E402
from lookbench.publish.mteb import lookbench_tasks  # noqa: E402
from lookbench.snapshot import open_snapshot  # noqa: E402
from lookbench.snapshot.card import CARD_FORMAT, CARD_NAME  # noqa: E402
from tiny_mteb import build_snapshot  # noqa: E402


def test_an_unknown_subset_is_refused_by_name(tmp_path: Path) -> None:
    snapshot = open_snapshot(build_snapshot(tmp_path))
    with pytest.raises(LookBenchError, match="real_streetlook"):
        lookbench_tasks(snapshot, ["real_streetlook"])
    with pytest.raises(LookBenchError, match=r"\.\./etc"):
        lookbench_tasks(snapshot, ["../etc"])


def test_a_missing_snapshot_is_one_error_naming_it(tmp_path: Path) -> None:
    with pytest.raises(LookBenchError, match="nowhere"):
        lookbench_tasks(tmp_path / "nowhere")


def test_a_row_without_image_bytes_is_named_when_the_task_loads(tmp_path: Path) -> None:
    rows = [make_row(f"item-{i}", "dress", "red", [], seed=i) for i in range(3)]
    broken = [dict(row) for row in rows]
    broken[1]["image"] = {"bytes": None, "path": "item-1.png"}
    snap = write_snapshot(tmp_path, {"real_studio_flat": {"query": rows, "gallery": broken}}, "v20260201")
    (task,) = lookbench_tasks(open_snapshot(snap))
    with pytest.raises(SnapshotError, match="real_studio_flat/gallery row 1: no image"):
        task.load_data()


def test_hostile_licence_text_never_reaches_the_task_metadata(tmp_path: Path) -> None:
    licences = {}
    for name, text in (("known", "CC-BY-4.0"), ("hostile", "<script>alert(1)</script>")):
        snap = build_snapshot(tmp_path / name)
        card = {
            "format": CARD_FORMAT,
            "name": "tiny",
            "title": "Tiny",
            "licence": text,
            "citation": "@misc{tiny}",
            "homepage": "",
            "subsets": {"real_studio_flat": {"title": "RealStudioFlat"}},
        }
        (snap / CARD_NAME).write_text(json.dumps(card), encoding="utf-8")
        (task,) = lookbench_tasks(open_snapshot(snap))
        licences[name] = task.metadata.license
    assert licences == {"known": "cc-by-4.0", "hostile": "not specified"}  # the card is read, the markup is not kept
