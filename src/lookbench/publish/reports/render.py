"""Render packaged Jinja2 templates with autoescaping, inlining CSS, JS and JSON data safely."""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

from jinja2 import Environment, PackageLoader, select_autoescape
from markupsafe import Markup


def script_json(data: Any) -> Markup:
    """JSON for a <script type="application/json"> block: `<`, `>` and `&` escaped so `</script>` cannot occur."""
    text = json.dumps(data, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    text = text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return Markup(text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))


def static_text(name: str) -> Markup:
    """A packaged CSS or JS file, for inlining (trusted package data, never user input)."""
    text = resources.files("lookbench.publish.reports").joinpath(f"static/{name}").read_text("utf-8")
    return Markup(text.replace("</", "<\\/"))


def render(template: str, **context: Any) -> str:
    """Render a packaged template with HTML autoescaping on."""
    env = Environment(
        loader=PackageLoader("lookbench.publish.reports", "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
    )
    env.globals.update(script_json=script_json, static_text=static_text)
    return env.get_template(template).render(**context)
