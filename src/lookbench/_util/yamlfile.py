"""One YAML loader for every config and data file: safe, UTF-8 only, duplicate keys refused; errors name the file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from lookbench.errors import LookBenchError


class YamlError(LookBenchError):
    """A YAML file that cannot be read, is not UTF-8, is malformed or repeats a key."""


class _UniqueKeyLoader(yaml.SafeLoader):
    """SafeLoader that refuses a mapping key given twice (PyYAML would silently keep the last)."""


def _construct_mapping(loader: _UniqueKeyLoader, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
    seen: dict[Any, int] = {}
    for key_node, _ in node.value:
        if key_node.tag == "tag:yaml.org,2002:merge":
            continue  # keys merged in with `<<:` may be overridden; only keys written twice are refused
        key = loader.construct_object(key_node, deep=True)  # type: ignore[no-untyped-call]
        line = key_node.start_mark.line + 1
        try:
            duplicate = key in seen
        except TypeError:
            continue  # unhashable: construct_mapping below reports it
        if duplicate:
            raise yaml.constructor.ConstructorError(
                None,
                None,
                f"duplicate key {key!r} (first on line {seen[key]}, again on line {line})",
                key_node.start_mark,
            )
        seen[key] = line
    return loader.construct_mapping(node, deep=deep)


def _construct_timestamp(loader: _UniqueKeyLoader, node: yaml.ScalarNode) -> Any:
    """A date or timestamp; one the calendar lacks (`2026-02-30`) is a marked error, not a ValueError."""
    try:
        return loader.construct_yaml_timestamp(node)  # type: ignore[no-untyped-call]
    except ValueError as exc:
        raise yaml.constructor.ConstructorError(
            None, None, f"{node.value!r} is not a valid date ({exc})", node.start_mark
        ) from exc


_UniqueKeyLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)
_UniqueKeyLoader.add_constructor("tag:yaml.org,2002:timestamp", _construct_timestamp)


def parse_yaml(text: str, where: str) -> Any:
    """Parse YAML text; `where` (a file name) starts every error message."""
    try:
        return yaml.load(text, Loader=_UniqueKeyLoader)  # noqa: S506 - a SafeLoader subclass
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        place = f"line {mark.line + 1}, column {mark.column + 1}: " if mark is not None else ""
        problem = exc.problem or exc.context or "malformed YAML"
        raise YamlError(f"{where}: not valid YAML: {place}{problem}") from exc
    except yaml.YAMLError as exc:
        raise YamlError(f"{where}: not valid YAML ({exc})") from exc
    except RecursionError:
        raise YamlError(f"{where}: not valid YAML: nested too deeply to parse") from None


def load_yaml(path: Path | str) -> Any:
    """Read and parse a YAML file (UTF-8; a BOM is allowed); errors name the file, line and key."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise YamlError(f"{path}: cannot read ({exc.strerror or exc})") from exc
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise YamlError(f"{path}: line {line}: not UTF-8 text (byte 0x{data[exc.start]:02x})") from exc
    return parse_yaml(text, str(path))
