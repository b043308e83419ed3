"""The versioned attribute taxonomy that defines fine relevance."""

from lookbench.taxonomy.jsonschema import category_json_schema
from lookbench.taxonomy.loader import load_taxonomy, load_taxonomy_file
from lookbench.taxonomy.models import AttributeGroup, Category, Taxonomy, TaxonomyError
from lookbench.taxonomy.normalise import normalise_attribute, normalise_category

__all__ = [
    "AttributeGroup",
    "Category",
    "Taxonomy",
    "TaxonomyError",
    "category_json_schema",
    "load_taxonomy",
    "load_taxonomy_file",
    "normalise_attribute",
    "normalise_category",
]
