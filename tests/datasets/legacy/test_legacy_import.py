"""Importers: each official layout becomes a snapshot with card, provenance, train split and the right rows."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from legacykit import deepfashion2, df2_detections, fashion200k, fashioniq, inshop, street2shop

from lookbench.datasets.legacy.context import ImportOptions
from lookbench.datasets.legacy.deepfashion2 import Detection, Item, iou, select_query_detections
from lookbench.datasets.legacy.fashion200k import different_word
from lookbench.datasets.legacy.fashioniq import join_captions
from lookbench.datasets.legacy.registry import import_dataset
from lookbench.snapshot import open_snapshot


def rows(path: Path) -> list[dict]:
    return pq.read_table(path).drop_columns(["image"]).to_pylist()


def test_inshop_snapshot_card_provenance_and_train(tmp_path: Path) -> None:
    target = import_dataset("inshop", inshop(tmp_path / "src"), tmp_path / "out", ImportOptions())
    snap = open_snapshot(target)
    assert snap.subsets == ["inshop"] and snap.card is not None and snap.card.protocol == "inshop"
    assert snap.card.subsets["inshop"].splits == {"gallery": 3, "query": 3, "train": 2}
    assert "non-commercial" in snap.card.licence and "liu2016deepfashion" in snap.card.citation
    assert {f.path for f in snap.card.source_files} == {
        "Eval/list_eval_partition.txt",
        "Anno/list_bbox_inshop.txt",
        "Anno/list_attr_cloth.txt",
        "Anno/list_attr_items.txt",
    }
    query = rows(target / "inshop" / "query.parquet")
    assert [r["item_ID"] for r in query] == ["id_A", "id_B", "id_C"]
    first = query[0]
    assert first["category"] == "Dresses" and first["gender"] == "WOMEN"
    assert first["other_attributes"] == ["floral", "a-line"] and first["bbox"] == [2.0, 3.0, 20.0, 22.0]
    assert first["source"] == "inshop" and first["source_record"] == "Eval/list_eval_partition.txt:3"
    assert first["source_file"] == "Img/img/WOMEN/Dresses/id_A/01_1_front.jpg" and len(first["image_sha256"]) == 64
    assert first["license"] == "deepfashion-noncommercial-research"
    assert snap.labels("inshop", "train").item_id == ["id_T", "id_T"]
    assert "inshop/train: 2 rows" in snap.validate(check_images=True)
    readme = (target / "README.md").read_text()
    assert "config_name: inshop" in readme and "Eval/list_eval_partition.txt" in readme


def test_no_train_leaves_the_split_out(tmp_path: Path) -> None:
    target = import_dataset("inshop", inshop(tmp_path / "src"), tmp_path / "out", ImportOptions(train=False))
    assert not (target / "inshop" / "train.parquet").exists()


def test_deepfashion2_ground_truth_boxes(tmp_path: Path) -> None:
    target = import_dataset("deepfashion2", deepfashion2(tmp_path / "src"), tmp_path / "out", ImportOptions())
    query = rows(target / "deepfashion2" / "query.parquet")
    gallery = rows(target / "deepfashion2" / "gallery.parquet")
    assert [(r["item_ID"], r["outfit_id"], r["detector_missed"]) for r in query] == [
        ("1/1", "000001", False),
        ("2/1", "000003", False),
    ]  # the style-0 trousers of consumer photo 1 are no query
    assert [r["item_ID"] for r in gallery] == ["1/1", "1/2", "2/1"]
    assert (
        query[0]["category"] == "short sleeve top"
        and query[0]["source_record"] == "validation/annos/000001.json: item1"
    )
    assert rows(target / "deepfashion2" / "train.parquet")[1]["item_ID"] == "1/0/000001/item2"


def test_deepfashion2_official_detection_choice() -> None:
    items = [Item("item1", 1, "top", 1, (0, 0, 10, 10)), Item("item2", 8, "trousers", 1, (20, 20, 30, 30))]
    far = Detection(1, (50, 50, 60, 60), 0.99, "d0")  # overlaps nothing: argmax of zeros assigns it to item1
    low, high = Detection(1, (0, 0, 9, 9), 0.4, "d1"), Detection(1, (1, 1, 10, 10), 0.7, "d2")
    wrong = Detection(1, (20, 20, 30, 30), 0.9, "d3")  # on the trousers but classified as a top
    chosen = select_query_detections(items, [low, high, wrong])
    assert chosen == {"item1": high}
    assert select_query_detections(items, [far]) == {"item1": far}
    assert iou((0, 0, 10, 10), (5, 0, 15, 10)) == pytest.approx(50 / 150)


def test_deepfashion2_detections_mark_misses(tmp_path: Path) -> None:
    src = deepfashion2(tmp_path / "src")
    options = ImportOptions(train=False, detections=df2_detections(tmp_path / "dets.json"))
    target = import_dataset("deepfashion2", src, tmp_path / "out", options, snapshot_name="df2-detected")
    query = rows(target / "deepfashion2" / "query.parquet")
    assert [(r["item_ID"], r["detector_missed"], r["detection_score"]) for r in query] == [
        ("1/1", False, 0.9),
        ("2/1", True, None),
    ]
    assert query[0]["bbox"] == [5.0, 5.0, 25.0, 25.0]  # the chosen detection's box, as x1 y1 x2 y2
    assert [r["item_ID"] for r in rows(target / "deepfashion2" / "gallery.parquet")] == ["1/1", "1/2", "2/1"]
    assert any("detector_missed" in note for note in open_snapshot(target).card.notes)


def test_street2shop_one_subset_per_category(tmp_path: Path) -> None:
    target = import_dataset("street2shop", street2shop(tmp_path / "src"), tmp_path / "out", ImportOptions())
    snap = open_snapshot(target)
    assert snap.subsets == ["street2shop_dresses", "street2shop_skirts"]
    gallery = rows(target / "street2shop_dresses" / "gallery.parquet")
    assert [r["item_ID"] for r in gallery] == ["1", "2"]  # the repeated (product, photo) record is read once
    query = rows(target / "street2shop_dresses" / "query.parquet")
    assert query[0]["bbox"] == [10.0, 10.0, 40.0, 40.0] and query[0]["source_file"] == "images/000000020.jpg"
    assert snap.labels("street2shop_dresses", "train").item_id == ["3"]
    assert not snap.has_split("street2shop_skirts", "train")


def test_fashion200k_both_protocols(tmp_path: Path) -> None:
    target = import_dataset("fashion200k", fashion200k(tmp_path / "src"), tmp_path / "out", ImportOptions())
    product_q = rows(target / "fashion200k" / "query.parquet")
    product_g = rows(target / "fashion200k" / "gallery.parquet")
    assert [r["item_ID"] for r in product_q] == ["100", "200"]
    assert [r["item_ID"] for r in product_g] == ["100", "200", "300"]
    assert product_q[0]["category"] == "dresses" and product_q[0]["other_attributes"] == ["red", "floral", "dress"]
    composed = rows(target / "composed_fashion200k" / "query.parquet")
    assert composed[0]["modification_text"] == "replace red with blue"
    assert composed[0]["target_ids"] == [
        p for p, d, _ in __import__("legacykit").F200K_TEST if d == "blue floral dress"
    ]
    assert composed[0]["item_ID"] == composed[0]["source_file"]
    assert composed[1]["modification_text"] == "replace floral with striped"
    assert len(rows(target / "composed_fashion200k" / "gallery.parquet")) == 5
    assert [r["item_ID"] for r in rows(target / "fashion200k" / "train.parquet")] == ["900"]


def test_tirg_mod_text_follows_the_reference_code() -> None:
    assert different_word("black biker jacket", "black leather jacket") == "replace biker with leather"
    # no absent word: TIRG's loop variable is left at the last word
    assert different_word("red dress", "red dress long") == "replace dress with long"


def test_fashion200k_without_tirg_queries_notes_it(tmp_path: Path) -> None:
    target = import_dataset(
        "fashion200k", fashion200k(tmp_path / "src", queries=False), tmp_path / "o", ImportOptions()
    )
    snap = open_snapshot(target)
    assert snap.subsets == ["fashion200k"] and any("test_queries.txt" in n for n in snap.card.notes)


def test_fashioniq_composed_subsets(tmp_path: Path) -> None:
    target = import_dataset("fashioniq", fashioniq(tmp_path / "src"), tmp_path / "out", ImportOptions())
    card = json.loads((target / "DATASET.json").read_text())
    assert list(card["subsets"]) == ["composed_dress", "composed_shirt", "composed_toptee"]
    query = rows(target / "composed_dress" / "query.parquet")
    assert query[0]["modification_text"] == "Is green and has no print"  # as CLIP4Cir joins them
    assert query[0]["target_ids"] == ["D1"] and query[0]["item_ID"] == "candidate/D0"
    assert [r["item_ID"] for r in rows(target / "composed_dress" / "gallery.parquet")] == ["D0", "D1", "D2"]
    train = rows(target / "composed_dress" / "train.parquet")
    assert train[0]["item_ID"] == "D3" and train[0]["caption_targets"] == ["D3"]
    assert join_captions(["  a RED top.  ", "b?"]) == "A red top and b"
