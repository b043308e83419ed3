"""`synth` source: rows of an already generated LookBench-Synth snapshot folder, read with the core reader."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timezone

from lookbench.build.config import SynthSource
from lookbench.build.sample import Sample
from lookbench.build.sources.base import CollectContext
from lookbench.snapshot import open_snapshot
from lookbench.snapshot.schema import SPLITS


class SynthCollector:
    """Each query/gallery row becomes a generated sample; a subset's item_ID is its product."""

    kind = "synth"

    def __init__(self, config: SynthSource) -> None:
        self.config = config
        self.name = config.name

    def collect(self, ctx: CollectContext) -> Iterator[Sample]:
        """Yield every row of every subset of the Synth snapshot."""
        snap = open_snapshot(self.config.path)
        try:
            released: datetime | None = datetime.strptime(snap.snapshot_id, "v%Y%m%d").replace(tzinfo=timezone.utc)
        except ValueError:
            released = None
        for subset in snap.subsets:
            for split in SPLITS:
                labels = snap.labels(subset, split)
                for start, images in snap.iter_images(subset, split):
                    for offset, data in enumerate(images):
                        row = start + offset
                        where = f"{snap.root}/{subset}/{split}#{row}"
                        if not data:
                            ctx.report(where, "skipped: row has no image bytes")
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
                            subsets=list(self.config.subsets) or [subset],
                            license=self.config.license,
                            source_url=where,
                            source_published_at=released,
                            published_at_origin="synth snapshot version" if released else None,
                            generated=True,
                            generation={"generator": "lookbench-synth", "snapshot": snap.snapshot_id},
                        )
