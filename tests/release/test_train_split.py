"""The builder's `train` split: products first seen before the evaluation window train, whole, and never evaluate."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from releasekit import encode, photo, write_catalog, write_yaml

from lookbench.errors import ReleaseError
from lookbench.release.config import ReleaseConfig, load_config
from lookbench.release.pipeline import run_stages
from lookbench.release.stages.base import StageContext, StageResult, StageStats, samples_of, save_samples
from lookbench.release.stages.collect import CollectStage
from lookbench.release.stages.dedup import DedupStage
from lookbench.release.stages.publish import PublishStage
from lookbench.release.stages.split import SplitStage, SplitStats
from lookbench.snapshot import open_snapshot
from lookbench.train.data import resolve_parts

OLD = datetime(2026, 1, 15, tzinfo=timezone.utc)
NEW = datetime(2026, 5, 20, tzinfo=timezone.utc)
DATES = {"P0": [OLD, OLD], "P1": [OLD, NEW], "P2": [NEW, NEW], "P3": [NEW, NEW], "P4": [OLD], "P5": [NEW]}
"""P1 has one old and one new image: the product is first seen before the window, so all of it trains."""


class DatingStats(StageStats):
    """Rows re-dated."""

    rows: int


class DatingStage:
    """Stands in for a crawl history: dates each image by product and image index (catalog sources stamp `now`)."""

    name = "dating"
    stats_type = DatingStats

    def check(self) -> None:
        pass

    def fingerprint(self, ctx: StageContext) -> str:
        return "dating-v1"

    def run(self, ctx: StageContext, previous: Path | None) -> StageResult:
        samples = sorted(samples_of(previous), key=lambda s: (s.product_id, s.source_url or ""))
        seen: dict[str, int] = {}
        dated = []
        for sample in samples:
            index = seen.get(sample.product_id, 0)
            seen[sample.product_id] = index + 1
            dated.append(replace(sample, first_seen_at=DATES[sample.product_id][index]))
        return StageResult(save_samples(ctx, self.name, dated), DatingStats(rows=len(dated)))


def release_config(tmp_path: Path, **split: object) -> Path:
    products = {pid: [encode(photo(10 * n + k)) for k in range(len(dates))] for n, (pid, dates) in
                enumerate(DATES.items())}  # fmt: skip
    write_catalog(tmp_path / "cat", products)
    data = {
        "release_date": "2026-06-01",
        "output": "out",
        "sources": [{"kind": "catalog", "name": "cat", "path": "cat"}],
        "split": split,
    }
    return write_yaml(tmp_path / "release.yaml", data)


def build(config: ReleaseConfig) -> Path:
    stages = [
        CollectStage(config.sources),
        DedupStage(config.dedup),
        DatingStage(),
        SplitStage(config.split),
        PublishStage(config.publish_section()),
    ]
    run = run_stages(config, stages)
    stats = run.stats(SplitStats)
    assert stats is not None and stats.train_products == (3 if config.split.train_before else 0)
    return config.output / config.version


def product_ids(rows: list[dict]) -> set[str]:
    return {r["product_id"] for r in rows}


def test_products_first_seen_before_the_window_train_whole(tmp_path):
    version = build(load_config(release_config(tmp_path, train_before="2026-05-02")))
    folder = version / "real_studio_flat"
    train = pq.read_table(folder / "train.parquet").to_pylist()
    evaluated = [
        *pq.read_table(folder / "query.parquet").to_pylist(),
        *pq.read_table(folder / "gallery.parquet").to_pylist(),
    ]
    assert product_ids(train) == {"P0", "P1", "P4"} and len(train) == 5
    assert product_ids(evaluated) == {"P2", "P3", "P5"}
    assert {r["item_ID"] for r in train}.isdisjoint(r["item_ID"] for r in evaluated)
    cutoff = datetime(2026, 5, 2, tzinfo=timezone.utc)
    assert all(r["first_seen_at"] >= cutoff for r in evaluated)
    assert min(r["first_seen_at"] for r in train) < cutoff
    by_product = {r["product_id"]: r["item_ID"] for r in train}
    assert sum(r["item_ID"] == by_product["P1"] for r in train) == 2  # both images of P1, one item
    snap = open_snapshot(version)
    assert len(snap.labels("real_studio_flat", "train")) == 5
    assert resolve_parts(snap, ["*"]) == [("real_studio_flat", "train")]
    card = (version / "README.md").read_text()
    assert "| real_studio_flat | 2 | 3 | 5 |" in card
    assert "real_studio_flat/train.parquet" in (version.parent / "README.md").read_text()
    assert "real_studio_flat/train.parquet" in (version / "MANIFEST.json").read_text()


def test_without_train_before_there_is_no_train_split(tmp_path):
    version = build(load_config(release_config(tmp_path)))
    assert not (version / "real_studio_flat" / "train.parquet").exists()
    assert open_snapshot(version).num_rows("real_studio_flat", "query") == 4


@pytest.mark.parametrize(
    ("value", "message"),
    [("2026-07-01", "after release_date"), ("soon", "train_before"), ("2026-13-01", "train_before")],
)
def test_bad_train_before_is_a_config_error(tmp_path, value, message):
    with pytest.raises(ReleaseError, match=message):
        load_config(release_config(tmp_path, train_before=value))
