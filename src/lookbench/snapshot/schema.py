"""The snapshot data contract: subsets, splits, columns and their Arrow types."""

from __future__ import annotations

import re
from typing import Literal

import pyarrow as pa

SUBSETS: tuple[str, ...] = ("real_studio_flat", "aigen_studio", "real_streetlook", "aigen_streetlook")
STREETLOOK_SUBSETS: frozenset[str] = frozenset({"real_streetlook", "aigen_streetlook"})
NOISE = "noise"
SPLITS: tuple[str, ...] = ("query", "gallery")
SplitName = Literal["query", "gallery"]
TRAIN = "train"
"""An optional split of training rows (with `item_ID` and labels) beside a subset's query and gallery; never scored."""

COMPOSED = "composed"
COMPOSED_SPLITS: tuple[str, ...] = ("query", "validation", "gallery")
"""A composed subset may add a `validation` split of queries, used only to choose a method's parameters."""
_COMPOSED_NAME = re.compile(r"composed(_[a-z0-9]+)*")


SubsetKind = Literal["image", "composed"]
"""How a subset is scored: plain image retrieval, or composed retrieval (a reference image and a change)."""


def is_composed_subset(name: str) -> bool:
    """True for a composed-retrieval subset: `composed` or `composed_<name>` (lowercase letters, digits, `_`)."""
    return _COMPOSED_NAME.fullmatch(name) is not None


def subset_kind(name: str) -> SubsetKind:
    """A subset's kind, from its name: the one place a name is classified (a snapshot's kinds come from here)."""
    return "composed" if is_composed_subset(name) else "image"


SUBSET_TITLES: dict[str, str] = {
    "real_studio_flat": "RealStudioFlat",
    "aigen_studio": "AIGen-Studio",
    "real_streetlook": "RealStreetLook",
    "aigen_streetlook": "AIGen-StreetLook",
    COMPOSED: "Composed",
}

IMAGE_TYPE = pa.struct([pa.field("bytes", pa.binary()), pa.field("path", pa.string())])
BBOX_TYPE = pa.list_(pa.float64())

REQUIRED_COLUMNS: dict[str, pa.DataType] = {
    "image": IMAGE_TYPE,
    "category": pa.string(),
    "main_attribute": pa.string(),
    "other_attributes": pa.list_(pa.string()),
    "item_ID": pa.string(),
}
"""The columns the metrics need, in every split; readers accept compatible types (int or float ids, large
strings, Hugging Face `ClassLabel` integers, a plain binary image column)."""

RELEASE_COLUMNS: dict[str, pa.DataType] = {
    "raw_image": IMAGE_TYPE,
    "bbox": BBOX_TYPE,
    "task": pa.string(),
    "difficulty": pa.string(),
}
"""Columns of the released dataset the metrics do not need: optional (absent, or null per row)."""

OPTIONAL_COLUMNS: dict[str, pa.DataType] = {
    **RELEASE_COLUMNS,
    "outfit_id": pa.string(),
    "first_seen_at": pa.timestamp("us", tz="UTC"),
    "source": pa.string(),
    "source_url": pa.string(),
    "source_published_at": pa.timestamp("us", tz="UTC"),
    "image_sha256": pa.string(),
}
"""Well-known optional columns; any other extra column is allowed and kept."""

LABEL_COLUMNS: tuple[str, ...] = ("category", "main_attribute", "other_attributes", "item_ID")
