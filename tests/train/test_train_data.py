"""Training data: repeated item_IDs, classes, targets from the taxonomy, fractions, the sampler."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from trainkit import row, training_snapshot

from lookbench.errors import SnapshotError, TrainError
from lookbench.snapshot.synth_manifest import MANIFEST
from lookbench.train.config import TrainData
from lookbench.train.data import load_training_set
from lookbench.train.labels import MISSING
from lookbench.train.sampler import MPerClassSampler, StepBatches, sample_seed


def test_training_set_reads_repeated_items_with_targets(tmp_path: Path) -> None:
    extra = [
        {**row("odd-1", 50, 0), "category": "Unknown Garment"},
        {**row("odd-2", 51, 0), "main_attribute": "red", "other_attributes": ["blue", "pleats", "glitter"]},
    ]
    snap = training_snapshot(tmp_path, items=4, views=3, extra=extra)
    training = load_training_set([TrainData(snapshot=str(snap))], seed=0, cache_dir=tmp_path / "cache")
    assert len(training) == 14 and training.num_classes == 6
    assert training.class_names[int(training.classes[0])] == "train-0"
    assert len({int(c) for c in training.classes[:3]}) == 1  # three views of one item, one class
    space = training.space
    tshirt = space.categories.index("t-shirt")
    assert training.targets.category[0] == tshirt
    colour = list(space.single_groups).index("colour")
    assert space.single_groups["colour"][training.targets.single[0, colour]] == "red"
    odd_category, odd_colours = len(training) - 2, len(training) - 1
    assert training.targets.category[odd_category] == MISSING  # not in the taxonomy: ignored, counted
    assert training.targets.unknown["category:unknown garment"] == 1
    assert training.targets.single[odd_colours, colour] == MISSING  # two colours on a single-valued group
    details = list(space.multi_groups).index("details")
    assert training.targets.multi_mask[odd_colours, details]
    assert training.targets.multi["details"][odd_colours, space.multi_groups["details"].index("pleats")] == 1
    assert training.targets.unknown["attribute:glitter"] == 1
    assert training.training_cutoff() == "2026-02-04"  # items 0-3 first seen 02-01..02-04
    assert training.sources[0].sources == ["test-shop"]
    assert training.images[0] == training.images.stores[0][0]
    again = load_training_set([TrainData(snapshot=str(snap))], seed=0, cache_dir=tmp_path / "cache")
    assert again.images.stores[0].folder == training.images.stores[0].folder  # packed once, reused


def test_fractions_nest_and_min_images_drops_singletons(tmp_path: Path) -> None:
    extra = [row(f"single-{i}", 60 + i, 0) for i in range(3)]
    snap = training_snapshot(tmp_path, items=20, views=2, extra=extra)
    cache = tmp_path / "cache"
    full = load_training_set([TrainData(snapshot=str(snap), min_images=2)], 1, cache)
    assert full.num_classes == 20
    half = load_training_set([TrainData(snapshot=str(snap), fraction=0.5, min_images=2)], 1, cache)
    quarter = load_training_set([TrainData(snapshot=str(snap), fraction=0.25, min_images=2)], 1, cache)
    assert half.num_classes == 10 and quarter.num_classes == 5
    assert set(quarter.class_names) < set(half.class_names) < set(full.class_names)


def test_missing_snapshot_and_parts_are_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(SnapshotError):
        load_training_set([TrainData(snapshot=str(tmp_path / "nowhere"))], 0, tmp_path / "cache")
    snap = training_snapshot(tmp_path)
    with pytest.raises(SnapshotError, match="missing query split of 'real_studio_flat'"):
        load_training_set([TrainData(snapshot=str(snap), parts=["real_studio_flat/query"])], 0, tmp_path / "c")
    with pytest.raises(TrainError, match="no rows left"):
        load_training_set([TrainData(snapshot=str(snap), min_images=9)], 0, tmp_path / "c")


def test_a_releases_dropped_categories_are_read_and_a_malformed_record_is_one_line(tmp_path: Path) -> None:
    snap = training_snapshot(tmp_path, items=2, views=2)
    assert load_training_set([TrainData(snapshot=str(snap))], 0, tmp_path / "c").sources[0].dropped_categories == []
    (snap / MANIFEST).write_text(json.dumps({"exhausted_categories": "drop", "dropped_categories": ["bag", "heels"]}))
    training = load_training_set([TrainData(snapshot=str(snap))], 0, tmp_path / "c")
    assert training.sources[0].dropped_categories == ["bag", "heels"]
    for bad in ("bag", ["bag", "bag"], ["unicorn"], [1], None):
        (snap / MANIFEST).write_text(json.dumps({"dropped_categories": bad}))
        with pytest.raises(SnapshotError) as error:
            load_training_set([TrainData(snapshot=str(snap))], 0, tmp_path / "c")
        assert str(error.value).startswith(f"{snap / MANIFEST}: dropped_categories must be a list of distinct Synth")
        assert "\n" not in str(error.value)
    for broken in ("{", "[]"):
        (snap / MANIFEST).write_text(broken)
        with pytest.raises(SnapshotError, match=f"{MANIFEST}: not a readable Synth manifest"):
            load_training_set([TrainData(snapshot=str(snap))], 0, tmp_path / "c")


def test_sampler_draws_m_per_class_deterministically() -> None:
    classes = np.repeat(np.arange(10), [1, 2, 3, 4, 5, 1, 2, 3, 4, 5])
    sampler = MPerClassSampler(classes, batch_size=8, m=2, seed=7)
    assert sampler.batches_per_epoch == 2
    seen_epoch: set[int] = set()
    for step in range(2):
        batch = sampler.batch(step)
        assert len(batch) == 8
        per_class = np.bincount(classes[batch], minlength=10)
        assert sorted(per_class[per_class > 0].tolist()) == [2, 2, 2, 2]
        seen_epoch |= set(np.unique(classes[batch]).tolist())
        assert np.array_equal(batch, MPerClassSampler(classes, 8, 2, 7).batch(step))
    assert len(seen_epoch) == 8  # an epoch draws distinct classes
    assert not np.array_equal(sampler.batch(0), MPerClassSampler(classes, 8, 2, 8).batch(0))
    with pytest.raises(TrainError, match="needs 5 distinct items"):
        MPerClassSampler(np.arange(4), batch_size=10, m=2, seed=0)


def test_step_batches_give_ddp_ranks_the_chunks_one_process_accumulates() -> None:
    sampler = MPerClassSampler(np.repeat(np.arange(8), 3), batch_size=8, m=2, seed=1)
    single = list(StepBatches(sampler, 2, 4, accumulation=2, world=1, rank=0))
    ranks = [list(StepBatches(sampler, 2, 4, accumulation=1, world=2, rank=r)) for r in (0, 1)]
    assert len(single) == 4 and all(len(b) == 4 for b in single)
    assert single == [ranks[0][0], ranks[1][0], ranks[0][1], ranks[1][1]]
    assert [r for r, _ in single[0] + single[1]] == sampler.batch(2).tolist()
    assert single[0][0][1] == sample_seed(1, 2, 0)
    with pytest.raises(TrainError, match="does not split"):
        StepBatches(sampler, 0, 1, accumulation=3, world=1, rank=0)
