"""The snapshot reader on generated snapshots in the released layout, and its error cases."""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from conftest import make_row, png_bytes
from lookbench.errors import SnapshotError
from lookbench.snapshot import open_snapshot
from lookbench.snapshot.source import parse_hub_uri
from lookbench.snapshot.writer import rows_to_table, write_split

MakeSnapshot = Callable[..., Path]


def basic_spec() -> dict:
    photo = png_bytes(99, 32)
    return {
        "real_studio_flat": {
            "query": [make_row("q1", "Blouse", "Red", ["V-Neck "]), make_row("q2", "skirt", "blue", seed=2)],
            "gallery": [make_row("q1", "blouse", "red", seed=3), make_row("g2", "skirt", "green", seed=4)],
        },
        "real_streetlook": {
            "query": [
                make_row("s1", "pants", "black", raw=photo, seed=5),
                make_row("s2", "shirt", "white", raw=photo, seed=6),
                make_row("s3", "shirt", "white", raw=png_bytes(7, 32), seed=7),
            ],
            "gallery": [make_row("s1", "pants", "black", seed=8)],
        },
        "noise": {"gallery": [make_row(f"n{i}", "dress", "red", seed=10 + i) for i in range(3)]},
    }


def test_reads_layout_and_normalises_labels(make_snapshot: MakeSnapshot) -> None:
    snap = open_snapshot(make_snapshot(basic_spec()))
    assert snap.snapshot_id == "v20260101"
    assert snap.subsets == ["real_studio_flat", "real_streetlook"]
    q = snap.labels("real_studio_flat", "query")
    assert q.category == ["blouse", "skirt"]
    assert q.attribute_set(0) == {"red", "v-neck"}
    corpus = snap.corpus_labels("real_studio_flat")
    assert corpus.item_id == ["q1", "g2", "n0", "n1", "n2"]
    assert snap.num_rows("noise", "gallery") == 3
    assert len(snap.content_hash) == 64


def test_outfits_from_identical_raw_images(make_snapshot: MakeSnapshot) -> None:
    keys = open_snapshot(make_snapshot(basic_spec())).labels("real_streetlook", "query").outfit_key
    assert keys[0] == keys[1] and keys[2] != keys[0] and keys[0] is not None


def test_outfit_id_column_wins(make_snapshot: MakeSnapshot) -> None:
    spec = basic_spec()
    for i, row in enumerate(spec["real_streetlook"]["query"]):
        row["outfit_id"] = f"o{i}"
    keys = open_snapshot(make_snapshot(spec)).labels("real_streetlook", "query").outfit_key
    assert keys == ["o0", "o1", "o2"]


def test_root_with_versions_resolves_to_newest(make_snapshot: MakeSnapshot) -> None:
    make_snapshot(basic_spec(), version="v20250101")
    newest = make_snapshot(basic_spec(), version="v20260101")
    assert open_snapshot(newest.parent).root == newest


def test_noise_shards(make_snapshot: MakeSnapshot) -> None:
    spec = basic_spec()
    del spec["noise"]
    root = make_snapshot(spec)
    for shard in range(2):
        rows = [make_row(f"n{shard}_{i}", "dress", "red", seed=50 + i) for i in range(2)]
        write_split(rows_to_table(rows), root / "noise" / f"gallery-{shard:05d}-of-00002.parquet")
    snap = open_snapshot(root)
    assert snap.num_rows("noise", "gallery") == 4
    assert snap.corpus_labels("real_streetlook").item_id[1:] == ["n0_0", "n0_1", "n1_0", "n1_1"]


def test_validate_with_images(make_snapshot: MakeSnapshot) -> None:
    lines = open_snapshot(make_snapshot(basic_spec())).validate(check_images=True)
    assert "real_studio_flat/query: 2 rows" in lines


def test_undecodable_image_names_row(make_snapshot: MakeSnapshot) -> None:
    spec = basic_spec()
    spec["real_studio_flat"]["gallery"][1]["image"] = {"bytes": b"not an image", "path": "x.png"}
    snap = open_snapshot(make_snapshot(spec))
    with pytest.raises(SnapshotError, match=r"real_studio_flat/gallery row 1 .*does not decode"):
        snap.validate(check_images=True)


def test_missing_column(make_snapshot: MakeSnapshot) -> None:
    root = make_snapshot(basic_spec())
    path = root / "real_studio_flat" / "query.parquet"
    pq.write_table(pq.read_table(path).drop_columns(["main_attribute"]), path)
    with pytest.raises(SnapshotError, match=r"query.parquet: missing column\(s\) main_attribute"):
        open_snapshot(root).labels("real_studio_flat", "query")


def test_empty_split(make_snapshot: MakeSnapshot) -> None:
    root = make_snapshot(basic_spec())
    path = root / "real_studio_flat" / "gallery.parquet"
    pq.write_table(pq.read_table(path).slice(0, 0), path)
    with pytest.raises(SnapshotError, match="empty split: real_studio_flat/gallery"):
        open_snapshot(root).labels("real_studio_flat", "gallery")


def test_repeated_ids_are_several_photos_of_one_product(make_snapshot: MakeSnapshot) -> None:
    spec = basic_spec()
    spec["real_studio_flat"]["gallery"][1]["item_ID"] = "q1"
    snap = open_snapshot(make_snapshot(spec))
    assert snap.labels("real_studio_flat", "gallery").repeated_ids() == {"q1": [0, 1]}
    assert any("1 item_ID(s) on more than one row" in line for line in snap.validate())


def test_unknown_subset_folder(make_snapshot: MakeSnapshot) -> None:
    spec = basic_spec()
    spec["street_flat"] = spec.pop("real_streetlook")
    with pytest.raises(SnapshotError, match="unknown subset 'street_flat'"):
        open_snapshot(make_snapshot(spec))


def test_unknown_requested_subset(make_snapshot: MakeSnapshot) -> None:
    snap = open_snapshot(make_snapshot(basic_spec()))
    with pytest.raises(SnapshotError, match="unknown subset 'studio'"):
        snap.check_subsets(["studio"])
    with pytest.raises(SnapshotError, match="not in snapshot"):
        snap.check_subsets(["aigen_studio"])


def test_missing_split(make_snapshot: MakeSnapshot) -> None:
    spec = basic_spec()
    del spec["real_streetlook"]["gallery"]
    with pytest.raises(SnapshotError, match="missing gallery split of 'real_streetlook'"):
        open_snapshot(make_snapshot(spec)).labels("real_streetlook", "gallery")


def test_not_a_snapshot(tmp_path: Path) -> None:
    with pytest.raises(SnapshotError, match="not a LookBench snapshot"):
        open_snapshot(tmp_path)
    with pytest.raises(SnapshotError, match="not found"):
        open_snapshot(tmp_path / "nope")


def test_hub_offline_message(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(SnapshotError, match=r"HF_HUB_OFFLINE is set.*--snapshot DIR/v20251201"):
        open_snapshot("hf://srpone/look-bench@main/v20251201")
    assert parse_hub_uri("hf://a/b@rev/v1") == ("a/b", "rev", "v1")
    with pytest.raises(SnapshotError, match="bad hub snapshot"):
        parse_hub_uri("hf://only")


def test_writer_metadata_marks_images(make_snapshot: MakeSnapshot) -> None:
    root = make_snapshot(basic_spec())
    meta = pq.read_schema(root / "real_studio_flat" / "query.parquet").metadata[b"huggingface"]
    assert b'"image": {"_type": "Image"}' in meta
    with pytest.raises(SnapshotError, match="empty split"):
        rows_to_table([])
    from PIL import Image

    data = open_snapshot(root).iter_images("real_studio_flat", "query")
    start, images = next(data)
    assert start == 0 and Image.open(io.BytesIO(images[0])).size == (16, 16)
