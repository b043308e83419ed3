"""DeepFashion In-shop Clothes Retrieval: `Eval/list_eval_partition.txt`, `Anno/list_bbox_inshop.txt`,
`Anno/list_attr_cloth.txt` + `Anno/list_attr_items.txt` and the images under `Img/img/`."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa

from lookbench.datasets.legacy.context import ImportContext
from lookbench.datasets.legacy.source import Distribution, Line
from lookbench.errors import DatasetImportError
from lookbench.snapshot.card import SubsetCard

SUBSET = "inshop"
STATUSES = {"train": "train", "query": "query", "gallery": "gallery"}
EXTRAS = {"gender": pa.string(), "clothes_type": pa.int64(), "pose_type": pa.int64()}


def _numbers(line: Line, start: int, count: int) -> list[float]:
    try:
        return [float(v) for v in line.fields[start : start + count]]
    except ValueError:
        raise DatasetImportError(f"{line.where}: expected numbers, got {' '.join(line.fields)!r}") from None


def read_boxes(dist: Distribution, path: Path) -> dict[str, tuple[int, int, list[float]]]:
    """`list_bbox_inshop.txt`: image name -> (clothes type, pose type, [x1, y1, x2, y2])."""
    boxes: dict[str, tuple[int, int, list[float]]] = {}
    for line in dist.counted_table(path, 7):
        clothes, pose, *box = _numbers(line, 1, 6)
        if line.fields[0] in boxes:
            raise DatasetImportError(f"{line.where}: image {line.fields[0]} listed twice")
        boxes[line.fields[0]] = (int(clothes), int(pose), box)
    return boxes


def read_attributes(dist: Distribution, names_path: Path, items_path: Path) -> dict[str, list[str]]:
    """`list_attr_cloth.txt` names and `list_attr_items.txt` values: item id -> its positive attributes."""
    names = [" ".join(line.fields) for line in dist.counted_table(names_path, 1)]
    items: dict[str, list[str]] = {}
    for line in dist.counted_table(items_path, 2):
        values = line.fields[1:]
        if len(values) != len(names):
            raise DatasetImportError(
                f"{line.where}: {len(values)} attribute values, but {names_path.name} names {len(names)}"
            )
        if any(v not in ("1", "-1", "0") for v in values):
            raise DatasetImportError(f"{line.where}: attribute values must be 1, -1 or 0")
        items[line.fields[0]] = [name for name, v in zip(names, values, strict=True) if v == "1"]
    return items


def _image_root(dist: Distribution, first: str) -> Path:
    for root in (dist.root / "Img", dist.root):
        if (root / first).is_file():
            return root
    return dist.root / "Img" if (dist.root / "Img").is_dir() else dist.root


def import_inshop(ctx: ImportContext) -> dict[str, SubsetCard]:
    """Query and gallery from the partition's `query`/`gallery` rows, `train` from its `train` rows."""
    dist = ctx.dist
    if ctx.options.detections is not None or ctx.options.tirg_queries is not None:
        raise DatasetImportError("inshop takes neither --detections nor --tirg-queries")
    partition = dist.find("list_eval_partition.txt", "Eval", "", "Anno")
    assert partition is not None
    bbox_path = dist.find("list_bbox_inshop.txt", "Anno", "", required=False)
    boxes = read_boxes(dist, bbox_path) if bbox_path else {}
    items_path = dist.find("list_attr_items.txt", "Anno", "", required=False)
    attributes: dict[str, list[str]] = {}
    if items_path is not None:
        names_path = dist.find("list_attr_cloth.txt", "Anno", "")
        assert names_path is not None
        attributes = read_attributes(dist, names_path, items_path)
    else:
        ctx.notes.append("no list_attr_items.txt: rows carry no attributes (nDCG and strict fine recall degenerate)")
    if bbox_path is None:
        ctx.notes.append("no list_bbox_inshop.txt: rows carry no boxes")
    seen: set[str] = set()
    root: Path | None = None
    for line in dist.counted_table(partition, 3):
        name, item, status = line.fields[:3]
        if status not in STATUSES:
            raise DatasetImportError(f"{line.where}: evaluation status must be train, query or gallery, got {status!r}")
        if name in seen:
            raise DatasetImportError(f"{line.where}: image {name} listed twice")
        seen.add(name)
        parts = name.split("/")
        if len(parts) < 4 or ".." in parts:
            raise DatasetImportError(f"{line.where}: image name {name!r} is not img/<GENDER>/<CATEGORY>/<id>/<file>")
        split = STATUSES[status]
        if split == "train" and not ctx.options.train:
            continue
        root = root or _image_root(dist, name)
        image = ctx.image(root / name, line.where)
        if image is None:
            continue
        clothes, pose, box = boxes.get(name, (None, None, None))
        if boxes and name not in boxes:
            raise DatasetImportError(f"{line.where}: image {name} has no box in {bbox_path}")
        ctx.writer.split(SUBSET, split, EXTRAS).add(
            image,
            dist.where(line),
            dist.relative(root / name),
            category=parts[-3],
            main_attribute="",
            other_attributes=attributes.get(item, []),
            item_ID=item,
            bbox=box,
            gender=parts[-4],
            clothes_type=clothes,
            pose_type=pose,
        )
    return {
        SUBSET: SubsetCard(
            title="In-shop",
            description="query and gallery images of the official partition; match = same item id",
        )
    }
