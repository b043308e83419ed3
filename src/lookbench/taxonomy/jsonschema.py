"""Per-category JSON Schema (enums only, no free text) for schema-constrained annotation."""

from __future__ import annotations

from typing import Any

from lookbench.taxonomy.loader import load_taxonomy
from lookbench.taxonomy.models import Taxonomy


def category_json_schema(category: str, taxonomy: Taxonomy | None = None) -> dict[str, Any]:
    """A JSON Schema for one item's labels: category constant, one property per attribute group."""
    taxonomy = taxonomy or load_taxonomy()
    cat = taxonomy.category(category)
    properties: dict[str, Any] = {"category": {"const": category}}
    all_values: list[str] = []
    for group_name, values in cat.attributes.items():
        group = taxonomy.groups[group_name]
        all_values.extend(values)
        if group.multi:
            properties[group_name] = {
                "type": "array",
                "items": {"enum": list(values)},
                "uniqueItems": True,
                "description": group.description,
            }
        else:
            properties[group_name] = {"enum": [*values, None], "description": group.description}
    properties["main_attribute"] = {"enum": all_values, "description": "The item's most salient attribute."}
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": f"LookBench taxonomy {taxonomy.version}: {category}",
        "type": "object",
        "properties": properties,
        "required": ["category", "main_attribute", *cat.attributes],
        "additionalProperties": False,
    }
