"""Hand-built composed queries: labels in memory, a small snapshot, and embeddings that rank it exactly."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from conftest import make_row, write_snapshot
from lookbench.snapshot.composed import Change, ComposedQueries, composed_table
from lookbench.snapshot.labels import SplitLabels
from lookbench.snapshot.writer import rows_to_table, write_split

SLEEVES = Change("sleeve length", "long sleeve", "short sleeve")
NO_POCKET = Change("details", "chest pocket", "")
ADD_HOOD = Change("details", "", "hood")
BLUE = Change("colour", "red", "blue")


def labels(rows: list[tuple[str, str, str, list[str]]]) -> SplitLabels:
    """SplitLabels from (item_ID, category, main attribute, other attributes)."""
    return SplitLabels(
        category=[r[1] for r in rows],
        main_attribute=[r[2] for r in rows],
        other_attributes=[list(r[3]) for r in rows],
        item_id=[r[0] for r in rows],
        outfit_key=[None] * len(rows),
    )


def queries(
    rows: list[tuple[str, str, str, list[str]]],
    changes: list[tuple[Change, ...]],
    targets: list[tuple[str, ...]] | None = None,
) -> ComposedQueries:
    """In-memory composed queries; texts are generic."""
    return ComposedQueries(
        labels=labels(rows),
        texts=["like this, but changed"] * len(rows),
        changes=changes,
        target_ids=targets or [()] * len(rows),
    )


# A tiny composed task in six dimensions: red, blue, long sleeve, short sleeve; noise lives in the last two.
RED_LONG = np.array([1.0, 0.0, 1.0, 0.0, 0.0, 0.0], dtype=np.float32)
RED_SHORT = np.array([1.0, 0.0, 0.0, 1.0, 0.0, 0.0], dtype=np.float32)
BLUE_LONG = np.array([0.0, 1.0, 1.0, 0.0, 0.0, 0.0], dtype=np.float32)
BLUE_SHORT = np.array([0.0, 1.0, 0.0, 1.0, 0.0, 0.0], dtype=np.float32)
LOOKS = {
    ("red", "long sleeve"): RED_LONG,
    ("red", "short sleeve"): RED_SHORT,
    ("blue", "long sleeve"): BLUE_LONG,
    ("blue", "short sleeve"): BLUE_SHORT,
}


def tee(item: str, colour: str, sleeve: str, seed: int, **extra: Any) -> dict[str, Any]:
    """A t-shirt row: main attribute the colour, then the sleeve length and a crew neck."""
    return make_row(item, "t-shirt", colour, [sleeve, "crew neck"], seed=seed, **extra)


def look(row: dict[str, Any], jitter: float = 0.0) -> np.ndarray:
    """The row's look vector, every look dimension raised by `jitter`."""
    return LOOKS[(row["main_attribute"], row["other_attributes"][0])] + np.array([jitter] * 4 + [0, 0], np.float32)


def composed_rows(rows: list[tuple[dict[str, Any], tuple[Change, ...], list[str]]]) -> list[dict[str, Any]]:
    """Query rows with a text, their changes and explicit targets."""
    return [
        {**row, "modification_text": f"change {' and '.join(c.group for c in ch)}", "changes": ch, "target_ids": t}
        for row, ch, t in rows
    ]


def composed_snapshot(root: Path) -> tuple[Path, Path]:
    """A snapshot with a composed subset, a studio subset and noise, and embeddings (`embeddings:DIR`) under
    which each reference image's nearest items keep its look (hard negatives) while the target is one change away.

    Queries: two sleeve changes (red long -> short, the first naming its target; blue long -> short), a colour
    change and a two-change query; validation: one sleeve change. The studio gallery (three items of each look) is
    what attribute arithmetic learns from; the noise lies in other dimensions.
    """
    gallery = [
        tee("r1", "red", "long sleeve", 1),  # the first reference's own product: excluded from its ranking
        tee("h1", "red", "long sleeve", 2),  # hard negative of the sleeve change
        tee("t1", "red", "short sleeve", 3),  # target of the sleeve change
        tee("r2", "blue", "long sleeve", 4),
        tee("h2", "blue", "long sleeve", 5),
        tee("t2", "blue", "short sleeve", 6),
        tee("v1", "red", "long sleeve", 7),
        tee("w1", "red", "short sleeve", 8),
    ]
    jitter = {"r1": 0.0, "h1": 0.05, "t1": 0.1, "r2": 0.0, "h2": 0.05, "t2": 0.1, "v1": 0.02, "w1": 0.1}
    query_rows = [
        (tee("r1", "red", "long sleeve", 11), (SLEEVES,), ["t1"]),
        (tee("r2", "blue", "long sleeve", 12), (SLEEVES,), []),
        (tee("r1", "red", "long sleeve", 13), (BLUE,), []),
        (tee("r1", "red", "long sleeve", 14), (BLUE, SLEEVES), []),
    ]
    validation_rows = [(tee("v1", "red", "long sleeve", 15), (SLEEVES,), ["w1"])]
    studio = [
        tee(f"s-{colour}-{sleeve}-{i}", colour, sleeve, 20 + 10 * i + n)
        for n, (colour, sleeve) in enumerate(LOOKS)
        for i in range(3)
    ]
    noise = [make_row(f"n{i}", "bag", "black", seed=60 + i) for i in range(3)]
    snap = write_snapshot(
        root / "snap",
        {
            "real_studio_flat": {"query": studio[:2], "gallery": studio},
            "noise": {"gallery": noise},
        },
        version="v20260301",
    )
    write_split(rows_to_table(gallery), snap / "composed" / "gallery.parquet")
    write_split(composed_table(composed_rows(query_rows)), snap / "composed" / "query.parquet")
    write_split(composed_table(composed_rows(validation_rows)), snap / "composed" / "validation.parquet")

    e = np.eye(6, dtype=np.float32)
    vectors = {
        "composed/gallery": np.stack([look(r, jitter[r["item_ID"]]) for r in gallery]),
        "composed/query": np.stack([look(r) for r, _, _ in query_rows]),
        "composed/validation": np.stack([look(r) for r, _, _ in validation_rows]),
        "noise/gallery": np.stack([e[4], e[5], e[4] + e[5]]),
        "real_studio_flat/query": np.stack([look(r, 0.01) for r in studio[:2]]),
        "real_studio_flat/gallery": np.stack([look(r, 0.01 * (i % 3)) for i, r in enumerate(studio)]),
    }
    folder = root / "vectors"
    for key, array in vectors.items():
        path = folder / f"{key}.npy"
        path.parent.mkdir(parents=True, exist_ok=True)
        np.save(path, array.astype(np.float32))
    return snap, folder
