"""`lookbench taxonomy [CATEGORY]`: print the attribute taxonomy, a category, or its JSON Schema."""

from __future__ import annotations

import json

import typer
from rich.table import Table

from lookbench.cli.common import console, reports_errors
from lookbench.taxonomy import category_json_schema, load_taxonomy, normalise_category


@reports_errors
def taxonomy(
    category: str = typer.Argument(None, help="A category (free-form: 'Blouse', 'tees', ...); omit for all."),
    schema: bool = typer.Option(False, "--schema", help="Print the category's JSON Schema for annotation."),
    as_json: bool = typer.Option(False, "--json", help="Print the whole taxonomy (or category) as JSON."),
) -> None:
    """Print the versioned attribute taxonomy."""
    tax = load_taxonomy()
    if category is None:
        if as_json:
            console.print_json(json.dumps(tax.model_dump()))
            return
        counts = f"{len(tax.categories)} categories, {len(tax.all_attributes())} attributes"
        table = Table(title=f"LookBench taxonomy {tax.version}: {counts}")
        for col in ("category", "fashionpedia", "region", "attributes", "groups"):
            table.add_column(col)
        for name, cat in tax.categories.items():
            table.add_row(
                name, cat.fashionpedia, cat.region, str(len(cat.attribute_names())), ", ".join(cat.attributes)
            )
        console.print(table)
        return
    name = normalise_category(category, tax)
    if schema:
        console.print_json(json.dumps(category_json_schema(name, tax)))
        return
    cat = tax.category(name)
    if as_json:
        console.print_json(json.dumps({"category": name, **cat.model_dump()}))
        return
    table = Table(title=f"{name} (Fashionpedia: {cat.fashionpedia}; {cat.region})")
    for col in ("group", "attribute", "definition"):
        table.add_column(col)
    for group, values in cat.attributes.items():
        kind = "multi" if tax.groups[group].multi else "single"
        for k, value in enumerate(values):
            table.add_row(f"{group} ({kind})" if k == 0 else "", value, tax.definition(value))
    console.print(table)


def register(app: typer.Typer) -> None:
    """Attach the taxonomy command."""
    app.command("taxonomy")(taxonomy)
