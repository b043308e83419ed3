"""One strict config base and one config-file loader (YAML, `--set` overrides, validation) with one error format."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from lookbench._util.hashing import json_sha256
from lookbench._util.yamlfile import YamlError, load_yaml, parse_yaml
from lookbench.errors import LookBenchError


class StrictConfig(BaseModel):
    """A config or config section: unknown keys are errors."""

    model_config = ConfigDict(extra="forbid")

    def fingerprint(self) -> str:
        """sha256 of the canonical JSON: what a resumed run or stage is keyed on."""
        return json_sha256(self.model_dump(mode="json"))


Config = TypeVar("Config", bound=BaseModel)


def validation_message(exc: ValidationError) -> str:
    """The first few problems as `field.path: message`, unknown keys called so."""
    lines = []
    for error in exc.errors()[:5]:
        field = ".".join(str(p) for p in error["loc"]) or "(top level)"
        message = "unknown key" if error["type"] == "extra_forbidden" else error["msg"]
        lines.append(f"{field}: {message}")
    return "; ".join(lines)


def apply_override(data: dict[str, Any], override: str, error: type[LookBenchError] = LookBenchError) -> None:
    """Set `a.b.c=VALUE` (VALUE read as YAML) in a nested config dict."""
    key, sep, text = override.partition("=")
    names = key.strip().split(".")
    if not sep or not all(names):
        raise error(f"--set {override!r}: expected KEY.PATH=VALUE, e.g. optim.lr=3e-4")
    value = parse_yaml(text, f"--set {override!r}: the value")
    node = data
    for name in names[:-1]:
        child = node.setdefault(name, {})
        if not isinstance(child, dict):
            raise error(f"--set {override!r}: {name} is not a section")
        node = child
    node[names[-1]] = value


def validate_config(
    data: Any, model: type[Config], where: str, what: str, error: type[LookBenchError] = LookBenchError
) -> Config:
    """Validate a config mapping; the one-line error names `where`, `what` it is and the fields."""
    if not isinstance(data, dict):
        raise error(f"{where}: expected a mapping of config sections, got {type(data).__name__}")
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise error(f"{where}: invalid {what}: {validation_message(exc)}") from exc


def load_config_file(
    path: Path | str,
    model: type[Config],
    overrides: Sequence[str] = (),
    *,
    what: str,
    error: type[LookBenchError] = LookBenchError,
    prepare: Callable[[dict[str, Any]], None] | None = None,
) -> Config:
    """Read a YAML config (empty: no keys), apply `overrides`, then `prepare` (e.g. resolve paths), and validate."""
    path = Path(path)
    if not path.is_file():
        raise error(f"{what} not found: {path}")
    try:
        data = load_yaml(path)
    except YamlError as exc:
        raise error(str(exc)) from exc
    if data is None:
        data = {}
    if isinstance(data, dict):
        for override in overrides:
            apply_override(data, override, error)
        if prepare is not None:
            prepare(data)
    return validate_config(data, model, str(path), what, error)
