"""Fashion200K: `labels/<category>_{train,test}_detect_all.txt` (tab-separated: image path, detection score,
description) and the images they name; TIRG's `test_queries.txt` (source and target image per line) for the
composed protocol.

Two subsets:
- `fashion200k` (image retrieval by product): per product with two or more test images, its first image (in
  name order) is the query and the others are gallery; single-image products are gallery only. Match = same
  product (the numeric folder of the path).
- `composed_fashion200k` (TIRG): as `datasets.py` and `test_retrieval.py` build the test: every line of the test
  label files is a gallery image (a path listed twice is two images, as in TIRG's `imgs`; the last listing, the
  one TIRG's `file2imgid` picks, has the path as its id, earlier ones `path#1`, `path#2`, ...); each line of
  `test_queries.txt` is a query whose reference is its source image (the path's last listing, removed from the
  ranking as TIRG removes it), whose text is TIRG's `replace <word> with <word>` from the two captions, and whose
  targets are every listing whose caption equals the target's (TIRG counts a hit by caption).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa

from lookbench.datasets.legacy.context import ImportContext
from lookbench.datasets.legacy.source import Line
from lookbench.errors import DatasetImportError
from lookbench.snapshot.card import SubsetCard

SUBSET = "fashion200k"
COMPOSED = "composed_fashion200k"
EXTRAS = {"description": pa.string(), "detection_score": pa.float64(), "product_id": pa.string()}
COMPOSED_EXTRAS = {**EXTRAS, "modification_text": pa.string(), "target_ids": pa.list_(pa.string())}


@dataclass(frozen=True)
class Entry:
    """One line of a label file."""

    path: str
    score: float
    description: str
    line: Line

    @property
    def product(self) -> str:
        """The product id: the folder holding the image."""
        return self.path.split("/")[-2]

    @property
    def category(self) -> str:
        """The garment category: the second path part (`women/dresses/...` -> `dresses`)."""
        return self.path.split("/")[1]

    @property
    def caption(self) -> str:
        """The description as TIRG's `caption_post_process` leaves it."""
        return (
            self.description.strip()
            .replace(".", "dotmark")
            .replace("?", "questionmark")
            .replace("&", "andmark")
            .replace("*", "starmark")
        )


def different_word(source: str, target: str) -> str:
    """TIRG's `get_different_word`: the first source word absent from the target, the first target word absent
    from the source (each the last word when none is absent), as `replace X with Y`."""
    source_words, target_words = source.split(), target.split()
    source_word = target_word = ""
    for source_word in source_words:
        if source_word not in target_words:
            break
    for target_word in target_words:
        if target_word not in source_words:
            break
    return f"replace {source_word} with {target_word}"


def read_labels(ctx: ImportContext, split: str) -> list[Entry]:
    """Every line of `labels/*_<split>_*.txt`, files in name order."""
    folder = ctx.dist.root / "labels"
    files = sorted(p for p in folder.glob(f"*_{split}_*.txt")) if folder.is_dir() else []
    if not files and split == "test":
        raise DatasetImportError(f"{ctx.dist.root}: missing list files labels/<category>_test_detect_all.txt")
    entries = []
    for path in files:
        for line in ctx.dist.lines(path, sep="\t"):
            if len(line.fields) < 3:
                raise DatasetImportError(
                    f"{line.where}: expected 'path<TAB>score<TAB>description', got {len(line.fields)} field(s)"
                )
            image, score, description = line.fields[0].strip(), line.fields[1].strip(), line.fields[2]
            parts = image.split("/")
            if len(parts) < 4 or ".." in parts or image.startswith("/"):
                raise DatasetImportError(
                    f"{line.where}: image path {image!r} is not <gender>/<category>/<type>/<id>/<file>"
                )
            try:
                value = float(score)
            except ValueError:
                raise DatasetImportError(f"{line.where}: detection score {score!r} is not a number") from None
            entries.append(Entry(image, value, description, line))
    return entries


def _values(entry: Entry) -> dict[str, object]:
    words = list(dict.fromkeys(entry.description.split()))
    return {
        "category": entry.category,
        "main_attribute": "",
        "other_attributes": words,
        "description": entry.description.strip(),
        "detection_score": entry.score,
        "product_id": entry.product,
    }


def _add(ctx: ImportContext, subset: str, split: str, entry: Entry, item: str) -> None:
    where = ctx.dist.where(entry.line)
    stored = ctx.image(ctx.dist.root / entry.path, where)
    if stored is not None:
        ctx.writer.split(subset, split, EXTRAS).add(stored, where, entry.path, item_ID=item, **_values(entry))


def import_fashion200k(ctx: ImportContext) -> dict[str, SubsetCard]:
    """The product subset, the TIRG composed subset (when `test_queries.txt` is found) and the train split."""
    if ctx.options.detections is not None:
        raise DatasetImportError("fashion200k takes no --detections")
    named = ctx.options.tirg_queries
    if named is not None and not named.is_file():
        raise DatasetImportError(f"--tirg-queries {named}: no such file")
    test = read_labels(ctx, "test")
    last: dict[str, Entry] = {}
    for entry in test:
        last[entry.path] = entry  # TIRG's file2imgid keeps the last line of a path listed twice
    products: dict[str, list[Entry]] = {}
    for entry in last.values():
        products.setdefault(entry.product, []).append(entry)
    for entries in products.values():
        entries.sort(key=lambda e: e.path)
        for number, entry in enumerate(entries):
            split = "query" if number == 0 and len(entries) > 1 else "gallery"
            _add(ctx, SUBSET, split, entry, entry.product)
    cards = {SUBSET: SubsetCard(title="Fashion200K", description="image retrieval by product (test split)")}
    queries = ctx.options.tirg_queries or ctx.dist.root / "test_queries.txt"
    if queries.is_file():
        _import_tirg(ctx, test, last, queries)
        cards[COMPOSED] = SubsetCard(title="Fashion200K (TIRG)", description="TIRG composed test queries")
    else:
        ctx.notes.append(f"no TIRG test_queries.txt at {queries}: the composed protocol was not imported")
    if ctx.options.train:
        for entry in read_labels(ctx, "train"):
            _add(ctx, SUBSET, "train", entry, entry.product)
    return cards


def gallery_ids(test: list[Entry]) -> list[str]:
    """TIRG's test images' ids, one per label line: the path for its last listing, `path#N` for the N-th earlier."""
    remaining: dict[str, int] = {}
    for entry in test:
        remaining[entry.path] = remaining.get(entry.path, 0) + 1
    seen: dict[str, int] = {}
    ids = []
    for entry in test:
        seen[entry.path] = seen.get(entry.path, 0) + 1
        ids.append(entry.path if seen[entry.path] == remaining[entry.path] else f"{entry.path}#{seen[entry.path]}")
    return ids


def _import_tirg(ctx: ImportContext, test: list[Entry], last: dict[str, Entry], queries: Path) -> None:
    ids = gallery_ids(test)
    by_caption: dict[str, list[str]] = {}
    for entry, item in zip(test, ids, strict=True):
        by_caption.setdefault(entry.caption, []).append(item)
        _add(ctx, COMPOSED, "gallery", entry, item)
    for line in ctx.dist.lines(queries):
        if len(line.fields) != 2:
            raise DatasetImportError(f"{line.where}: expected 'source_path target_path', got {' '.join(line.fields)!r}")
        source, target = line.fields
        for path in (source, target):
            if path not in last:
                raise DatasetImportError(f"{line.where}: {path} is not an image of the test label files")
        src, tgt = last[source], last[target]
        for entry in (src, tgt):
            if not entry.caption:
                raise DatasetImportError(f"{line.where}: {entry.path} has an empty description ({entry.line.where})")
        # every listing with the target's caption, whether or not its image could be read (a missing one scores 0)
        targets = [item for item in by_caption[tgt.caption] if item != source]
        if not targets:
            raise DatasetImportError(
                f"{line.where}: the target's caption is the source's and no other test image has it ({target})"
            )
        where = ctx.dist.where(line)
        stored = ctx.image(ctx.dist.root / src.path, where)
        if stored is None:
            continue
        text = different_word(src.caption, tgt.caption)
        ctx.writer.split(COMPOSED, "query", COMPOSED_EXTRAS).add(
            stored, where, src.path, item_ID=src.path, **_values(src), modification_text=text, target_ids=targets
        )
