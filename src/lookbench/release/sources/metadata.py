"""Source metadata as labels and provenance: category path and colour text (the annotate stage replaces them), URLs."""

from __future__ import annotations

import re

from lookbench._util.labels import normalise_label

_PATH_SPLIT = re.compile(r"\s*(?:>|/|\||»|›)\s*")
_COLOUR_SPLIT = re.compile(r"\s*(?:/|,|;|&|\+|\band\b)\s*")


def category_label(text: str | None) -> str:
    """The most specific segment of a category path ("Women > Tops > Shirts" -> "shirts"), lowercased."""
    if not text:
        return ""
    parts = [p for p in _PATH_SPLIT.split(text.strip()) if p]
    return normalise_label(parts[-1]) if parts else ""


def colour_labels(text: str | None) -> tuple[str, list[str]]:
    """Main and other attributes from colour text ("Navy / White" -> ("navy", ["white"]))."""
    if not text:
        return "", []
    parts = [normalise_label(p) for p in _COLOUR_SPLIT.split(text.strip()) if p.strip()]
    return (parts[0], parts[1:]) if parts else ("", [])


def split_list(text: object) -> list[str]:
    """A label list from a list or a `;`/`|`-separated string."""
    if text is None:
        return []
    if isinstance(text, (list, tuple)):
        return [normalise_label(v) for v in text if str(v).strip()]
    return [normalise_label(p) for p in re.split(r"[;|]", str(text)) if p.strip()]


def web_url(value: object) -> str | None:
    """An http(s) URL given by a source, or None (a `file:` URL would publish a path of the build machine)."""
    text = str(value or "").strip()
    return text if text.lower().startswith(("http://", "https://")) else None
