"""Bad distributions: every error names the file (and line or record); interrupted imports leave nothing behind."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from legacykit import F200K_TEST, deepfashion2, fashion200k, fashioniq, inshop, street2shop
from typer.testing import CliRunner

from lookbench._util.outfolder import MARKER_NAME, claim_output_folder
from lookbench.cli.main import app
from lookbench.datasets.legacy import registry
from lookbench.datasets.legacy.context import ImportOptions
from lookbench.datasets.legacy.registry import import_dataset
from lookbench.errors import DatasetImportError, SnapshotError
from lookbench.snapshot import open_snapshot

PARTITION = "Eval/list_eval_partition.txt"


def fails(name: str, src: Path, tmp_path: Path, match: str, **options: object) -> None:
    with pytest.raises(DatasetImportError, match=match):
        import_dataset(name, src, tmp_path / "out", ImportOptions(**options))  # type: ignore[arg-type]
    assert not (tmp_path / "out" / name).exists()
    assert not any(p.name.endswith(".staging") for p in (tmp_path / "out").glob(".*"))


def test_missing_list_file(tmp_path: Path) -> None:
    src = inshop(tmp_path / "s")
    (src / PARTITION).unlink()
    fails("inshop", src, tmp_path, "missing list file list_eval_partition.txt")


def test_partition_naming_a_missing_image(tmp_path: Path) -> None:
    src = inshop(tmp_path / "s")
    (src / "Img/img/MEN/Shirts_Polos/id_B/02_2_side.jpg").unlink()
    fails("inshop", src, tmp_path, r"list_eval_partition.txt:6: image .*02_2_side.jpg is missing")
    target = import_dataset("inshop", src, tmp_path / "out", ImportOptions(skip_missing=True))
    card = open_snapshot(target).card
    assert card.subsets["inshop"].splits["gallery"] == 2
    assert any("1 row(s) of Eval/list_eval_partition.txt left out" in note for note in card.notes)


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("x\nimage_name item_id evaluation_status\n", r"list_eval_partition.txt:1: expected the number of rows"),
        ("2\nheader\nimg/WOMEN/Dresses/id_A/01_1_front.jpg id_A query\n", r"line 1 declares 2 rows but the file has 1"),
        ("1\nheader\nimg/a.jpg id_A\n", r"list_eval_partition.txt:3: expected at least 3 fields"),
        ("1\nheader\nimg/W/D/id/a.jpg id_A holdout\n", r":3: evaluation status must be train, query or gallery"),
        ("1\nheader\nimg/a.jpg id_A query\n", r":3: image name 'img/a.jpg' is not img/<GENDER>"),
        ("1\nheader\n" + "x" * (1 << 21) + "\n", r"list_eval_partition.txt:3: line longer than"),
    ],
)
def test_bad_partition_lines(tmp_path: Path, text: str, match: str) -> None:
    src = inshop(tmp_path / "s")
    (src / PARTITION).write_text(text, encoding="utf-8")
    fails("inshop", src, tmp_path, match)


def test_not_utf8_and_bad_numbers(tmp_path: Path) -> None:
    src = inshop(tmp_path / "s")
    (src / PARTITION).write_bytes(b"1\nheader\nimg/\xff.jpg id query\n")
    fails("inshop", src, tmp_path, r"list_eval_partition.txt:3: not UTF-8")
    src = inshop(tmp_path / "t")
    bbox = src / "Anno/list_bbox_inshop.txt"
    bbox.write_text(bbox.read_text().replace("3 1 2 3 20 22", "3 1 two 3 20 22", 1))
    fails("inshop", src, tmp_path, r"list_bbox_inshop.txt:3: expected numbers")


def test_image_that_does_not_decode(tmp_path: Path) -> None:
    src = inshop(tmp_path / "s")
    (src / "Img/img/WOMEN/Dresses/id_A/01_1_front.jpg").write_bytes(b"not an image")
    fails("inshop", src, tmp_path, r"list_eval_partition.txt:3: .*01_1_front.jpg is not a readable image")


def test_malformed_deepfashion2_json(tmp_path: Path) -> None:
    src = deepfashion2(tmp_path / "s")
    (src / "validation/annos/000002.json").write_text('{"source": "shop",\n "pair_id": 1,,}')
    fails("deepfashion2", src, tmp_path, r"validation/annos/000002.json:2: malformed JSON")


@pytest.mark.parametrize(
    ("change", "match"),
    [
        (lambda d: d.pop("pair_id"), r"000001.json: missing field 'pair_id'"),
        (lambda d: d.update(pair_id=True), r"000001.json: field 'pair_id' must be an integer"),
        (lambda d: d.update(source="street"), r"000001.json: source must be 'user' or 'shop'"),
        (lambda d: d["item1"].update(style=-1), r"000001.json: item1: style must be >= 0"),
        (lambda d: d["item1"].update(bounding_box=[5, 5, 5, 9]), r"000001.json: item1: bounding_box .* no area"),
    ],
)
def test_bad_deepfashion2_records(tmp_path: Path, change, match: str) -> None:
    src = deepfashion2(tmp_path / "s")
    path = src / "validation/annos/000001.json"
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))
    fails("deepfashion2", src, tmp_path, match)


def test_bad_detections(tmp_path: Path) -> None:
    src = deepfashion2(tmp_path / "s")
    dets = tmp_path / "dets.json"
    dets.write_text(json.dumps([{"image_id": 1, "category_id": 1, "bbox": [1, 2, 0, 4], "score": 0.5}]))
    fails("deepfashion2", src, tmp_path, r"dets.json:1: record 0: bbox .* no area", detections=dets)


def test_street2shop_missing_pairs_file(tmp_path: Path) -> None:
    src = street2shop(tmp_path / "s")
    (src / "meta/json/test_pairs_skirts.json").unlink()
    fails("street2shop", src, tmp_path, "missing list file test_pairs_skirts.json")


def test_fashion200k_bad_lines(tmp_path: Path) -> None:
    src = fashion200k(tmp_path / "s")
    (src / "test_queries.txt").write_text("women/dresses/x/1/1_0.jpeg women/dresses/x/2/2_0.jpeg\n")
    fails("fashion200k", src, tmp_path, r"test_queries.txt:1: women/dresses/x/1/1_0.jpeg is not an image of the test")
    labels = src / "labels/dress_test_detect_all.txt"
    labels.write_text(labels.read_text() + "women/dresses/a/1/1.jpeg\tnot-a-score\tred dress\n")
    fails("fashion200k", src, tmp_path, r"dress_test_detect_all.txt:6: detection score 'not-a-score'")


def _captions(src: Path, records: object, category: str = "shirt") -> Path:
    path = src / f"captions/cap.{category}.val.json"
    path.write_text(json.dumps(records, indent=2))
    return path


def _record(**fields: object) -> dict[str, object]:
    return {"candidate": "S0", "target": "S1", "captions": ["a", "b"], **fields}


@pytest.mark.parametrize(
    ("records", "match"),
    [
        (
            [_record(), _record(target="S9")],
            r"captions/cap.shirt.val.json:10: record 1: image S9 is not in image_splits/split.shirt.val.json",
        ),
        ([_record(captions=["only one"])], r"val.json:2: record 0: captions must be a list of two"),
        ([_record(captions=["a", 7])], r"val.json:2: record 0: captions must be a list of two"),
        ([_record(captions=[" . ", "?"])], r"val.json:2: record 0: both captions are empty"),
        ([_record(captions=["x" * 5000, "b"])], r"val.json:2: record 0: the captions are 5,006"),
        ([{"candidate": "S0", "captions": ["a", "b"]}], r"val.json:2: record 0: missing field 'target'"),
        ([_record(candidate=3)], r"val.json:2: record 0: field 'candidate' must be text"),
        ({"candidate": "S0"}, r"cap.shirt.val.json: expected a JSON list of caption records, got dict"),
    ],
)
def test_fashioniq_bad_caption_records(tmp_path: Path, records: object, match: str) -> None:
    src = fashioniq(tmp_path / "s")
    _captions(src, records)
    fails("fashioniq", src, tmp_path, match)


def test_fashioniq_bad_files(tmp_path: Path) -> None:
    src = fashioniq(tmp_path / "s")
    _captions(src, []).write_text('[\n  {"candidate": "S0",\n   "target": }\n]')
    fails("fashioniq", src, tmp_path, r"cap.shirt.val.json:3: malformed JSON")
    src = fashioniq(tmp_path / "t")
    (src / "image_splits/split.dress.val.json").write_text(json.dumps(["D0", "../D1"], indent=1))
    fails("fashioniq", src, tmp_path, r"split.dress.val.json:3: record 1: expected an image id .*'../D1'")
    src = fashioniq(tmp_path / "u")
    (src / "images/D1.png").unlink()
    fails("fashioniq", src, tmp_path, r"image_splits/split.dress.val.json:1: record 1: image .*D1.png is missing")
    src = fashioniq(tmp_path / "v")
    (src / "image_splits/split.toptee.val.json").unlink()
    (src / "image_splits/split.toptee.val.json").mkdir()
    fails("fashioniq", src, tmp_path, r"missing list file split.toptee.val.json")


def test_tirg_bad_queries(tmp_path: Path) -> None:
    src = fashion200k(tmp_path / "s")
    queries = src / "test_queries.txt"
    real = F200K_TEST[0][0]
    cases = {
        f"{real} women/dresses/x/2/2_0.jpeg\n": r"test_queries.txt:1: women/dresses/x/2/2_0.jpeg is not an image of",
        f"{real} {F200K_TEST[1][0]} extra\n": r"test_queries.txt:1: expected 'source_path target_path'",
        f"{real} {F200K_TEST[3][0]}\n{F200K_TEST[4][0]} {F200K_TEST[4][0]}\n": (
            r"test_queries.txt:2: the target's caption is the source's and no other test image has it"
        ),
    }
    for text, match in cases.items():
        queries.write_text(text)
        fails("fashion200k", src, tmp_path, match)
    labels = src / "labels/dress_test_detect_all.txt"
    labels.write_text(labels.read_text().replace("red floral dress", " "))
    queries.write_text(f"{real} {F200K_TEST[2][0]}\n")
    fails("fashion200k", src, tmp_path, r"test_queries.txt:1: .*100_0.jpeg has an empty description \(.*txt:1\)")


def test_tirg_target_image_missing(tmp_path: Path) -> None:
    src = fashion200k(tmp_path / "s")
    (src / F200K_TEST[3][0]).unlink()  # the first query's target, the only other "blue floral dress" is 200_0
    fails("fashion200k", src, tmp_path, r"dress_test_detect_all.txt:4: image .*200_1.jpeg is missing")
    target = import_dataset("fashion200k", src, tmp_path / "out", ImportOptions(skip_missing=True))
    rows = open_snapshot(target).labels("composed_fashion200k", "query")
    assert len(rows) == 2  # the query stays; its absent target scores 0 (a warning at eval)
    queries = pq.read_table(target / "composed_fashion200k" / "query.parquet").to_pylist()
    assert F200K_TEST[3][0] in queries[0]["target_ids"]


def test_interrupted_import_leaves_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    src = inshop(tmp_path / "s")
    with claim_output_folder(tmp_path / "out", "legacy import").recording():  # as the command does: it lists inshop
        target = import_dataset("inshop", src, tmp_path / "out", ImportOptions())
    before = (target / "MANIFEST.json").read_bytes()
    with pytest.raises(DatasetImportError, match="already exists"):
        import_dataset("inshop", src, tmp_path / "out", ImportOptions())

    def interrupted(ctx):
        registry._inshop(ctx)
        raise KeyboardInterrupt

    dataset = registry.DATASETS["inshop"]
    monkeypatch.setitem(
        registry.DATASETS, "inshop", registry.LegacyDataset(**{**dataset.__dict__, "importer": interrupted})
    )
    with pytest.raises(KeyboardInterrupt):
        import_dataset("inshop", src, tmp_path / "out", ImportOptions(), overwrite=True)
    assert (target / "MANIFEST.json").read_bytes() == before  # the earlier snapshot is untouched
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [MARKER_NAME, "inshop"]
    open_snapshot(target)  # and still verifies against its manifest


def test_bad_dataset_card(tmp_path: Path) -> None:
    target = import_dataset("inshop", inshop(tmp_path / "s"), tmp_path / "out", ImportOptions(train=False))
    card = json.loads((target / "DATASET.json").read_text())
    card["subsets"] = {"In Shop": card["subsets"]["inshop"]}
    (target / "DATASET.json").write_text(json.dumps(card))
    with pytest.raises(SnapshotError, match=r"DATASET.json: field subsets: .*lowercase"):
        open_snapshot(target, verify=False)
    card["subsets"] = {"inshop": {"title": "x", "splits": {}}}
    card["protocol"] = "imagenet"
    (target / "DATASET.json").write_text(json.dumps(card))
    from lookbench.evaluation.protocols import protocol_of

    with pytest.raises(SnapshotError, match="names protocol 'imagenet'"):
        protocol_of(open_snapshot(target, verify=False))


def test_cli_import_list_and_errors(tmp_path: Path) -> None:
    runner = CliRunner()
    src = inshop(tmp_path / "s")
    done = runner.invoke(app, ["legacy", "import", "inshop", str(src), "--out", str(tmp_path / "out")])
    assert done.exit_code == 0, done.output
    assert "lookbench eval --snapshot" in done.output
    listed = runner.invoke(app, ["legacy", "list"])
    assert listed.exit_code == 0 and "fashioniq" in listed.output
    (src / PARTITION).unlink()
    failed = runner.invoke(app, ["legacy", "import", "inshop", str(src), "--out", str(tmp_path / "o2")])
    assert failed.exit_code == 2 and "missing list file list_eval_partition.txt" in failed.output
    assert "Traceback" not in failed.output
    unknown = runner.invoke(app, ["legacy", "import", "imagenet", str(src), "--out", str(tmp_path / "o3")])
    assert unknown.exit_code == 2 and "unknown dataset 'imagenet'" in unknown.output
    wrong = runner.invoke(
        app, ["legacy", "import", "inshop", str(src), "--out", str(tmp_path / "o4"), "--detections", "x"]
    )
    assert wrong.exit_code == 2


def test_street2shop_pairs_without_their_retrieval_file(tmp_path: Path) -> None:
    src = street2shop(tmp_path / "s")
    meta = src / "meta/json"
    (meta / "retrieval_skirts.json").unlink()  # its test_pairs_skirts.json stays: the category would be dropped
    fails("street2shop", src, tmp_path, "missing list file retrieval_skirts.json for test_pairs_skirts.json")


def test_fashion200k_tirg_queries_naming_a_missing_file(tmp_path: Path) -> None:
    src = fashion200k(tmp_path / "s")
    missing = tmp_path / "elsewhere" / "test_queries.txt"
    fails("fashion200k", src, tmp_path, f"--tirg-queries {missing}: no such file", tirg_queries=missing)


def test_fashioniq_non_utf8_byte_names_the_line(tmp_path: Path) -> None:
    src = fashioniq(tmp_path / "s")
    path = _captions(src, [_record(), _record(captions=["cafX", "b"])])
    data = path.read_bytes()
    at = data.index(b"cafX")
    path.write_bytes(data.replace(b"cafX", b"caf\xe9"))  # Latin-1, not UTF-8
    line = data[:at].count(b"\n") + 1
    assert line > 1
    fails("fashioniq", src, tmp_path, rf"cap.shirt.val.json:{line}: not UTF-8 text \(byte 0xe9")
