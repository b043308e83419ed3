"""Test helpers for the builder: distinct photos, their near-copies and a local shop server."""

from __future__ import annotations

import io
import socket
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
from PIL import Image, ImageOps

from conftest import serving


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
