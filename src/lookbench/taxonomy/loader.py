"""Load and validate the taxonomy data file shipped with the package (or another file)."""

from __future__ import annotations

from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from lookbench._util.yamlfile import YamlError, load_yaml, parse_yaml
from lookbench.taxonomy.models import Taxonomy, TaxonomyError

DEFAULT_FILE = "taxonomy_v1.yaml"


def _validate(data: Any, where: str) -> Taxonomy:
    if not isinstance(data, dict):
        raise TaxonomyError(f"{where}: expected a mapping with version, groups and categories")
    try:
        return Taxonomy.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(str(p) for p in e['loc']) or '<root>'}: {e['msg']}" for e in exc.errors())
        raise TaxonomyError(f"{where}: invalid taxonomy: {problems}") from exc


def load_taxonomy_file(path: Path | str) -> Taxonomy:
    """Load a taxonomy from a YAML or JSON file; errors name the file and the field."""
    try:
        data = load_yaml(path)
    except YamlError as exc:
        raise TaxonomyError(str(exc)) from exc
    return _validate(data, str(path))


@lru_cache(maxsize=1)
def load_taxonomy() -> Taxonomy:
    """The taxonomy shipped with the package (cached)."""
    source = resources.files("lookbench.taxonomy").joinpath(DEFAULT_FILE)
    where = f"lookbench/taxonomy/{DEFAULT_FILE}"
    return _validate(parse_yaml(source.read_text(encoding="utf-8"), where), where)
