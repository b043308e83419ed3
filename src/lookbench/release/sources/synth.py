"""`synth` source: rows of an already generated LookBench-Synth snapshot folder, read with the core reader."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from lookbench._util.dates import parse_datetime, version_date
from lookbench.release.config import SynthSource
from lookbench.release.records import Sample
from lookbench.release.sources.base import CollectContext
from lookbench.snapshot import open_snapshot
from lookbench.snapshot.reader import Snapshot
from lookbench.snapshot.schema import NOISE, SPLITS

CROP_COLUMNS = ("raw_image", "bbox", "outfit_id")


def crop_columns(snap: Snapshot, subset: str, split: str) -> list[dict[str, Any]]:
    """Per row: the scene bytes, bbox and outfit_id of a street-look crop (None where absent)."""
    rows: list[dict[str, Any]] = []
    for path in snap.files(subset, split):
        names = [c for c in CROP_COLUMNS if c in pq.read_schema(path).names]
        table = pq.read_table(path, columns=names) if names else pa.table({})
        count = pq.ParquetFile(path).metadata.num_rows
        values = {c: table.column(c).to_pylist() if c in names else [None] * count for c in CROP_COLUMNS}
        for i in range(count):
            raw = values["raw_image"][i]
            rows.append(
                {
                    "raw_image": raw.get("bytes") if isinstance(raw, dict) else None,
                    "bbox": values["bbox"][i],
                    "outfit_id": values["outfit_id"][i],
                }
            )
    return rows


class SynthCollector:
    """Each row becomes a generated sample (its subset's item_ID is its product); street crops keep their scene."""

    kind = "synth"

    def __init__(self, config: SynthSource) -> None:
        self.config = config
        self.name = config.name
        self.rows = 0

    def counts(self) -> dict[str, int]:
        """Snapshot rows read."""
        return {"rows": self.rows}

    def collect(self, ctx: CollectContext) -> Iterator[Sample]:
        """Yield every row of every subset of the Synth snapshot; its noise pool feeds `noise` (distractor pool)."""
        snap = open_snapshot(self.config.path)
        try:
            day = version_date(snap.snapshot_id)
        except ValueError as exc:
            ctx.report(str(snap.root), f"no release date for its rows: {exc}")
            day = None
        released = None if day is None else parse_datetime(day)
        parts = [(subset, split) for subset in snap.subsets for split in SPLITS]
        for subset, split in parts + ([(NOISE, "gallery")] if snap.has_noise else []):
            labels = snap.labels(subset, split)
            crops = crop_columns(snap, subset, split)
            for start, images in snap.iter_images(subset, split):
                for offset, data in enumerate(images):
                    row = start + offset
                    self.rows += 1
                    where = f"{snap.snapshot_id}/{subset}/{split}#{row}"
                    if not data:
                        ctx.report(f"{snap.root}/{subset}/{split}#{row}", "skipped: row has no image bytes")
                        continue
                    yield Sample(
                        source=self.name,
                        source_kind=self.kind,
                        product_id=f"{subset}/{labels.item_id[row]}",
                        image=data,
                        first_seen_at=ctx.now(),
                        category=labels.category[row],
                        main_attribute=labels.main_attribute[row],
                        other_attributes=list(labels.other_attributes[row]),
                        subsets=[NOISE] if subset == NOISE else list(self.config.subsets) or [subset],
                        license=self.config.license,
                        source_url=where,
                        source_published_at=released,
                        published_at_origin="synth snapshot version" if released else None,
                        generated=True,
                        generation={"generator": "lookbench-synth", "snapshot": snap.snapshot_id},
                        **crops[row],
                    )
