"""Pydantic models of the attribute taxonomy: groups of attributes and garment categories."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from lookbench._util.labels import normalise_label
from lookbench.errors import LookBenchError

Region = Literal["upper body", "lower body", "whole body", "feet", "head", "carried"]


class TaxonomyError(LookBenchError):
    """The taxonomy file is invalid, or a label is not in it."""


class AttributeGroup(BaseModel):
    """A group of mutually related attributes, e.g. colour; single- or multi-valued."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    multi: bool
    description: str = Field(min_length=1)
    attributes: dict[str, str] = Field(min_length=2)
    """Attribute name -> one-line visual definition."""

    @field_validator("attributes")
    @classmethod
    def _canonical_names(cls, value: dict[str, str]) -> dict[str, str]:
        for name, definition in value.items():
            if name != normalise_label(name) or not name:
                raise ValueError(f"attribute name {name!r} must be lowercase, trimmed and Unicode NFC")
            if not definition.strip():
                raise ValueError(f"attribute {name!r} has an empty definition")
        return value


class Category(BaseModel):
    """A garment category, its Fashionpedia category, body region and allowed attributes per group."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    fashionpedia: str = Field(min_length=1)
    region: Region
    synonyms: list[str] = Field(default_factory=list)
    attributes: dict[str, list[str]]
    """Group name -> allowed attributes, in taxonomy order."""

    @field_validator("attributes", mode="before")
    @classmethod
    def _keep_all(cls, value: object) -> object:
        if isinstance(value, dict):
            return {k: ["*"] if v == "all" else v for k, v in value.items()}
        return value

    def attribute_names(self) -> list[str]:
        """Every attribute the category allows, group by group."""
        return [a for values in self.attributes.values() for a in values]


class Taxonomy(BaseModel):
    """The whole versioned taxonomy; validation resolves `all` and rejects unknown names."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    version: str = Field(pattern=r"^\d+\.\d+\.\d+$")
    groups: dict[str, AttributeGroup]
    categories: dict[str, Category]

    @model_validator(mode="after")
    def _check_references(self) -> Taxonomy:
        owner: dict[str, str] = {}
        for group_name, group in self.groups.items():
            for attr in group.attributes:
                if attr in owner:
                    raise ValueError(f"attribute {attr!r} is in groups {owner[attr]!r} and {group_name!r}")
                owner[attr] = group_name
        for cat_name, cat in self.categories.items():
            if cat_name != normalise_label(cat_name):
                raise ValueError(f"category name {cat_name!r} must be lowercase, trimmed and Unicode NFC")
            for group_name, values in cat.attributes.items():
                if group_name not in self.groups:
                    raise ValueError(f"category {cat_name!r}: unknown attribute group {group_name!r}")
                if values == ["*"]:
                    values[:] = list(self.groups[group_name].attributes)
                    continue
                for attr in values:
                    if attr not in self.groups[group_name].attributes:
                        raise ValueError(f"category {cat_name!r}: unknown attribute {attr!r} in group {group_name!r}")
                if len(set(values)) != len(values):
                    raise ValueError(f"category {cat_name!r}: duplicate attribute in group {group_name!r}")
        return self

    def group_of(self, attribute: str) -> str:
        """The group an attribute belongs to."""
        for name, group in self.groups.items():
            if attribute in group.attributes:
                return name
        raise TaxonomyError(f"unknown attribute {attribute!r}")

    def category(self, name: str) -> Category:
        """A category by canonical name; a clear error listing the known ones otherwise."""
        if name not in self.categories:
            raise TaxonomyError(f"unknown category {name!r}; known: {', '.join(self.categories)}")
        return self.categories[name]

    def definition(self, attribute: str) -> str:
        """The one-line visual definition of an attribute."""
        return self.groups[self.group_of(attribute)].attributes[attribute]

    def all_attributes(self) -> list[str]:
        """Every distinct attribute, group by group."""
        return [a for g in self.groups.values() for a in g.attributes]
