"""`lookbench legacy import fashion-mnist`: tiny IDX files written here (and the real Debian files when installed)
become a class-level snapshot; missing, truncated and other-version files are one clear error and leave nothing."""

from __future__ import annotations

import gzip
import io
import struct
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
from PIL import Image
from typer.testing import CliRunner

from lookbench.cli.main import app
from lookbench.datasets.legacy.context import ImportOptions
from lookbench.datasets.legacy.fashionmnist import DEBIAN_FOLDER, PINNED
from lookbench.datasets.legacy.registry import import_dataset
from lookbench.errors import DatasetImportError
from lookbench.snapshot import open_snapshot

CATEGORIES = ["t-shirt", "pants", "sweater", "dress", "coat", "sandals", "shirt", "sneakers", "bag", "boots"]
"""Fashion-MNIST's classes 0-9 as taxonomy categories, written out here (not read from the importer)."""


def idx_images(images: np.ndarray) -> bytes:
    return struct.pack(">IIII", 2051, len(images), 28, 28) + images.astype(np.uint8).tobytes()


def idx_labels(labels: np.ndarray) -> bytes:
    return struct.pack(">II", 2049, len(labels)) + labels.astype(np.uint8).tobytes()


def tiny(root: Path, per_class: tuple[int, int] = (3, 5), packed: bool = True) -> Path:
    """Train and t10k files with `per_class` (test, train) images of each class; pixel (0, 0) holds the row."""
    root.mkdir(parents=True)
    for prefix, count in (("t10k", per_class[0]), ("train", per_class[1])):
        labels = np.tile(np.arange(10), count)  # class order 0..9, 0..9, ...
        images = np.zeros((len(labels), 28, 28), dtype=np.uint8)
        images[:, :, :] = (labels * 20)[:, None, None]
        images[:, 0, 0] = np.arange(len(labels)) % 256
        for stem, data in ((f"{prefix}-images-idx3-ubyte", idx_images(images)), (f"{prefix}-labels-idx1-ubyte",
                                                                                  idx_labels(labels))):  # fmt: skip
            if packed:
                (root / f"{stem}.gz").write_bytes(gzip.compress(data))
            else:
                (root / stem).write_bytes(data)
    return root


def fails(src: Path, tmp_path: Path, match: str, **options: object) -> None:
    with pytest.raises(DatasetImportError, match=match):
        import_dataset("fashion-mnist", src, tmp_path / "out", ImportOptions(**options))  # type: ignore[arg-type]
    assert not (tmp_path / "out" / "fashion-mnist").exists()


@pytest.mark.parametrize("packed", [True, False])
def test_tiny_files_become_a_class_level_snapshot(tmp_path: Path, packed: bool) -> None:
    src = tiny(tmp_path / "src", packed=packed)
    target = import_dataset("fashion-mnist", src, tmp_path / "out", ImportOptions(unpinned=True))
    snap = open_snapshot(target)
    assert snap.card is not None and snap.card.protocol == "fashion-mnist"
    assert any("not the pinned release" in note for note in snap.card.notes)
    query = pq.read_table(target / "fashion_mnist" / "query.parquet").to_pylist()
    gallery = pq.read_table(target / "fashion_mnist" / "gallery.parquet").to_pylist()
    # fewer rows than the protocol's 40 / 160 per class: every one is taken, in file order
    assert len(query) == 30 and len(gallery) == 50
    for rows in (query, gallery):
        for number, row in enumerate(rows):
            label = number % 10
            assert row["category"] == CATEGORIES[label] and row["item_ID"] == f"fashion-mnist-class-{label}"
            assert row["main_attribute"] == "" and row["other_attributes"] == []
            with Image.open(io.BytesIO(row["image"]["bytes"])) as image:
                pixels = np.asarray(image)
            assert pixels.shape == (28, 28) and pixels[0, 0] == number and pixels[5, 5] == label * 20
    assert query[0]["source_record"].endswith("t10k-images-idx3-ubyte" + (".gz" if packed else "") + "#0")
    assert not (target / "fashion_mnist" / "train.parquet").exists()


def test_missing_folder_and_missing_file(tmp_path: Path) -> None:
    fails(tmp_path / "nowhere", tmp_path, "dataset folder not found")
    src = tiny(tmp_path / "src")
    (src / "train-labels-idx1-ubyte.gz").unlink()
    fails(src, tmp_path, r"train-labels-idx1-ubyte\(\.gz\) is missing; .*apt-get install dataset-fashion-mnist")


def test_truncated_files(tmp_path: Path) -> None:
    src = tiny(tmp_path / "src")
    path = src / "t10k-images-idx3-ubyte.gz"
    path.write_bytes(path.read_bytes()[:-40])
    fails(src, tmp_path, r"t10k-images-idx3-ubyte.gz: cannot read or decompress it \(truncated or damaged")
    src = tiny(tmp_path / "plain", packed=False)
    path = src / "train-images-idx3-ubyte"
    path.write_bytes(path.read_bytes()[:-100])
    fails(
        src,
        tmp_path,
        r"announces 50 item\(s\) \(39,216 bytes\) but the file holds 39,116 bytes \(truncated\)",
        unpinned=True,
    )


def test_other_versions_and_formats(tmp_path: Path) -> None:
    src = tiny(tmp_path / "src")
    fails(src, tmp_path, r"t10k-images-idx3-ubyte.gz: decompressed sha256 .* is not the pinned .* --unpinned")
    (src / "t10k-labels-idx1-ubyte.gz").write_bytes(gzip.compress(idx_labels(np.arange(12) % 10)))
    fails(src, tmp_path, r"12 labels for 30 images", unpinned=True)
    (src / "t10k-labels-idx1-ubyte.gz").write_bytes(gzip.compress(idx_labels(np.full(30, 11))))
    fails(src, tmp_path, r"label 11 outside Fashion-MNIST's 0-9", unpinned=True)
    (src / "t10k-labels-idx1-ubyte.gz").write_bytes(gzip.compress(idx_images(np.zeros((30, 28, 28)))))
    fails(src, tmp_path, r"IDX magic number 2051, expected 2049", unpinned=True)
    wide = struct.pack(">IIII", 2051, 1, 32, 32) + bytes(32 * 32)
    (src / "t10k-images-idx3-ubyte.gz").write_bytes(gzip.compress(wide))
    fails(src, tmp_path, r"images of 32x32, Fashion-MNIST's are 28x28", unpinned=True)


def test_cli_names_the_problem_without_a_traceback(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["legacy", "import", "fashion-mnist", str(tmp_path / "x"), "-o", str(tmp_path)])
    assert result.exit_code == 2 and "dataset folder not found" in result.output and "Traceback" not in result.output


@pytest.mark.skipif(
    not all((DEBIAN_FOLDER / f"{stem}.gz").is_file() for stem in PINNED),
    reason="Debian's dataset-fashion-mnist is not installed",
)
def test_the_real_debian_files(tmp_path: Path) -> None:
    target = import_dataset("fashion-mnist", DEBIAN_FOLDER, tmp_path / "out", ImportOptions())
    query = pq.read_table(target / "fashion_mnist" / "query.parquet", columns=["category"]).column(0).to_pylist()
    gallery = pq.read_table(target / "fashion_mnist" / "gallery.parquet", columns=["category"]).column(0).to_pylist()
    assert len(query) == 400 and len(gallery) == 1600
    assert {c: query.count(c) for c in CATEGORIES} == dict.fromkeys(CATEGORIES, 40)
    assert {c: gallery.count(c) for c in CATEGORIES} == dict.fromkeys(CATEGORIES, 160)
    assert open_snapshot(target).card.notes[-1].startswith("class-level protocol")  # type: ignore[union-attr]


def records(target: Path, split: str) -> list[str]:
    return pq.read_table(target / "fashion_mnist" / f"{split}.parquet").column("source_record").to_pylist()


def test_the_validation_protocol_takes_training_rows_after_the_test_gallery(tmp_path: Path) -> None:
    src = tiny(tmp_path / "src", per_class=(3, 205))  # training rows 0..2049, class = row % 10
    test = import_dataset("fashion-mnist", src, tmp_path / "out", ImportOptions(unpinned=True))
    validation = import_dataset("fashion-mnist-validation", src, tmp_path / "out", ImportOptions(unpinned=True))
    assert open_snapshot(validation).card.protocol == "fashion-mnist-validation"  # type: ignore[union-attr]
    train = "train-images-idx3-ubyte.gz#"
    # per class c, its k-th training image is row 10 * k + c: queries k = 160..199, gallery k = 200..204 (the rest)
    expected_queries = sorted(10 * k + c for k in range(160, 200) for c in range(10))
    expected_gallery = sorted(10 * k + c for k in range(200, 205) for c in range(10))
    got = {split: records(validation, split) for split in ("query", "gallery")}
    assert all(r.startswith(train) for rows in got.values() for r in rows)
    assert [int(r.removeprefix(train)) for r in got["query"]] == expected_queries
    assert [int(r.removeprefix(train)) for r in got["gallery"]] == expected_gallery
    query = pq.read_table(validation / "fashion_mnist" / "query.parquet").to_pylist()
    assert [row["item_ID"] for row in query] == [f"fashion-mnist-class-{r % 10}" for r in expected_queries]
    tested = set(records(test, "query")) | set(records(test, "gallery"))
    assert len(tested) == 30 + 1600 and not tested & (set(got["query"]) | set(got["gallery"]))


@pytest.mark.skipif(
    not all((DEBIAN_FOLDER / f"{stem}.gz").is_file() for stem in PINNED),
    reason="Debian's dataset-fashion-mnist is not installed",
)
def test_the_real_validation_draw_is_full_and_disjoint_from_the_test(tmp_path: Path) -> None:
    test = import_dataset("fashion-mnist", DEBIAN_FOLDER, tmp_path / "out", ImportOptions())
    validation = import_dataset("fashion-mnist-validation", DEBIAN_FOLDER, tmp_path / "out", ImportOptions())
    for split, per_class in (("query", 40), ("gallery", 160)):
        table = pq.read_table(validation / "fashion_mnist" / f"{split}.parquet", columns=["category"])
        found = table.column(0).to_pylist()
        assert {c: found.count(c) for c in CATEGORIES} == dict.fromkeys(CATEGORIES, per_class)
    used = {r for split in ("query", "gallery") for r in records(validation, split)}
    assert len(used) == 2000 and not used & {r for s in ("query", "gallery") for r in records(test, s)}
    pixels = {
        target: {
            sha
            for split in ("query", "gallery")
            for sha in pq.read_table(target / "fashion_mnist" / f"{split}.parquet").column("image_sha256").to_pylist()
        }
        for target in (test, validation)
    }
    assert not pixels[test] & pixels[validation]  # not one identical image either
