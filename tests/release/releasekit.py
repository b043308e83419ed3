"""Test helpers for the builder: distinct photos, their near-copies and a local shop server."""

from __future__ import annotations

import csv
import io
import json
import socket
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow.parquet as pq
import yaml
from click.testing import Result
from PIL import Image, ImageOps
from typer.testing import CliRunner

from conftest import make_row, serving, write_snapshot
from lookbench.cli.main import app
from lookbench.snapshot.writer import image_value


def photo(seed: int, size: int = 128) -> Image.Image:
    """A distinct textured RGB image: colour blocks plus a finer grey texture and a random bar."""
    rng = np.random.default_rng(seed)
    small = Image.fromarray(rng.integers(0, 256, size=(6, 6, 3), dtype=np.uint8))
    texture = Image.fromarray(rng.integers(0, 256, size=(32, 32), dtype=np.uint8))
    base = np.array(small.resize((size, size), Image.Resampling.BICUBIC), dtype=np.int32)
    fine = np.array(texture.resize((size, size), Image.Resampling.BILINEAR), dtype=np.int32)[..., None]
    array = np.clip(base * 0.6 + fine * 0.4, 0, 255).astype(np.uint8)
    x = int(rng.integers(0, size // 2))
    array[:, x : x + size // 8] = rng.integers(0, 256, size=3, dtype=np.uint8)
    return Image.fromarray(array)


def encode(im: Image.Image, fmt: str = "PNG", quality: int = 85) -> bytes:
    """Encoded image bytes."""
    buf = io.BytesIO()
    im.save(buf, format=fmt, quality=quality)
    return buf.getvalue()


def near_copy(im: Image.Image) -> bytes:
    """A resized, mirrored, JPEG re-encoded copy."""
    return encode(ImageOps.mirror(im.resize((96, 96), Image.Resampling.LANCZOS)), "JPEG", 70)


def closed_port() -> int:
    """A local port nothing listens on."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


Route = tuple[int, dict[str, str], bytes] | Callable[[BaseHTTPRequestHandler], None]


@dataclass
class Shop:
    """Routes served by a local HTTP server, with the log of requested paths and their times."""

    routes: dict[str, Route] = field(default_factory=dict)
    requests: list[tuple[str, float, str]] = field(default_factory=list)
    port: int = 0

    @property
    def host(self) -> str:
        """`127.0.0.1:port`."""
        return f"127.0.0.1:{self.port}"

    def url(self, path: str) -> str:
        """Absolute URL of a path."""
        return f"http://{self.host}{path}"

    def paths(self) -> list[str]:
        """Requested paths in order."""
        return [p for p, _, _ in self.requests]


def truncated(body: bytes, declared: int) -> Callable[[BaseHTTPRequestHandler], None]:
    """A handler that declares `declared` bytes, sends `body` and closes the connection."""

    def handle(handler: BaseHTTPRequestHandler) -> None:
        handler.send_response(200)
        handler.send_header("Content-Type", "image/png")
        handler.send_header("Content-Length", str(declared))
        handler.end_headers()
        handler.wfile.write(body)
        handler.wfile.flush()
        handler.close_connection = True

    return handle


@contextmanager
def serve(shop: Shop) -> Iterator[Shop]:
    """Serve the shop on 127.0.0.1 for the duration of the block."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802
            path = self.path.split("?", 1)[0]
            shop.requests.append((path, time.monotonic(), self.headers.get("User-Agent", "")))
            route = shop.routes.get(path)
            if route is None:
                self.send_response(404)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            if callable(route):
                route(self)
                return
            status, headers, body = route
            self.send_response(status)
            for key, value in headers.items():
                self.send_header(key, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            return

    with serving(ThreadingHTTPServer(("127.0.0.1", 0), Handler)) as shop.port:
        yield shop


PNG_ROUTE: Route = (200, {"Content-Type": "image/png"}, encode(photo(0, size=32)))
"""A small valid PNG response."""


PNG = {"Content-Type": "image/png"}
HTML = {"Content-Type": "text/html; charset=utf-8"}


def product_page(sku: str, name: str, category: str, colour: str, images: list[str], published: str) -> bytes:
    """A product page with schema.org Product JSON-LD."""
    ld = {
        "@context": "https://schema.org",
        "@graph": [
            {"@type": "WebPage", "name": name},
            {
                "@type": "Product",
                "sku": sku,
                "name": name,
                "brand": {"@type": "Brand", "name": "Acme"},
                "category": category,
                "color": colour,
                "image": [{"@type": "ImageObject", "contentUrl": u} for u in images],
                "datePublished": published,
            },
        ],
    }
    return f'<html><head><script type="application/ld+json">{json.dumps(ld)}</script></head></html>'.encode()


def sitemap(shop: Shop, pages: dict[str, str | None]) -> bytes:
    """A urlset with lastmod dates (none where the date is None)."""
    urls = "".join(
        f"<url><loc>{shop.url(p)}</loc>{f'<lastmod>{d}</lastmod>' if d else ''}</url>" for p, d in pages.items()
    )
    return f'<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{urls}</urlset>'.encode()


def add_product(shop: Shop, path: str, sku: str, category: str, colour: str, images: dict[str, bytes]) -> None:
    """Serve a JSON-LD product page and its images."""
    for img_path, data in images.items():
        shop.routes[img_path] = (200, PNG if data[:4] == b"\x89PNG" else {"Content-Type": "image/jpeg"}, data)
    page = product_page(sku, f"Item {sku}", category, colour, list(images), "2026-04-01T10:00:00Z")
    shop.routes[path] = (200, HTML, page)


def write_catalog(folder: Path, products: dict[str, list[bytes]]) -> None:
    """A catalog folder with manifest.csv."""
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / "manifest.csv").open("w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["image", "product_id", "category", "color", "published_at", "brand"])
        for pid, images in products.items():
            for n, data in enumerate(images):
                name = f"{pid}_{n}.png"
                (folder / name).write_bytes(data)
                writer.writerow([name, pid, "dress", "Navy / White", "2026-03-15", "OwnBrand"])


def write_yaml(path: Path, data: dict[str, Any]) -> Path:
    """A release config file."""
    path.write_text(yaml.safe_dump(data))
    return path


def run_build(config: Path, *args: str) -> Result:
    """`lookbench release CONFIG` through the CLI, every problem printed; the caller checks the exit code."""
    return CliRunner().invoke(app, ["release", str(config), "--show-problems", "1000", *args])


def shop_source(shop: Shop, **fields: Any) -> dict[str, Any]:
    """A polite-but-fast shop source on the local server."""
    return {
        "kind": "shop",
        "name": "testshop",
        "hosts": [shop.host],
        "scheme": "http",
        "rate_limit_s": 0.0,
        "timeout_s": 3,
        "user_agent": "lookbench-test",
        **fields,
    }


def serve_good_products(shop: Shop, pages: dict[str, str | None], count: int = 2, seed: int = 200) -> None:
    """`count` two-image products at /good/<n> (so the release has queries), added to `pages` for the sitemap."""
    for n in range(count):
        images = {f"/good/{n}a.png": encode(photo(seed + 2 * n)), f"/good/{n}b.png": encode(photo(seed + 2 * n + 1))}
        add_product(shop, f"/good/{n}", f"G{n}", "Shirts", "Red", images)
        pages[f"/good/{n}"] = "2026-05-01"


def collect_problems(out: Path, version: str, source: str) -> dict[str, str]:
    """`{url: errors}` of a source's collect problems (several of one URL joined by ` | `)."""
    path = out / "_work" / version / "collect" / f"{source}.problems.jsonl"
    found: dict[str, str] = {}
    for line in path.read_text().splitlines():
        problem = json.loads(line)
        found[problem["url"]] = " | ".join(filter(None, [found.get(problem["url"]), problem["error"]]))
    return found


def published_rows(version_dir: Path) -> list[dict[str, Any]]:
    """Every row of every split of a published version."""
    return [row for path in sorted(version_dir.rglob("*.parquet")) for row in pq.read_table(path).to_pylist()]


def synth_rows(prefix: str, seeds: list[int], offset: int = 0) -> list[dict[str, Any]]:
    """Rows of a small Synth-like snapshot: one textured photo per item."""
    return [
        make_row(f"{prefix}{s}", "dress", "red", ["silk"], image=image_value(encode(photo(s + offset)), f"{s}.png"))
        for s in seeds
    ]


def synth_release_config(tmp_path: Path, synth: Path, release: str = "2026-06-01", **extra: Any) -> Path:
    """A release of a Synth snapshot plus a catalog of three noise images."""
    noise = tmp_path / "noise"
    noise.mkdir(exist_ok=True)
    lines = ["image,product_id,category,color"]
    for seed in (30, 31, 32):
        (noise / f"{seed}.png").write_bytes(encode(photo(seed)))
        lines.append(f"{seed}.png,N{seed},bag,Brown")
    (noise / "manifest.csv").write_text("\n".join(lines) + "\n")
    data = {
        "release_date": release,
        "output": "out",
        "sources": [
            {"kind": "synth", "name": "synth", "path": str(synth)},
            {"kind": "catalog", "name": "distractors", "path": "noise", "subsets": ["noise"]},
        ],
        **extra,
    }
    return write_yaml(tmp_path / f"{release}.yaml", data)


def earlier_release(root: Path, images: list[Image.Image], version: str = "v20260101") -> Path:
    """An output folder holding one published version: these images as gallery rows, and one query."""
    rows = [
        make_row(f"p{n}", "dress", "red", image=image_value(encode(im), f"p{n}.png")) for n, im in enumerate(images)
    ]
    query = [make_row("q", "dress", "red", image=image_value(encode(photo(99, 64)), "q.png"))]
    write_snapshot(root / "out", {"real_studio_flat": {"query": query, "gallery": rows}}, version)
    return root / "out"
