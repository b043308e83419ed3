"""Generate a LookBench-Synth snapshot: four subsets plus noise, with exact labels and dates."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from lookbench.errors import SnapshotError
from lookbench.snapshot.schema import NOISE, STREETLOOK_SUBSETS, SUBSETS
from lookbench.snapshot.writer import image_value, rows_to_table, write_split
from lookbench.synth.catalogue import BOTTOMS, SHOES, SPECS, TOPS
from lookbench.synth.encode import jpeg_bytes
from lookbench.synth.products import Product, changeable_groups, main_group, sample_product, variant
from lookbench.synth.release import history_window, release_window, sample_time, version_name
from lookbench.synth.render import render_product
from lookbench.synth.sizes import SIZES, SizePreset
from lookbench.synth.street import MIN_VISIBLE, street_scene
from lookbench.synth.studio import STUDIO_SIZE, catalogue_shot, query_shot, studio_image
from lookbench.synth.styles import Style

GENERATOR_VERSION = "synth-1"
MANIFEST = "synth_manifest.json"
TASK = "image_to_image"


@dataclass
class Rows:
    """Query and gallery rows of one subset under construction."""

    query: list[dict[str, Any]] = field(default_factory=list)
    gallery: list[dict[str, Any]] = field(default_factory=list)


class SynthGenerator:
    """Builds one release deterministically from (seed, release date, size)."""

    def __init__(self, seed: int, release: date, size: str) -> None:
        if size not in SIZES:
            raise SnapshotError(f"unknown synth size {size!r}; known: {', '.join(SIZES)}")
        self.seed = seed
        self.release = release
        self.preset: SizePreset = SIZES[size]
        self.size_name = size
        self._counter = 0
        self._window = release_window(release)
        self._history = history_window(release)

    def _rng(self, stream: int) -> np.random.Generator:
        return np.random.default_rng([self.seed, int(f"{self.release:%Y%m%d}"), stream])

    def _new_id(self) -> str:
        self._counter += 1
        return f"syn{self.seed}-{self.release:%Y%m%d}-{self._counter:06d}"

    def _product(self, rng: np.random.Generator, categories: tuple[str, ...], new: bool = True) -> Product:
        category = categories[int(rng.integers(len(categories)))]
        when = sample_time(rng, self._window if new else self._history)
        return sample_product(rng, category, self._new_id(), when)

    def _negatives(self, product: Product, rng: np.random.Generator) -> list[Product]:
        groups = changeable_groups(product)
        first = main_group(product)
        order = [first] if first in groups else []
        rest = [g for g in groups if g not in order]
        rng.shuffle(rest)
        order += rest
        return [variant(product, g, rng, self._new_id()) for g in order[: self.preset.negatives_per_product]]

    def _row(self, product: Product, image: Image.Image, difficulty: str, **extra: Any) -> dict[str, Any]:
        return {
            "image": image_value(jpeg_bytes(image), f"{product.product_id}.jpg"),
            "raw_image": None,
            "category": product.category,
            "main_attribute": product.main_attribute,
            "other_attributes": product.other_attributes(),
            "bbox": None,
            "item_ID": product.product_id,
            "task": TASK,
            "difficulty": difficulty,
            "first_seen_at": product.first_seen_at,
            "source": GENERATOR_VERSION,
            **extra,
        }

    def _catalogue_rows(
        self, product: Product, rng: np.random.Generator, negative_of: str | None = None
    ) -> dict[str, Any]:
        image = studio_image(render_product(product).image, "real", catalogue_shot(), rng)
        return self._row(product, image, "easy", hard_negative_of=negative_of)

    def _gallery_for(self, product: Product, rng: np.random.Generator, rows: Rows) -> None:
        rows.gallery.append(self._catalogue_rows(product, rng))
        for neg in self._negatives(product, rng):
            rows.gallery.append(self._catalogue_rows(neg, rng, negative_of=product.product_id))

    def studio_subset(self, subset: str, style: Style, stream: int) -> Rows:
        """Studio queries (another shot of each product) and their gallery."""
        rng = self._rng(stream)
        rows = Rows()
        for _ in range(self.preset.queries[subset]):
            product = self._product(rng, tuple(SPECS))
            image = studio_image(render_product(product).image, style, query_shot(rng), rng)
            rows.query.append(self._row(product, image, "easy" if style == "real" else "medium"))
            self._gallery_for(product, rng, rows)
        self._extras(subset, rng, rows)
        return rows

    def _outfit(self, rng: np.random.Generator) -> list[Product]:
        if rng.random() < 0.35:
            outfit = [self._product(rng, ("dress",))]
            extras = [SHOES, ("bag",)] if rng.random() < 0.5 else [SHOES]
        else:
            outfit = [self._product(rng, TOPS), self._product(rng, BOTTOMS)]
            extras = [c for c in (SHOES, ("bag",)) if rng.random() < 0.5]
        outfit += [self._product(rng, cats) for cats in extras]
        return outfit

    def street_subset(self, subset: str, style: Style, stream: int) -> Rows:
        """Street scenes: one query per visible garment crop, with the scene as raw_image."""
        rng = self._rng(stream)
        rows = Rows()
        wanted = self.preset.queries[subset]
        scene_no = 0
        while len(rows.query) < wanted:
            scene_no += 1
            outfit = self._outfit(rng)
            scene = street_scene([(p, render_product(p).image) for p in outfit], style, rng)
            raw = jpeg_bytes(scene.image)
            outfit_id = f"outfit-{self.seed}-{self.release:%Y%m%d}-{stream}-{scene_no:05d}"
            for item in scene.items:
                if item.visibility < MIN_VISIBLE or len(rows.query) >= wanted:
                    continue
                crop = scene.image.crop(item.bbox)
                row = self._row(item.product, crop, "medium" if item.visibility > 0.85 else "hard", outfit_id=outfit_id)
                row["raw_image"] = image_value(raw, f"{outfit_id}.jpg")
                row["bbox"] = [float(v) for v in item.bbox]
                rows.query.append(row)
                self._gallery_for(item.product, rng, rows)
        self._extras(subset, rng, rows)
        return rows

    def _extras(self, subset: str, rng: np.random.Generator, rows: Rows) -> None:
        for _ in range(self.preset.extra_gallery[subset]):
            rows.gallery.append(self._catalogue_rows(self._product(rng, tuple(SPECS)), rng))
        order = rng.permutation(len(rows.gallery))
        rows.gallery = [rows.gallery[int(i)] for i in order]

    def noise(self, stream: int) -> list[dict[str, Any]]:
        """Distractor products, first seen before the release window."""
        rng = self._rng(stream)
        rows = [
            self._catalogue_rows(self._product(rng, tuple(SPECS), new=False), rng) for _ in range(self.preset.noise)
        ]
        for row in rows:
            del row["hard_negative_of"]
        return rows

    def subsets(self) -> Iterator[tuple[str, Rows]]:
        """Each subset's rows, in canonical order."""
        for stream, subset in enumerate(SUBSETS, start=1):
            style: Style = "real" if subset.startswith("real") else "aigen"
            if subset in STREETLOOK_SUBSETS:
                yield subset, self.street_subset(subset, style, stream)
            else:
                yield subset, self.studio_subset(subset, style, stream)

    def manifest(self, counts: dict[str, int]) -> dict[str, Any]:
        """What produced the snapshot and how many rows each split has."""
        start, end = release_window(self.release)
        return {
            "generator": GENERATOR_VERSION,
            "seed": self.seed,
            "release": self.release.isoformat(),
            "size": self.size_name,
            "window": [start.isoformat(), end.isoformat()],
            "image_size": STUDIO_SIZE,
            "rows": counts,
        }

    def write(self, folder: Path) -> None:
        """Write every split under `folder` (the version folder)."""
        counts: dict[str, int] = {}
        for subset, rows in self.subsets():
            for split, data in (("query", rows.query), ("gallery", rows.gallery)):
                write_split(rows_to_table(data), folder / subset / f"{split}.parquet")
                counts[f"{subset}/{split}"] = len(data)
        noise = self.noise(len(SUBSETS) + 1)
        write_split(rows_to_table(noise), folder / NOISE / "gallery.parquet")
        counts[f"{NOISE}/gallery"] = len(noise)
        text = json.dumps(self.manifest(counts), indent=2, sort_keys=True) + "\n"
        (folder / MANIFEST).write_text(text, encoding="utf-8")


def _make_readable(folder: Path) -> None:
    """Give the finished tree the usual umask permissions (temporary files are created private)."""
    umask = os.umask(0)
    os.umask(umask)
    folder.chmod(0o777 & ~umask)
    for path in folder.rglob("*"):
        path.chmod((0o777 if path.is_dir() else 0o666) & ~umask)


def generate_snapshot(out: Path, release: date, size: str = "small", seed: int = 0, overwrite: bool = False) -> Path:
    """Generate `out/vYYYYMMDD` atomically (built in a temporary folder, then renamed); return it."""
    target = Path(out) / version_name(release)
    if target.exists() and not overwrite:
        raise SnapshotError(f"{target} already exists; pass overwrite to replace it")
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent))
    try:
        SynthGenerator(seed, release, size).write(tmp)
        _make_readable(tmp)
        if target.exists() and not overwrite:
            return target  # a concurrent run finished first; its content is identical
        if target.exists():
            old = target.with_name(f".{target.name}.old-{os.getpid()}")
            os.replace(target, old)
            os.replace(tmp, target)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(tmp, target)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return target
