"""Fashion-MNIST (Zalando, 2017) as a class-level retrieval snapshot: an out-of-domain check on real photographs.

Protocol `fashion-mnist`: the queries are the first 40 images of each class in the test file (400), the gallery the
first 160 of each class in the training file (1,600), in file order. Fashion-MNIST has no item identities, so
relevance is class-level: a row's category is its class mapped to the taxonomy, its item_ID the class, and it has no
attributes, so Item, Coarse and (strict) Fine recall all mean "an image of the query's class". The files are read as
Debian's `dataset-fashion-mnist` installs them (`/usr/share/datasets/fashion-mnist/*-idx?-ubyte.gz`) or unpacked;
their decompressed content must be the pinned release unless `--unpinned` (MNIST digits share the format).

Protocol `fashion-mnist-validation` (dataset `fashion-mnist-validation`), for choosing a recipe without touching the
test protocol: the same shape, drawn only from the training file after the test protocol's gallery: per class, the
training images 161-200 (in file order) are the queries (400) and 201-360 the gallery (1,600). No image of it is an
image of `fashion-mnist` (the test file is not read into it, and the training rows are disjoint)."""

from __future__ import annotations

import gzip
import io
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
from PIL import Image

from lookbench._util.hashing import sha256_hex
from lookbench.datasets.legacy.context import ImportContext
from lookbench.datasets.legacy.images import StoredImage
from lookbench.errors import DatasetImportError
from lookbench.snapshot.card import SubsetCard

SUBSET = "fashion_mnist"
EXTRAS = {"fashion_mnist_class": pa.string()}
QUERIES_PER_CLASS = 40
GALLERY_PER_CLASS = 160
DEBIAN_FOLDER = Path("/usr/share/datasets/fashion-mnist")
CLASSES: tuple[tuple[str, str], ...] = (
    ("T-shirt/top", "t-shirt"),
    ("Trouser", "pants"),
    ("Pullover", "sweater"),
    ("Dress", "dress"),
    ("Coat", "coat"),
    ("Sandal", "sandals"),
    ("Shirt", "shirt"),
    ("Sneaker", "sneakers"),
    ("Bag", "bag"),
    ("Ankle boot", "boots"),
)
"""Fashion-MNIST's ten classes in label order, each with the taxonomy category it is scored as."""
IMAGES_MAGIC = 2051
LABELS_MAGIC = 2049
SIDE = 28
PINNED: dict[str, str] = {
    "train-images-idx3-ubyte": "c59f468a2f672dc815687fe0f83887768d799fd8a3f3276145d20f83aa44d888",
    "train-labels-idx1-ubyte": "bad3541b69d912435c50bb6ba87bec294ff4f6a2e1246121d8633921760443d9",
    "t10k-images-idx3-ubyte": "5b4141f0afbad91edebe8549f8fcffe087ea10ca49f1dbef5c9a5cd8815ce37b",
    "t10k-labels-idx1-ubyte": "0402a96d92fd2663957122ceb108a494c5af83dab82d92729df917d7dec38c34",
}
"""sha256 of each decompressed file of the release (as Debian's dataset-fashion-mnist 0.0~git20200523 ships it)."""


@dataclass(frozen=True)
class IdxPart:
    """The images and labels of one of the two files pairs (train or t10k)."""

    images: np.ndarray
    labels: np.ndarray
    images_path: Path
    prefix: str
    """`train` or `t10k`: the stored image names start with it."""


def _find(ctx: ImportContext, stem: str) -> Path:
    for name in (f"{stem}.gz", stem):
        path = ctx.dist.root / name
        if path.is_file():
            return path
    raise DatasetImportError(
        f"{ctx.dist.root}: {stem}(.gz) is missing; expected the four Fashion-MNIST IDX files "
        f"(Debian: apt-get install dataset-fashion-mnist, then {DEBIAN_FOLDER})"
    )


def _content(ctx: ImportContext, path: Path) -> bytes:
    ctx.dist.record(path)
    try:
        raw = path.read_bytes()
        return gzip.decompress(raw) if path.suffix == ".gz" else raw
    except (OSError, EOFError, zlib.error) as exc:
        raise DatasetImportError(f"{path}: cannot read or decompress it (truncated or damaged? {exc})") from exc


def _parse(path: Path, data: bytes, magic: int, dims: int) -> tuple[np.ndarray, int]:
    """The payload of an IDX file (uint8) and its item count, after checking the header against the bytes."""
    header = 4 + 4 * dims
    if len(data) < header:
        raise DatasetImportError(f"{path}: {len(data)} bytes, shorter than an IDX header (truncated?)")
    found = int.from_bytes(data[:4], "big")
    if found != magic:
        raise DatasetImportError(f"{path}: IDX magic number {found}, expected {magic} (not this kind of IDX file)")
    shape = [int.from_bytes(data[4 + 4 * i : 8 + 4 * i], "big") for i in range(dims)]
    if dims == 3 and shape[1:] != [SIDE, SIDE]:
        raise DatasetImportError(f"{path}: images of {shape[1]}x{shape[2]}, Fashion-MNIST's are {SIDE}x{SIDE}")
    expected = header + int(np.prod(shape))
    if len(data) != expected:
        what = "truncated" if len(data) < expected else "longer than its header says"
        raise DatasetImportError(
            f"{path}: the header announces {shape[0]:,} item(s) ({expected:,} bytes) but the file holds "
            f"{len(data):,} bytes ({what})"
        )
    return np.frombuffer(data, dtype=np.uint8, offset=header).reshape(shape), shape[0]


def read_part(ctx: ImportContext, prefix: str) -> IdxPart:
    """One file pair (`train` or `t10k`), checked: format, sizes, labels 0-9, and the pinned content."""
    paths = {kind: _find(ctx, f"{prefix}-{kind}-idx{dims}-ubyte") for kind, dims in (("images", 3), ("labels", 1))}
    contents = {kind: _content(ctx, path) for kind, path in paths.items()}
    images, count = _parse(paths["images"], contents["images"], IMAGES_MAGIC, 3)
    labels, label_count = _parse(paths["labels"], contents["labels"], LABELS_MAGIC, 1)
    if count != label_count:
        raise DatasetImportError(f"{paths['labels']}: {label_count:,} labels for {count:,} images in {paths['images']}")
    if labels.size and int(labels.max()) >= len(CLASSES):
        raise DatasetImportError(f"{paths['labels']}: label {int(labels.max())} outside Fashion-MNIST's 0-9")
    for kind, path in paths.items():
        stem = path.name.removesuffix(".gz")
        digest = sha256_hex(contents[kind])
        if digest != PINNED[stem]:
            if not ctx.options.unpinned:
                raise DatasetImportError(
                    f"{path}: decompressed sha256 {digest[:16]}... is not the pinned Fashion-MNIST release "
                    f"({PINNED[stem][:16]}...): another version, or another dataset in the same format such as "
                    "MNIST; pass --unpinned to import it anyway (the card records it)"
                )
            ctx.notes.append(f"{stem}: content is not the pinned release (sha256 {digest}); imported with --unpinned")
    return IdxPart(images, labels, paths["images"], prefix)


def per_class_rows(labels: np.ndarray, per_class: int, skip: int = 0) -> np.ndarray:
    """Row numbers of each class's rows `skip + 1` to `skip + per_class`, in file order."""
    seen = np.zeros(len(CLASSES), dtype=np.int64)
    rows = []
    for row, label in enumerate(labels.tolist()):
        if skip <= seen[label] < skip + per_class:
            rows.append(row)
        seen[label] += 1
    return np.asarray(rows, dtype=np.int64)


def _png(pixels: np.ndarray, name: str) -> StoredImage:
    buffer = io.BytesIO()
    Image.fromarray(pixels, mode="L").save(buffer, format="PNG")
    data = buffer.getvalue()
    return StoredImage(data, name, sha256_hex(data), (SIDE, SIDE))


def _write(ctx: ImportContext, part: IdxPart, rows: np.ndarray, split: str) -> None:
    for row in rows.tolist():
        label = int(part.labels[row])
        name, category = CLASSES[label]
        ctx.add_category_row(
            (SUBSET, split),
            EXTRAS,
            _png(part.images[row], f"{part.prefix}-{row:05d}.png"),
            f"{ctx.dist.relative(part.images_path)}#{row}",
            part.images_path,
            category,
            f"fashion-mnist-class-{label}",
            fashion_mnist_class=name,
        )


def _import(
    ctx: ImportContext, queries_from: tuple[IdxPart, np.ndarray], gallery_from: tuple[IdxPart, np.ndarray], title: str
) -> dict[str, SubsetCard]:
    (query_part, queries), (gallery_part, gallery) = queries_from, gallery_from
    short = [
        CLASSES[c][0]
        for c in range(len(CLASSES))
        if (query_part.labels[queries] == c).sum() < QUERIES_PER_CLASS
        or (gallery_part.labels[gallery] == c).sum() < GALLERY_PER_CLASS
    ]
    if short:
        ctx.notes.append(
            f"fewer rows than the protocol's {QUERIES_PER_CLASS}/{GALLERY_PER_CLASS} for: {', '.join(short)}"
        )
    _write(ctx, query_part, queries, "query")
    _write(ctx, gallery_part, gallery, "gallery")
    ctx.notes.append(
        "class-level protocol: item_ID is the class and rows have no attributes, so Item, Coarse and Fine recall "
        "all count an image of the query's class; no train split is written"
    )
    return {SUBSET: SubsetCard(title="Fashion-MNIST", description=title)}


def _check_options(ctx: ImportContext) -> None:
    if ctx.options.detections is not None or ctx.options.tirg_queries is not None:
        raise DatasetImportError("fashion-mnist takes neither --detections nor --tirg-queries")
    for stem in PINNED:  # all four present before any is read
        _find(ctx, stem)


def import_fashion_mnist(ctx: ImportContext) -> dict[str, SubsetCard]:
    """The test protocol: queries from the test file, gallery from the training file's first images per class."""
    _check_options(ctx)
    test = read_part(ctx, "t10k")
    train = read_part(ctx, "train")
    return _import(
        ctx,
        (test, per_class_rows(test.labels, QUERIES_PER_CLASS)),
        (train, per_class_rows(train.labels, GALLERY_PER_CLASS)),
        f"first {QUERIES_PER_CLASS} test images per class as queries, first {GALLERY_PER_CLASS} training images per "
        "class as gallery; match = same class",
    )


def import_fashion_mnist_validation(ctx: ImportContext) -> dict[str, SubsetCard]:
    """The validation protocol: queries and gallery from the training file, after the test protocol's gallery."""
    _check_options(ctx)
    read_part(ctx, "t10k")  # checked like the test protocol's, so both read the same pinned release
    train = read_part(ctx, "train")
    queries = per_class_rows(train.labels, QUERIES_PER_CLASS, skip=GALLERY_PER_CLASS)
    gallery = per_class_rows(train.labels, GALLERY_PER_CLASS, skip=GALLERY_PER_CLASS + QUERIES_PER_CLASS)
    return _import(
        ctx,
        (train, queries),
        (train, gallery),
        f"training images {GALLERY_PER_CLASS + 1}-{GALLERY_PER_CLASS + QUERIES_PER_CLASS} per class as queries, "
        f"{GALLERY_PER_CLASS + QUERIES_PER_CLASS + 1}-{2 * GALLERY_PER_CLASS + QUERIES_PER_CLASS} as gallery "
        "(disjoint from the test protocol `fashion-mnist`); match = same class",
    )
