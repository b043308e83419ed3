"""Tiny distributions of the five legacy benchmarks in their official layouts, and a colour-embedding provider."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from lookbench.embeddings.provider import ProviderBase
from lookbench.models.meta import ModelMeta, ModelRun
from lookbench.snapshot.reader import Snapshot

RED, GREEN, BLUE, PINK = (230, 20, 20), (20, 230, 20), (20, 20, 230), (230, 60, 60)


def solid(path: Path, colour: tuple[int, int, int], size: tuple[int, int] = (24, 24)) -> None:
    """A one-colour image file (format from the suffix)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", size, colour).save(path)


def canvas(path: Path, boxes: list[tuple[list[float], tuple[int, int, int]]], size: tuple[int, int] = (60, 60)) -> None:
    """A grey photo with coloured rectangles at the given `[x1, y1, x2, y2]` boxes."""
    im = Image.new("RGB", size, (128, 128, 128))
    for box, colour in boxes:
        im.paste(colour, tuple(int(v) for v in box))
    path.parent.mkdir(parents=True, exist_ok=True)
    im.save(path, quality=98)


def write_counted(path: Path, header: str, rows: list[str]) -> None:
    """A DeepFashion list file: the row count, the entry names, the rows."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join([str(len(rows)), header, *rows]) + "\n", encoding="utf-8")


def inshop(root: Path) -> Path:
    """Items A, B, C: gallery images coloured red, green, blue; C's query is pink (nearest A's red)."""
    images = {
        "img/WOMEN/Dresses/id_A/01_1_front.jpg": ("id_A", "query", RED),
        "img/WOMEN/Dresses/id_A/02_2_side.jpg": ("id_A", "gallery", RED),
        "img/MEN/Shirts_Polos/id_B/01_1_front.jpg": ("id_B", "query", GREEN),
        "img/MEN/Shirts_Polos/id_B/02_2_side.jpg": ("id_B", "gallery", GREEN),
        "img/WOMEN/Dresses/id_C/01_1_front.jpg": ("id_C", "query", PINK),
        "img/WOMEN/Dresses/id_C/02_2_side.jpg": ("id_C", "gallery", BLUE),
        "img/WOMEN/Dresses/id_T/01_1_front.jpg": ("id_T", "train", BLUE),
        "img/WOMEN/Dresses/id_T/02_1_side.jpg": ("id_T", "train", BLUE),
    }
    for name, (_, _, colour) in images.items():
        solid(root / "Img" / name, colour)
    write_counted(
        root / "Eval" / "list_eval_partition.txt",
        "image_name item_id evaluation_status",
        [f"{name} {item} {status}" for name, (item, status, _) in images.items()],
    )
    write_counted(
        root / "Anno" / "list_bbox_inshop.txt",
        "image_name clothes_type pose_type x_1 y_1 x_2 y_2",
        [f"{name} 3 1 2 3 20 22" for name in images],
    )
    write_counted(root / "Anno" / "list_attr_cloth.txt", "attribute_name", ["floral", "a-line", "long sleeve"])
    write_counted(
        root / "Anno" / "list_attr_items.txt",
        "item_id attribute_labels",
        ["id_A 1 1 -1", "id_B -1 -1 1", "id_C 1 -1 0", "id_T -1 1 -1"],
    )
    return root


def df2_annotation(source: str, pair: int, items: list[dict[str, Any]]) -> dict[str, Any]:
    """A DeepFashion2 per-image JSON."""
    out: dict[str, Any] = {"source": source, "pair_id": pair}
    for number, item in enumerate(items, start=1):
        out[f"item{number}"] = {
            "landmarks": [],
            "segmentation": [],
            "scale": 2,
            "occlusion": 1,
            "zoom_in": 1,
            "viewpoint": 2,
            **item,
        }
    return out


def deepfashion2(root: Path) -> Path:
    """Two consumer photos and two shop photos of pairs 1 and 2; consumer item of pair 2 is green (nearest the
    shop's style-2 green trousers of pair 1)."""
    top = {"category_id": 1, "category_name": "short sleeve top"}
    trousers = {"category_id": 8, "category_name": "trousers"}
    photos = {
        "000001": (
            "user",
            1,
            [({**top, "style": 1}, [5, 5, 25, 25], RED), ({**trousers, "style": 0}, [30, 30, 55, 55], BLUE)],
        ),
        "000002": (
            "shop",
            1,
            [({**top, "style": 1}, [5, 5, 25, 25], RED), ({**trousers, "style": 2}, [30, 30, 55, 55], GREEN)],
        ),
        "000003": ("user", 2, [({**trousers, "style": 1}, [10, 10, 40, 40], GREEN)]),
        "000004": ("shop", 2, [({**trousers, "style": 1}, [10, 10, 40, 40], BLUE)]),
    }
    for split in ("validation", "train"):
        for image, (source, pair, items) in photos.items():
            annos = [{**item, "bounding_box": box} for item, box, _ in items]
            path = root / split / "annos" / f"{image}.json"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(df2_annotation(source, pair, annos)), encoding="utf-8")
            canvas(root / split / "image" / f"{image}.jpg", [(box, colour) for _, box, colour in items])
    return root


def df2_detections(path: Path) -> Path:
    """Detector output: consumer photo 1's top found (two candidates, the higher score kept); consumer photo 3's
    trousers detected with the wrong category (a miss); every shop item found."""
    records = [
        {"image_id": 1, "category_id": 1, "bbox": [5, 5, 20, 20], "score": 0.9},
        {"image_id": 1, "category_id": 1, "bbox": [6, 6, 19, 19], "score": 0.5},
        {"image_id": 3, "category_id": 1, "bbox": [10, 10, 30, 30], "score": 0.8},
        {"image_id": 2, "category_id": 1, "bbox": [5, 5, 20, 20], "score": 0.9},
        {"image_id": 2, "category_id": 8, "bbox": [30, 30, 25, 25], "score": 0.9},
        {"image_id": 4, "category_id": 8, "bbox": [10, 10, 30, 30], "score": 0.9},
    ]
    path.write_text(json.dumps(records), encoding="utf-8")
    return path


def street2shop(root: Path) -> Path:
    """Dresses (products 1, 2; product 2's street crop is red, nearest product 1's shop photo) and skirts."""
    meta = root / "meta" / "json"
    meta.mkdir(parents=True)
    box = {"left": 10, "top": 10, "width": 30, "height": 30}
    data = {
        "retrieval_dresses.json": [
            {"product": 1, "photo": 10},
            {"product": 2, "photo": 11},
            {"product": 2, "photo": 11},
        ],
        "test_pairs_dresses.json": [{"product": 1, "photo": 20, "bbox": box}, {"product": 2, "photo": 21, "bbox": box}],
        "train_pairs_dresses.json": [{"product": 3, "photo": 22, "bbox": box}],
        "retrieval_skirts.json": [{"product": 5, "photo": 12}],
        "test_pairs_skirts.json": [{"product": 5, "photo": 23, "bbox": box}],
    }
    for name, records in data.items():
        (meta / name).write_text(json.dumps(records), encoding="utf-8")
    for photo, colour in {10: RED, 11: GREEN, 12: BLUE}.items():
        solid(root / "images" / f"{photo:09d}.jpg", colour, (60, 60))
    for photo, colour in {20: RED, 21: PINK, 22: BLUE, 23: BLUE}.items():
        canvas(root / "images" / f"{photo:09d}.jpg", [([10, 10, 40, 40], colour)])
    return root


F200K_TEST = [
    ("women/dresses/casual_and_day_dresses/100/100_0.jpeg", "red floral dress", RED),
    ("women/dresses/casual_and_day_dresses/100/100_1.jpeg", "red floral dress", RED),
    ("women/dresses/casual_and_day_dresses/200/200_0.jpeg", "blue floral dress", BLUE),
    ("women/dresses/casual_and_day_dresses/200/200_1.jpeg", "blue floral dress", PINK),
    ("women/dresses/casual_and_day_dresses/300/300_0.jpeg", "blue striped dress", GREEN),
]


def fashion200k(root: Path, queries: bool = True) -> Path:
    """Three test products (200's second image is pink: nearest 100's red) and TIRG's test_queries.txt."""
    lines = []
    for path, description, colour in F200K_TEST:
        solid(root / path, colour)
        lines.append(f"{path}\t0.9{len(lines)}\t{description}")
    (root / "labels").mkdir(parents=True)
    (root / "labels" / "dress_test_detect_all.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    train = "women/dresses/cocktail/900/900_0.jpeg"
    solid(root / train, GREEN)
    (root / "labels" / "dress_train_detect_all.txt").write_text(f"{train}\t0.5\tgreen dress\n", encoding="utf-8")
    if queries:
        (root / "test_queries.txt").write_text(
            f"{F200K_TEST[0][0]} {F200K_TEST[3][0]}\n{F200K_TEST[2][0]} {F200K_TEST[4][0]}\n", encoding="utf-8"
        )
    return root


def fashioniq(root: Path) -> Path:
    """Three categories of two val captions over three images each, and a train split."""
    for category in ("dress", "shirt", "toptee"):
        ids = [f"{category[0].upper()}{n}" for n in range(4)]
        for asin, colour in zip(ids, (RED, GREEN, BLUE, PINK), strict=True):
            solid(root / "images" / f"{asin}.png", colour)
        splits = {"val": ids[:3], "train": ids[3:]}
        for split, members in splits.items():
            path = root / "image_splits" / f"split.{category}.{split}.json"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(members), encoding="utf-8")
        captions = {
            "val": [
                {"candidate": ids[0], "target": ids[1], "captions": ["is green.", "has no print"]},
                {"candidate": ids[1], "target": ids[2], "captions": ["is blue", "  darker  "]},
            ],
            "train": [{"candidate": ids[3], "target": ids[3], "captions": ["same", "same"]}],
        }
        for split, records in captions.items():
            path = root / "captions" / f"cap.{category}.{split}.json"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(records), encoding="utf-8")
    return root


class MeanColour(ProviderBase):
    """Embeds an image as its mean RGB colour, centred: identical colours score 1, near colours near 1."""

    spec = "test:mean-colour"

    def embed_split(self, snapshot: Snapshot, subset: str, split: str) -> np.ndarray:
        rows = []
        for _, batch in snapshot.iter_images(subset, split):
            for data in batch:
                assert data is not None
                with Image.open(io.BytesIO(data)) as im:
                    rows.append(np.asarray(im.convert("RGB"), dtype=np.float64).reshape(-1, 3).mean(axis=0) - 127.5)
        return np.asarray(rows, dtype=np.float32)

    def describe(self) -> ModelRun:
        return ModelMeta(spec=self.spec).result_record("mean-colour")


def dial(path: Path, angle: int) -> None:
    """An image whose width in pixels is its angle in degrees (what `Dial` embeds); format from the suffix."""
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", (angle, 4), (128, 128, 128)).save(path)


class Dial:
    """A two-tower model on the unit circle: an image at the angle its width gives, a text at the first number in
    it (else its last word found in `words`), so cosine similarity ranks by angular distance."""

    model_id, revision = "dial", "1"
    words = {"blue": 61, "plain": 7}

    @staticmethod
    def _point(degrees: float) -> np.ndarray:
        return np.array([np.cos(np.radians(degrees)), np.sin(np.radians(degrees))], dtype=np.float32)

    def embed(self, images: list[Image.Image]) -> np.ndarray:
        return np.stack([self._point(im.width) for im in images])

    def embed_texts(self, texts: list[str]) -> np.ndarray:
        return np.stack([self._point(self.angle_of(t)) for t in texts])

    def angle_of(self, text: str) -> float:
        numbers = [float(w) for w in text.replace(",", " ").split() if w.isdigit()]
        if numbers:
            return numbers[0]
        known = [self.words[w] for w in text.split() if w in self.words]
        return float(known[-1]) if known else 90.0


class DialImages:
    """`Dial` without its text tower: an image-only model."""

    model_id, revision = "dial", "1"

    def embed(self, images: list[Image.Image]) -> np.ndarray:
        return Dial().embed(images)


def make_dial() -> Dial:
    return Dial()


def make_dial_images() -> DialImages:
    return DialImages()


FIQ_ANGLES = (1, 5, 12, 20, 30, 41, 53, 66, 80, 95, 111, 128)
"""Every category's val images X00..X11 lie at these angles (degrees)."""
FIQ_QUERIES = {
    "dress": [(0, 11, ["Turn to 130.", "and longer"]), (5, 6, ["is 55", "shorter"])],
    "shirt": [(3, 4, ["is 32?", "brighter"])],
    "toptee": [
        (0, 10, ["is 113", "x"]),
        (1, 11, ["is 126", "y"]),
        (2, 10, ["is 109", "z"]),
        (3, 2, ["is 14", "w"]),
    ],
}
"""(candidate, target, captions) per category; the first number of the first caption lies near the target."""


def fashioniq_dial(root: Path) -> Path:
    """FashionIQ in its official layout (`captions/`, `image_splits/`, `resized_images/<category>/`), with images
    `Dial` places at FIQ_ANGLES and the val captions of FIQ_QUERIES; one train image per category."""
    for category, queries in FIQ_QUERIES.items():
        ids = [f"{category[0].upper()}{n:02d}" for n in range(len(FIQ_ANGLES))]
        for asin, angle in zip(ids, FIQ_ANGLES, strict=True):
            dial(root / "resized_images" / category / f"{asin}.jpg", angle)
        dial(root / "resized_images" / category / f"{category}-train.jpg", 50)
        records = [{"target": ids[t], "candidate": ids[c], "captions": caps} for c, t, caps in queries]
        files = {
            f"image_splits/split.{category}.val.json": ids,
            f"image_splits/split.{category}.train.json": [f"{category}-train"],
            f"captions/cap.{category}.val.json": records,
        }
        for name, data in files.items():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_text(json.dumps(data, indent=4), encoding="utf-8")
    return root


TIRG_ROOT = "women/dresses/casual_and_day_dresses"


def tirg_path(image: int) -> str:
    """The path of test image `image` (two images per product folder)."""
    product = 1000 + image // 2
    return f"{TIRG_ROOT}/{product}/{product}_{image % 2}.jpeg"


TIRG_CAPTIONS = {0: "red floral dress", 5: "blue floral dress", 20: "blue floral dress", 40: "green striped skirt"}
TIRG_CAPTIONS[2] = "green plain skirt"
TIRG_QUERIES = [(0, 20), (40, 2)]
"""(source, target) test images of test_queries.txt."""


def fashion200k_dial(root: Path) -> Path:
    """Fashion200K with 60 test images at angles 1, 4, ..., 178 (image i at 1 + 3i), captions from TIRG_CAPTIONS
    (else `filler dress i`), image 0 listed a second time in another label file, and TIRG's test queries."""
    lines = []
    for image in range(60):
        dial(root / tirg_path(image), 1 + 3 * image)
        caption = TIRG_CAPTIONS.get(image, f"filler dress {image}")
        lines.append(f"{tirg_path(image)}\t0.9\t{caption}")
    (root / "labels").mkdir(parents=True)
    (root / "labels" / "dress_test_detect_all.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (root / "labels" / "skirt_test_detect_all.txt").write_text(lines[0] + "\n", encoding="utf-8")
    queries = "".join(f"{tirg_path(s)} {tirg_path(t)}\n" for s, t in TIRG_QUERIES)
    (root / "test_queries.txt").write_text(queries, encoding="utf-8")
    return root
