"""Snapshots for the audit tests: gallery and noise drawn from one image distribution, optionally with a planted
source signature (a coloured frame on every noise image; a brightness shift or a red border on studio pixels)."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image, ImageDraw

from conftest import make_row, write_snapshot
from lookbench.snapshot.writer import image_value

SIDE = 96
FRAME = 6
CATEGORIES = ("dress", "skirt", "top", "pants")
COLOURS = ("red", "blue", "green", "black")


def scene(seed: int, frame: bool = False) -> bytes:
    """A JPEG of random shapes on a random backdrop; `frame` paints a magenta border on it."""
    rng = np.random.default_rng(seed)
    image = Image.new("RGB", (SIDE, SIDE), tuple(int(v) for v in rng.integers(0, 256, 3)))
    draw = ImageDraw.Draw(image)
    for _ in range(4):
        x0, y0 = (int(v) for v in rng.integers(0, SIDE - 20, 2))
        x1, y1 = x0 + int(rng.integers(10, 40)), y0 + int(rng.integers(10, 40))
        draw.ellipse((x0, y0, x1, y1), fill=tuple(int(v) for v in rng.integers(0, 256, 3)))
    if frame:
        draw.rectangle((0, 0, SIDE - 1, SIDE - 1), outline=(255, 0, 255), width=FRAME)
    buf = io.BytesIO()
    image.save(buf, format="JPEG", quality=90)
    return buf.getvalue()


def row(item: str, seed: int, image: bytes | None = None) -> dict[str, Any]:
    """A labelled row whose image is `image`, else a scene drawn from `seed`."""
    out = make_row(item, CATEGORIES[seed % 4], COLOURS[(seed // 4) % 4])
    out["image"] = image_value(scene(seed) if image is None else image, f"{item}.jpg")
    return out


def audit_snapshot_dir(
    root: Path, gallery: int = 60, noise: int = 60, queries: int = 20, frame: bool = False, with_noise: bool = True
) -> Path:
    """One studio subset and a noise pool from the same scene distribution (noise framed when `frame`)."""
    spec: dict[str, dict[str, list[dict[str, Any]]]] = {
        "real_studio_flat": {
            "query": [row(f"g{i}", 1000 + i) for i in range(queries)],
            "gallery": [row(f"g{i}", 2000 + i) for i in range(gallery)],
        }
    }
    if with_noise:
        spec["noise"] = {"gallery": [row(f"n{i}", i, scene(3000 + i, frame)) for i in range(noise)]}
    return write_snapshot(root, spec, "v20260301")


STUDIO = 64


def studio_pixels(seed: int) -> np.ndarray:
    """(STUDIO, STUDIO, 3) uint8: a few coloured shapes on a light, slightly tinted studio backdrop."""
    rng = np.random.default_rng(seed)
    backdrop = tuple(int(v) for v in rng.integers(200, 236) + rng.integers(-6, 7, 3))
    image = Image.new("RGB", (STUDIO, STUDIO), backdrop)
    draw = ImageDraw.Draw(image)
    for _ in range(3):
        x0, y0 = (int(v) for v in rng.integers(8, STUDIO - 24, 2))
        x1, y1 = x0 + int(rng.integers(8, 20)), y0 + int(rng.integers(8, 20))
        draw.rectangle((x0, y0, x1, y1), fill=tuple(int(v) for v in rng.integers(0, 256, 3)))
    return np.asarray(image)


def jpeg(pixels: np.ndarray) -> bytes:
    """The pixels encoded once as a quality-90 JPEG."""
    buf = io.BytesIO()
    Image.fromarray(pixels).save(buf, format="JPEG", quality=90)
    return buf.getvalue()


def brighter(pixels: np.ndarray, factor: float) -> np.ndarray:
    """Every pixel value times `factor`, rounded and clipped at 255."""
    return np.asarray(np.clip(np.rint(pixels * factor), 0, 255), dtype=np.uint8)


def red_border(pixels: np.ndarray, width: int = 3) -> np.ndarray:
    """The image with a pure red frame `width` pixels wide."""
    framed = pixels.copy()
    ring = np.ones(pixels.shape[:2], dtype=bool)
    ring[width:-width, width:-width] = False
    framed[ring] = (255, 0, 0)
    return framed


def studio_snapshot(root: Path, gallery: list[np.ndarray], noise: list[np.ndarray], queries: int = 20) -> Path:
    """A studio subset (its first `queries` gallery images also as queries) and a noise pool, from pixels encoded
    once each, so a planted change is the only difference between two such snapshots."""
    spec: dict[str, dict[str, list[dict[str, Any]]]] = {
        "real_studio_flat": {
            "query": [row(f"g{i}", i, jpeg(p)) for i, p in enumerate(gallery[:queries])],
            "gallery": [row(f"g{i}", i, jpeg(p)) for i, p in enumerate(gallery)],
        },
        "noise": {"gallery": [row(f"n{i}", i, jpeg(p)) for i, p in enumerate(noise)]},
    }
    return write_snapshot(root, spec, "v20260301")
