"""Modification texts from structured changes: several phrasings per kind of change and, for some groups, per
attribute group; picked deterministically."""

from __future__ import annotations

import zlib

from lookbench.snapshot.composed import Change

PHRASES: dict[str, str] = {
    "short sleeve": "short sleeves",
    "long sleeve": "long sleeves",
    "three-quarter sleeve": "three-quarter sleeves",
    "sleeveless": "no sleeves",
}
"""How a value reads in a sentence where its label does not ("with short sleeve" -> "with short sleeves")."""

GROUP_NOUNS: dict[str, str] = {"sleeve length": "sleeves", "shaft height": "shaft", "bag style": "style"}

_REPLACE = (
    "like this, but {to} instead of {source}",
    "the same {noun}, but {to}",
    "change the {noun} from {source} to {to}",
    "same item with {to} rather than {source}",
)
_GROUP_REPLACE: dict[str, tuple[str, ...]] = {
    "colour": ("the same in {to} instead of {source}", "like this, but in {to}", "can I get this in {to}?"),
    "sleeve length": ("like this, but with {to}", "the same with {to} instead of {source}"),
    "length": ("the same, but {to} instead of {source}", "like this in a {to} cut"),
    "material": ("the same in {to} instead of {source}", "like this, but made of {to}"),
}
"""Phrasings only a group reads well in, tried beside the general ones."""
_ADD = ("like this, but with {to}", "the same, with {to} added", "add {to}")
_REMOVE = ("like this, but without {source}", "the same, without the {source}", "remove the {source}")
_CLAUSES = {"replace": "{to} instead of {source}", "add": "with {to}", "remove": "without {source}"}
_TWO = ("like this, but {first} and {second}", "same item, {first}, and {second}", "make it {first} and {second}")


def phrase(value: str) -> str:
    """A value as it reads in a sentence."""
    return PHRASES.get(value, value)


def _kind(change: Change) -> str:
    return "add" if not change.source else "remove" if not change.target else "replace"


def _fields(change: Change) -> dict[str, str]:
    return {
        "to": phrase(change.target),
        "source": phrase(change.source),
        "noun": GROUP_NOUNS.get(change.group, change.group),
    }


def modification_text(changes: tuple[Change, ...], key: str) -> str:
    """A sentence expressing one or two changes; `key` (e.g. the pair's ids) picks the phrasing reproducibly."""
    if not changes or len(changes) > 2:
        raise ValueError(f"a modification text expresses one or two changes, got {len(changes)}")
    pick = zlib.crc32(key.encode())
    if len(changes) == 1:
        change = changes[0]
        kind = _kind(change)
        templates = {"replace": _REPLACE, "add": _ADD, "remove": _REMOVE}[kind]
        if kind == "replace":
            templates = _GROUP_REPLACE.get(change.group, ()) + templates
        return templates[pick % len(templates)].format(**_fields(change))
    first, second = (_CLAUSES[_kind(c)].format(**_fields(c)) for c in changes)
    return _TWO[pick % len(_TWO)].format(first=first, second=second)
