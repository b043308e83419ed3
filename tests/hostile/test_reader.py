"""Hostile and unusual snapshots: what can be scored is read and scored right; what cannot fails cleanly."""

from __future__ import annotations

import io
import json
import os
import sys
import unicodedata
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hostilekit import (
    DIM,
    clean_error,
    evaluate,
    invoke,
    make_snapshot,
    rewrite_split,
    snapshot_spec,
    vectors,
    write_vectors,
)
from PIL import Image

from conftest import make_row
from lookbench.errors import SnapshotError
from lookbench.snapshot import open_snapshot
from lookbench.snapshot.source import parse_hub_uri

OPTIONAL = ["raw_image", "bbox", "task", "difficulty"]


def test_only_the_five_required_columns(tmp_path: Path) -> None:
    snap = make_snapshot(tmp_path / "s")
    for path in snap.rglob("*.parquet"):
        table = pq.read_table(path)
        if "query" in path.name:  # optional columns present but null in every row
            for name in OPTIONAL:
                index = table.schema.get_field_index(name)
                table = table.set_column(index, name, pa.nulls(table.num_rows, table.schema.field(name).type))
            pq.write_table(table, path)
        else:
            pq.write_table(table.drop_columns(OPTIONAL), path)
    assert invoke("snapshot", "validate", str(snap), "--images").exit_code == 0
    result = evaluate(snap, write_vectors(tmp_path / "emb", vectors()), tmp_path / "r.json")
    assert result["metrics"]["overall"]["item_recall@1"]["value"] == 1.0
    report = invoke("report", str(tmp_path / "r.json"), "--out", str(tmp_path / "report"))  # no raw photos to show
    assert report.exit_code == 0, report.output


def test_repeated_item_ids_are_several_photos(tmp_path: Path) -> None:
    spec = snapshot_spec()
    studio = spec["real_studio_flat"]
    studio["query"].append(make_row("a", "dress", "red", ["v-neck"], seed=20))  # a second photo of product a
    studio["gallery"][1]["item_ID"] = "a"  # ... and a second gallery photo of it
    snap = make_snapshot(tmp_path / "s", spec)
    arrays = vectors()
    e = np.eye(DIM, dtype=np.float32)
    arrays["real_studio_flat/query"] = np.stack([e[0], e[1], e[2]])  # the new query finds gallery row 1
    validated = invoke("snapshot", "validate", str(snap))
    assert validated.exit_code == 0, validated.output
    assert "1 item_ID(s) on more than one row" in validated.output
    result = evaluate(snap, write_vectors(tmp_path / "emb", arrays), tmp_path / "r.json")
    assert result["metrics"]["real_studio_flat"]["item_recall@1"]["value"] == 1.0


def test_ids_compare_canonically_across_types(tmp_path: Path) -> None:
    snap = make_snapshot(tmp_path / "s")
    ids = {"query": [1.0, 2.0], "gallery": [1, 3, 2]}  # float query ids, int gallery ids
    for split, values in ids.items():
        path = snap / "real_studio_flat" / f"{split}.parquet"
        table = pq.read_table(path)
        index = table.schema.get_field_index("item_ID")
        rewrite_split(path, table.set_column(index, "item_ID", pa.array(values)))
    street = snap / "real_streetlook" / "gallery.parquet"  # string ids with stray spaces
    table = pq.read_table(street)
    index = table.schema.get_field_index("item_ID")
    rewrite_split(street, table.set_column(index, "item_ID", pa.array([" s1", "s2 "])))
    result = evaluate(snap, write_vectors(tmp_path / "emb", vectors()), tmp_path / "r.json")
    assert result["metrics"]["real_studio_flat"]["item_recall@1"]["value"] == 1.0
    assert result["metrics"]["real_streetlook"]["item_recall@1"]["value"] == 1.0


def _set_column(path: Path, name: str, values: pa.Array) -> None:
    table = pq.read_table(path)
    rewrite_split(path, table.set_column(table.schema.get_field_index(name), name, values))


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        (  # list<string> with null rows, null items and blanks: the short way
            pa.array([[" V-Neck", None, "", "Brodé"], None, []], pa.list_(pa.string())),
            [["v-neck", "brodé"], [], []],
        ),
        (  # list<string> without null rows (items cut at the offsets): null items, blanks, decomposed accents
            pa.array([[" V-Neck", None, "", "Brode\u0301"], ["  "], ["A", "a"]], pa.list_(pa.string())),
            [["v-neck", "brodé"], [], ["a", "a"]],
        ),
        (  # large lists of dictionary-encoded text, no blanks
            pa.array([["Lace"], ["Silk ", "LACE"], []], pa.large_list(pa.dictionary(pa.int32(), pa.string()))),
            [["lace"], ["silk", "lace"], []],
        ),
        (  # a sliced list array: offsets that do not start at 0
            pa.array([["x"], ["Lace", "Bow"], ["Silk"], [], ["y"]], pa.list_(pa.string())).slice(1, 3),
            [["lace", "bow"], ["silk"], []],
        ),
        (  # JSON text, blank text and null: each row the checked way
            pa.array(['["Lace", " "]', " ", None]),
            [["lace"], [], []],
        ),
        (  # lists of numbers: compared as text
            pa.array([[1, 2], [3], None], pa.list_(pa.int64())),
            [["1", "2"], ["3"], []],
        ),
    ],
)
def test_other_attributes_read_as_normalised_lists(tmp_path: Path, values: pa.Array, expected: list) -> None:
    snap = make_snapshot(tmp_path / "s")
    _set_column(snap / "real_studio_flat" / "gallery.parquet", "other_attributes", values)
    assert open_snapshot(snap).labels("real_studio_flat", "gallery").other_attributes == expected


@pytest.mark.parametrize(
    ("column", "values", "problem"),
    [
        (
            "other_attributes",
            pa.array(['["a"]', "[not json", None]),
            "row 1: other_attributes must be a list of strings, got text '[not json'",
        ),
        (
            "other_attributes",
            pa.array(['["a"]', None, '{"a": 1}']),
            """row 2: other_attributes must be a list of strings, got text '{"a": 1}'""",
        ),
        ("item_ID", pa.array(["a", "x", " "]), "row 2: item_ID is empty"),
        ("item_ID", pa.array(["a", None, "b"]), "row 1: item_ID is empty"),
    ],
)
def test_unreadable_label_rows_are_named(tmp_path: Path, column: str, values: pa.Array, problem: str) -> None:
    snap = make_snapshot(tmp_path / "s")
    path = snap / "real_studio_flat" / "gallery.parquet"
    _set_column(path, column, values)
    with pytest.raises(SnapshotError) as caught:
        open_snapshot(snap).labels("real_studio_flat", "gallery")
    assert str(caught.value) == f"{path}: {problem}"


def test_labels_compare_after_unicode_normalisation(tmp_path: Path) -> None:
    spec = snapshot_spec()
    nfc, nfd = "robe d’été", unicodedata.normalize("NFD", "Robe d’Été ")
    assert nfc != nfd.strip().lower()
    spec["real_studio_flat"]["query"][0]["category"] = nfd
    spec["real_studio_flat"]["gallery"][0]["category"] = nfc
    spec["real_studio_flat"]["gallery"][1]["category"] = nfc
    snap = make_snapshot(tmp_path / "s", spec)
    result = evaluate(snap, write_vectors(tmp_path / "emb", vectors()), tmp_path / "r.json")
    assert result["metrics"]["real_studio_flat"]["coarse_recall@1"]["value"] == 1.0
    assert result["metrics"]["real_studio_flat"]["fine_recall@1"]["value"] == 1.0


def test_class_label_columns_are_decoded(tmp_path: Path) -> None:
    snap = make_snapshot(tmp_path / "s")
    orders = {"query": ["skirt", "dress"], "gallery": ["dress", "skirt", "blouse"]}  # each file its own class order
    for split, names in orders.items():
        path = snap / "real_studio_flat" / f"{split}.parquet"
        table = pq.read_table(path)
        codes = [names.index(c) for c in table["category"].to_pylist()]
        index = table.schema.get_field_index("category")
        table = table.set_column(index, "category", pa.array(codes, pa.int64()))
        meta = json.loads(table.schema.metadata[b"huggingface"])
        meta["info"]["features"]["category"] = {"names": names, "_type": "ClassLabel"}
        rewrite_split(path, table, {b"huggingface": json.dumps(meta).encode()})
    snapshot = open_snapshot(snap)
    assert snapshot.labels("real_studio_flat", "query").category == ["dress", "skirt"]
    result = evaluate(snap, write_vectors(tmp_path / "emb", vectors()), tmp_path / "r.json")
    assert result["metrics"]["real_studio_flat"]["coarse_recall@1"]["value"] == 1.0
    assert result["warnings"] == []


def test_all_null_main_attribute_is_warned(tmp_path: Path) -> None:
    spec = snapshot_spec()
    for row in spec["real_streetlook"]["gallery"]:
        row["main_attribute"] = None
    snap = make_snapshot(tmp_path / "s", spec)
    out = tmp_path / "r.json"
    run = invoke(
        "eval", "-s", str(snap), "-m", f"embeddings:{write_vectors(tmp_path / 'e', vectors())}", "-o", str(out)
    )
    assert run.exit_code == 0, run.output
    text = " ".join(run.output.split())
    assert "warning: real_streetlook/gallery: main_attribute is empty in every row" in text
    assert any("main_attribute is empty" in w for w in json.loads(out.read_text())["warnings"])


def test_non_string_categories_are_warned(tmp_path: Path) -> None:
    snap = make_snapshot(tmp_path / "s")
    for split, codes in (("query", [1, 2]), ("gallery", [1.0, 3.0, 2.0])):
        path = snap / "real_studio_flat" / f"{split}.parquet"
        table = pq.read_table(path)
        index = table.schema.get_field_index("category")
        rewrite_split(path, table.set_column(index, "category", pa.array(codes)))
    out = tmp_path / "r.json"
    result = evaluate(snap, write_vectors(tmp_path / "e", vectors()), out)
    assert result["metrics"]["real_studio_flat"]["coarse_recall@1"]["value"] == 1.0  # 1 and 1.0 agree
    assert any("category is stored as double, not text" in w for w in result["warnings"])
    assert any("category is stored as int64, not text" in w for w in result["warnings"])


def test_query_categories_absent_from_the_gallery_are_counted(tmp_path: Path) -> None:
    spec = snapshot_spec()
    spec["real_studio_flat"]["query"][1]["category"] = "cape"
    snap = make_snapshot(tmp_path / "s", spec)
    validated = invoke("snapshot", "validate", str(snap))
    assert validated.exit_code == 0
    expected = "real_studio_flat: 1 of 2 queries have a category absent from the gallery ('cape')"
    assert expected in " ".join(validated.output.split())
    result = evaluate(snap, write_vectors(tmp_path / "e", vectors()), tmp_path / "r.json")
    assert any(w.startswith(expected) for w in result["warnings"])


@pytest.mark.parametrize(
    ("dtype", "scale"), [(np.float32, 1e20), (np.float32, 1e-30), (np.float64, 1e100), (np.float64, 1e-200)]
)
def test_embedding_scale_does_not_change_scores(tmp_path: Path, dtype: type, scale: float) -> None:
    snap = make_snapshot(tmp_path / "s")
    rng = np.random.default_rng(0)
    base = {key: array + 0.05 * rng.random(array.shape, dtype=np.float32) for key, array in vectors().items()}
    reference = evaluate(snap, write_vectors(tmp_path / "ref", base), tmp_path / "ref.json")
    scaled = {key: (array.astype(dtype) * dtype(scale)).astype(dtype) for key, array in base.items()}
    result = evaluate(snap, write_vectors(tmp_path / "scaled", scaled), tmp_path / "scaled.json")
    assert result["metrics"] == reference["metrics"]


@pytest.mark.parametrize(
    ("value", "problem"), [(np.nan, "NaN or infinite"), (np.inf, "NaN or infinite"), (0.0, "zero")]
)
def test_only_nan_inf_and_zero_rows_are_errors(tmp_path: Path, value: float, problem: str) -> None:
    snap = make_snapshot(tmp_path / "s")
    arrays = vectors()
    arrays["noise/gallery"] = np.stack([np.full(DIM, 1e-40, np.float32), np.eye(DIM, dtype=np.float32)[7]])
    assert evaluate(snap, write_vectors(tmp_path / "tiny", arrays), tmp_path / "tiny.json")  # subnormal, not zero
    if value == 0.0:
        arrays["real_studio_flat/gallery"][2] = 0.0
    else:
        arrays["real_studio_flat/gallery"][2, 1] = value
    emb = write_vectors(tmp_path / "bad", arrays)
    run = invoke("eval", "-s", str(snap), "-m", f"embeddings:{emb}", "-o", str(tmp_path / "bad.json"))
    clean_error(run, str(emb / "real_studio_flat" / "gallery.npy"), problem, "row(s) 2")


def _truncated_jpeg() -> bytes:
    buf = io.BytesIO()
    Image.fromarray(np.random.default_rng(0).integers(0, 255, (64, 64, 3), dtype=np.uint8)).save(buf, "JPEG")
    return buf.getvalue()[:-400]


def test_validate_images_decodes_like_eval(tmp_path: Path) -> None:
    spec = snapshot_spec()
    spec["real_studio_flat"]["gallery"][1]["image"] = {"bytes": _truncated_jpeg(), "path": "x.jpg"}
    snap = make_snapshot(tmp_path / "s", spec)
    run = invoke("snapshot", "validate", str(snap), "--images")
    clean_error(run, "real_studio_flat/gallery row 1", "image does not decode")


def test_corrupt_parquet_in_eval_is_a_clean_error(tmp_path: Path) -> None:
    snap = make_snapshot(tmp_path / "s")
    path = snap / "real_studio_flat" / "gallery.parquet"
    data = bytearray(path.read_bytes())
    footer = int.from_bytes(data[-8:-4], "little") + 8
    for offset in range(4, len(data) - footer, 7):  # the data pages; the footer (schema) stays readable
        data[offset] ^= 0x5A
    path.write_bytes(bytes(data))
    run = invoke("eval", "-s", str(snap), "-m", f"embeddings:{write_vectors(tmp_path / 'e', vectors())}")
    clean_error(run, str(path), "not a readable parquet file")
    clean_error(invoke("snapshot", "validate", str(snap)), str(path), "not a readable parquet file")


def test_empty_query_split_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    snap = make_snapshot(tmp_path / "s")
    path = snap / "real_studio_flat" / "query.parquet"  # the first split embedded
    pq.write_table(pq.read_table(path).slice(0, 0), path)
    name = f"thumbs_{os.getpid()}_{tmp_path.name.replace('-', '_')}"
    (tmp_path / f"{name}.py").write_text(
        "import numpy as np\n"
        "class Thumbs:\n"
        "    model_id, revision = 'thumbs', '1'\n"
        "    def embed(self, images):\n"
        "        return np.stack([np.asarray(im.resize((4, 4)), np.float32).ravel() + 1 for im in images])\n"
        "def make():\n"
        "    return Thumbs()\n"
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    run = invoke("eval", "-s", str(snap), "-m", f"python:{name}:make", "--cache-dir", str(tmp_path / "c"))
    clean_error(run, "empty split: real_studio_flat/query")
    sys.modules.pop(name, None)


def test_manifest_paths_stay_inside_the_snapshot(tmp_path: Path) -> None:
    snap = make_snapshot(tmp_path / "s")
    secret = tmp_path / "secret.bin"
    secret.write_bytes(b"x" * 7919)
    from lookbench.snapshot.manifest import describe_files

    files = describe_files(snap)
    files["../../secret.bin"] = {"sha256": "0" * 64, "bytes": 1}
    files[str(secret)] = {"sha256": "0" * 64, "bytes": 1}
    (snap / "MANIFEST.json").write_text(json.dumps({"files": files}))
    run = invoke("snapshot", "verify", str(snap))
    text = clean_error(run, "'../../secret.bin': not a path inside the snapshot")
    assert "7919" not in text and f"{str(secret)!r}: not a path inside the snapshot" in text
    with pytest.raises(SnapshotError, match="not a path inside the snapshot"):
        open_snapshot(snap)


def test_hub_locations_in_the_filesystem_form(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert parse_hub_uri("hf://datasets/srpone/look-bench@main/v20251201") == ("srpone/look-bench", "main", "v20251201")
    assert parse_hub_uri("hf://datasets/srpone/look-bench@refs%2Fpr%2F3") == ("srpone/look-bench", "refs/pr/3", None)
    assert parse_hub_uri("hf://datasets/o/n@refs/pr/3/v1/x") == ("o/n", "refs/pr/3", "v1/x")
    assert parse_hub_uri("hf://srpone/look-bench@main/v20251201") == ("srpone/look-bench", "main", "v20251201")
    run = invoke("snapshot", "validate", "hf://datasets/srpone/look-bench@main/v20251201")
    clean_error(run, "HF_HUB_OFFLINE is set", "--repo-type dataset", "--snapshot DIR/v20251201")
    for bad in ("hf://models/o/n", "hf://datasets/o/n/../x", "hf://datasets/o"):
        with pytest.raises(SnapshotError, match="bad hub snapshot"):
            parse_hub_uri(bad)
