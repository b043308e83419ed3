"""Taxonomy: the shipped data's shape, validation errors, normalisation and JSON Schemas."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from lookbench.taxonomy import (
    TaxonomyError,
    category_json_schema,
    load_taxonomy,
    load_taxonomy_file,
    normalise_attribute,
    normalise_category,
)
from lookbench.taxonomy.loader import DEFAULT_FILE

REFERENCE = Path("/work/shared/reference/fashionpedia_ontology.json")
SHIPPED = Path(__file__).parents[2] / "src" / "lookbench" / "taxonomy" / DEFAULT_FILE


def test_shipped_taxonomy_has_the_promised_shape() -> None:
    tax = load_taxonomy()
    assert tax.version == "1.0.0"
    assert len(tax.categories) == 27
    assert len(tax.all_attributes()) > 100
    for name, cat in tax.categories.items():
        assert 10 <= len(cat.attribute_names()) <= 25, name
    for name in ("blouse", "shirt", "t-shirt", "sweatshirt", "hoodie", "sweater", "cardigan", "jacket", "coat"):
        assert name in tax.categories
    for name in ("vest", "dress", "jumpsuit", "skirt", "pants", "jeans", "shorts", "bag", "boots", "sneakers"):
        assert name in tax.categories
    assert tax.groups["details"].multi and not tax.groups["colour"].multi
    assert all(tax.definition(a) for a in tax.all_attributes())


@pytest.mark.skipif(not REFERENCE.is_file(), reason="reference ontology not available")
def test_fashionpedia_categories_exist() -> None:
    names = {c["name"] for c in json.loads(REFERENCE.read_text())["categories"]}
    for name, cat in load_taxonomy().categories.items():
        assert cat.fashionpedia in names, name


def _write(tmp_path: Path, data: dict) -> Path:
    path = tmp_path / "tax.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


def _data() -> dict:
    return yaml.safe_load(SHIPPED.read_text(encoding="utf-8"))


def test_unknown_attribute_is_an_error_naming_file_and_field(tmp_path: Path) -> None:
    data = _data()
    data["categories"]["blouse"]["attributes"]["neckline"].append("sweetheart")
    path = _write(tmp_path, data)
    with pytest.raises(TaxonomyError, match=r"tax\.yaml.*blouse.*sweetheart"):
        load_taxonomy_file(path)


def test_unknown_group_region_and_extra_keys_are_errors(tmp_path: Path) -> None:
    data = _data()
    data["categories"]["shirt"]["attributes"]["texture"] = ["rough"]
    with pytest.raises(TaxonomyError, match="unknown attribute group 'texture'"):
        load_taxonomy_file(_write(tmp_path, data))
    data = _data()
    data["categories"]["shirt"]["region"] = "tail"
    with pytest.raises(TaxonomyError, match="categories.shirt.region"):
        load_taxonomy_file(_write(tmp_path, data))
    data = _data()
    data["categories"]["shirt"]["colour"] = "red"
    with pytest.raises(TaxonomyError, match="categories.shirt.colour"):
        load_taxonomy_file(_write(tmp_path, data))


def test_duplicate_attribute_across_groups_is_an_error(tmp_path: Path) -> None:
    data = _data()
    data["groups"]["style"]["attributes"]["red"] = "A red style."
    with pytest.raises(TaxonomyError, match="'red' is in groups"):
        load_taxonomy_file(_write(tmp_path, data))


def test_missing_and_malformed_files(tmp_path: Path) -> None:
    with pytest.raises(TaxonomyError, match="cannot read"):
        load_taxonomy_file(tmp_path / "nope.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("version: [unclosed", encoding="utf-8")
    with pytest.raises(TaxonomyError, match="not valid YAML"):
        load_taxonomy_file(bad)


@pytest.mark.parametrize(
    ("label", "expected"),
    [
        ("Blouse", "blouse"),
        (" T-Shirts ", "t-shirt"),
        ("tee", "t-shirt"),
        ("Jeans", "jeans"),
        ("trainers", "sneakers"),
        ("Polo Shirt", "polo shirt"),
        ("DRESSES", "dress"),
        ("tank_top", "tank top"),
        ("Boot", "boots"),
    ],
)
def test_normalise_category(label: str, expected: str) -> None:
    assert normalise_category(label) == expected


@pytest.mark.parametrize(
    ("label", "expected"),
    [
        ("Red", "red"),
        ("gray", "grey"),
        ("Long Sleeves", "long sleeve"),
        ("V Neck", "v-neck"),
        ("Stripes", "striped"),
        ("hooded", "hood"),
        ("Polka Dots", "polka dot"),
        ("zipper", "zip"),
        ("pleated", "pleats"),
    ],
)
def test_normalise_attribute(label: str, expected: str) -> None:
    assert normalise_attribute(label) == expected


def test_normalisation_rejects_unknown_and_disallowed_labels() -> None:
    with pytest.raises(TaxonomyError, match="unknown category 'spacesuit'"):
        normalise_category("spacesuit")
    with pytest.raises(TaxonomyError, match="unknown attribute"):
        normalise_attribute("glittery")
    with pytest.raises(TaxonomyError, match="not allowed for category 'jeans'"):
        normalise_attribute("floral", "jeans")
    assert normalise_attribute("Blue", "Jeans") == "blue"


def test_json_schema_is_enum_only() -> None:
    schema = category_json_schema("hoodie")
    props = schema["properties"]
    assert props["category"] == {"const": "hoodie"}
    assert schema["additionalProperties"] is False
    assert props["details"]["type"] == "array" and "hood" in props["details"]["items"]["enum"]
    assert "red" in props["colour"]["enum"]
    for name, prop in props.items():
        assert "const" in prop or "enum" in prop or "enum" in prop.get("items", {}), name
        assert prop.get("type") != "string", name


def test_json_schema_validates_with_jsonschema_if_installed() -> None:
    jsonschema = pytest.importorskip("jsonschema")
    schema = category_json_schema("jeans")
    good = {
        "category": "jeans",
        "main_attribute": "blue",
        "colour": "blue",
        "material": "denim",
        "length": "cropped",
        "fit": "skinny",
        "details": ["ripped"],
        "style": None,
    }
    jsonschema.validate(good, schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({**good, "colour": "teal"}, schema)
