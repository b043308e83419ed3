"""The annotation prompt, built from the taxonomy's definitions, and its version."""

from __future__ import annotations

from lookbench.taxonomy import Taxonomy

PROMPT_VERSION = "annotate-v1"


def annotation_prompt(taxonomy: Taxonomy, category: str) -> str:
    """Instructions for labelling one crop of `category`, group by group, with each value's definition."""
    cat = taxonomy.category(category)
    lines = [
        f"The image shows one garment of category '{category}' (taxonomy {taxonomy.version}).",
        "For every attribute group below choose what is visible, using only the listed values.",
        "Single-choice groups take one value (null if none applies); multi-choice groups take a list (may be empty).",
        "Then set main_attribute to the single most salient of your chosen values.",
        "Answer with JSON only, following the schema.",
        "",
    ]
    for group, values in cat.attributes.items():
        spec = taxonomy.groups[group]
        kind = "multi-choice" if spec.multi else "single-choice"
        lines.append(f"{group} ({kind}): {spec.description}")
        lines += [f"  - {value}: {spec.attributes[value]}" for value in values]
    return "\n".join(lines)
