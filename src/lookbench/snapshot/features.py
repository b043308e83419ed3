"""Hugging Face feature descriptions in parquet schema metadata (key `huggingface`): written and read back."""

from __future__ import annotations

import json
from typing import Any

import pyarrow as pa

from lookbench._util.jsontext import loads
from lookbench.snapshot.schema import IMAGE_TYPE

_LIST_TYPES = frozenset({"Sequence", "List", "LargeList"})


def _feature_of(dtype: pa.DataType) -> Any:
    if dtype == IMAGE_TYPE:
        return {"_type": "Image"}
    if pa.types.is_struct(dtype):
        return {field.name: _feature_of(field.type) for field in dtype}
    if pa.types.is_list(dtype) or pa.types.is_large_list(dtype):
        if pa.types.is_struct(dtype.value_type):  # a Sequence of a struct would mean a struct of lists to datasets
            return [_feature_of(dtype.value_type)]
        return {"feature": _feature_of(dtype.value_type), "_type": "Sequence"}
    if pa.types.is_timestamp(dtype):
        tz = f", tz={dtype.tz}" if dtype.tz else ""
        return {"dtype": f"timestamp[{dtype.unit}{tz}]", "_type": "Value"}
    names = {pa.string(): "string", pa.large_string(): "large_string", pa.bool_(): "bool"}
    if dtype in names:
        return {"dtype": names[dtype], "_type": "Value"}
    return {"dtype": str(dtype), "_type": "Value"}


def huggingface_metadata(schema: pa.Schema) -> bytes:
    """The `huggingface` schema-metadata value that makes `datasets` decode image columns."""
    features = {field.name: _feature_of(field.type) for field in schema}
    return json.dumps({"info": {"features": features}}, sort_keys=True).encode()


def features_of(schema: pa.Schema) -> dict[str, Any]:
    """The feature description per column from the file's `huggingface` metadata; {} when absent or unreadable."""
    raw = (schema.metadata or {}).get(b"huggingface")
    if not raw:
        return {}
    try:
        features = loads(raw).get("info", {}).get("features", {})
    except (ValueError, AttributeError):
        return {}
    return features if isinstance(features, dict) else {}


def _item_feature(feature: Any) -> Any:
    """The element feature of a list feature (`Sequence`, `List`, `LargeList` or the `[feature]` shorthand)."""
    if isinstance(feature, list) and len(feature) == 1:
        return feature[0]
    if isinstance(feature, dict) and feature.get("_type") in _LIST_TYPES:
        return feature.get("feature")
    return None


def class_names(feature: Any) -> list[str] | None:
    """The names of a `ClassLabel` feature, or of the `ClassLabel` elements of a list feature; None otherwise."""
    item = _item_feature(feature)
    target = item if item is not None else feature
    if isinstance(target, dict) and target.get("_type") == "ClassLabel":
        names = target.get("names")
        if isinstance(names, list) and all(isinstance(n, str) for n in names):
            return names
    return None
