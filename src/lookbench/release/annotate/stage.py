"""Annotate stage: every row gets annotator labels; the source's labels are kept beside them for the audit."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow as pa

from lookbench.errors import BuildError
from lookbench.release.annotate.base import Annotator, Item
from lookbench.release.annotate.batch import import_batch
from lookbench.release.annotate.openai import OpenAIAnnotator
from lookbench.release.annotate.probe import ProbeAnnotator
from lookbench.release.part2_config import AnnotateConfig
from lookbench.release.sample import write_table
from lookbench.release.stages.base import BuildContext, StageResult, read_samples, write_samples
from lookbench.release.vlm.cache import AnswerCache
from lookbench.snapshot.schema import NOISE
from lookbench.taxonomy import load_taxonomy

SOURCE_COLUMNS = (("source_main_attribute", pa.string()), ("source_other_attributes", pa.list_(pa.string())))
FLAGGED_SCHEMA = pa.schema([("sample_id", pa.string()), ("category", pa.string()), ("flag", pa.string())])


def cache_folder(config: AnnotateConfig, ctx: BuildContext) -> Path:
    """Where answers are cached across runs and releases."""
    return config.cache_dir or ctx.config.state_dir / "annotation-cache"


def make_annotator(config: AnnotateConfig, ctx: BuildContext) -> Annotator:
    """The configured backend."""
    taxonomy = load_taxonomy()
    if config.backend == "openai" and config.api is not None:
        return OpenAIAnnotator(config.api, taxonomy, AnswerCache(cache_folder(config, ctx)), config.attempts)
    if config.probe is not None:
        return ProbeAnnotator(config.probe, taxonomy, ctx.folder("annotate"))
    raise BuildError(f"annotate: backend {config.backend} is missing its settings")


def noise_only(row: dict[str, Any]) -> bool:
    """True for a distractor-only row: never relevant to a query, so its labels are never asked for."""
    return set(row["subsets"]) == {NOISE}


def items_of(rows: list[dict[str, Any]]) -> list[Item]:
    """Annotator items from the work rows that need labels."""
    return [Item(r["sample_id"], r["image"], r["image_sha256"], r["category"]) for r in rows if not noise_only(r)]


class AnnotateStage:
    """Flagged rows (invalid answers, refused images, unknown categories) are left out and listed; noise is not asked.

    Distractor-only rows keep their source labels: they are never relevant to a query.
    """

    name = "annotate"

    def run(self, ctx: BuildContext, previous: Path | None) -> StageResult:
        """Label every row; an API outage raises, and a re-run resumes from the answer cache."""
        config = ctx.config.annotate
        if config is None:
            raise BuildError("annotate stage without an annotate section")
        table = read_samples(previous)
        everything = table.to_pylist()
        # distractor-only rows are never relevant to any query: they keep their source labels, unasked
        noise = [r for r in everything if noise_only(r)]
        rows = [r for r in everything if not noise_only(r)]
        annotator = make_annotator(config, ctx)
        items = items_of(rows)
        imported = None
        if config.batch_output is not None and isinstance(annotator, OpenAIAnnotator):
            imported = import_batch(annotator, items, config.batch_output)
        outcomes = annotator.annotate(items)
        kept: list[dict[str, Any]] = [
            {**r, "source_main_attribute": r["main_attribute"], "source_other_attributes": r["other_attributes"]}
            | {"label_source": "source (noise)"}
            for r in noise
        ]
        flagged: list[dict[str, Any]] = []
        for row, outcome in zip(rows, outcomes, strict=True):
            if outcome.main_attribute is None:
                flagged.append({"sample_id": row["sample_id"], "category": row["category"], "flag": outcome.flag})
                ctx.problems.append(
                    {"source": row["source"], "url": row["sample_id"], "error": f"annotate: {outcome.flag}"}
                )
                continue
            row["source_main_attribute"] = row["main_attribute"]
            row["source_other_attributes"] = row["other_attributes"]
            row["main_attribute"] = outcome.main_attribute
            row["other_attributes"] = outcome.other_attributes
            row["label_source"] = annotator.name
            kept.append(row)
        write_table(pa.Table.from_pylist(flagged, schema=FLAGGED_SCHEMA), ctx.folder(self.name) / "flagged.parquet")
        schema = table.schema
        for name, dtype in (*SOURCE_COLUMNS, ("label_source", pa.string())):
            schema = schema.append(pa.field(name, dtype))
        reasons = Counter(f["flag"].split(":")[0].split("(")[0].strip() for f in flagged)
        stats = {
            "annotator": annotator.describe(),
            "rows": len(rows),
            "labelled": len(kept) - len(noise),
            "noise_rows_unlabelled": len(noise),
            "flagged": len(flagged),
            "flag_reasons": dict(reasons),
            "reasked": sum(1 for o in outcomes if o.attempts > 1),
            **({"batch_import": imported} if imported is not None else {}),
        }
        return StageResult(write_samples(ctx, self.name, pa.Table.from_pylist(kept, schema=schema)), stats)
