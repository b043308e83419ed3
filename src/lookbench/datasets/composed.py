"""Composed queries from exact labels: pairs of items whose attributes differ in one or two groups.

`changes_between` turns two attribute sets into structured changes (via the taxonomy's groups), and
`composed_table` writes query rows in the composed schema; both serve any generator. `derive_synth_composed`
applies them to a LookBench-Synth snapshot, whose galleries hold each product's hard negatives (the same product
with exactly one group changed, column `hard_negative_of`): (product, variant) pairs are exact one-change queries
and (variant, other variant) pairs exact two-change ones.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from lookbench._util.atomic import atomic_folder
from lookbench._util.labels import normalise_label
from lookbench._util.limits import MAX_PROCESSES, check_count
from lookbench._util.outfolder import refuse_unlisted
from lookbench.datasets.synth.pairs import pair_targets, read_synth_plan, render_pair_targets
from lookbench.errors import SnapshotError
from lookbench.evaluation.composed.texts import modification_text
from lookbench.snapshot.composed import MAX_CHANGES, Change, changes_between, composed_table, in_validation
from lookbench.snapshot.manifest import MANIFEST_NAME, read_manifest, write_manifest
from lookbench.snapshot.reader import Snapshot, reading
from lookbench.snapshot.schema import COMPOSED, SUBSETS
from lookbench.snapshot.writer import rows_to_table, write_split
from lookbench.taxonomy import Taxonomy, load_taxonomy

NEGATIVE_COLUMN = "hard_negative_of"
TASK = "composed_retrieval"


def _attributes(row: Mapping[str, Any]) -> frozenset[str]:
    values = [row.get("main_attribute"), *(row.get("other_attributes") or [])]
    return frozenset(v for v in (normalise_label(x) for x in values) if v)


def _read_rows(snapshot: Snapshot, subset: str, split: str) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for path in snapshot.files(subset, split):
        with reading(path):
            rows += pq.read_table(path).to_pylist()
    return rows


def _query(reference: Mapping[str, Any], target: Mapping[str, Any], changes: tuple[Change, ...]) -> dict[str, Any]:
    row = {k: v for k, v in reference.items() if k != NEGATIVE_COLUMN}
    row.update(
        task=TASK,
        modification_text=modification_text(changes, f"{reference['item_ID']}\0{target['item_ID']}"),
        changes=list(changes),
        target_ids=[str(target["item_ID"])],
    )
    return row


def synth_pairs(
    snapshot: Snapshot, render: bool = False, workers: int = 1
) -> tuple[list[dict[str, Any]], list[tuple[str, dict[str, Any]]]]:
    """The composed gallery (every image subset's gallery rows) and `(product, query row)` for every exact pair;
    with `render`, also each query product's design re-rendered with two groups changed (`synth.pairs`)."""
    taxonomy = load_taxonomy()
    gallery: list[dict[str, Any]] = []
    queries: list[tuple[str, dict[str, Any]]] = []
    references: dict[str, dict[str, Any]] = {}
    for subset in (s for s in SUBSETS if s in snapshot.subsets):
        rows = _read_rows(snapshot, subset, "gallery")
        if rows and NEGATIVE_COLUMN not in rows[0]:
            raise SnapshotError(
                f"{subset}/gallery of {snapshot.root} has no {NEGATIVE_COLUMN} column; "
                "exact pairs come from a LookBench-Synth snapshot"
            )
        gallery += rows
        photos = {str(r["item_ID"]): r for r in _read_rows(snapshot, subset, "query")}
        references.update(photos)
        variants: dict[str, list[dict[str, Any]]] = {}
        for row in rows:
            if row.get(NEGATIVE_COLUMN):
                variants.setdefault(str(row[NEGATIVE_COLUMN]), []).append(row)
        for product, found in variants.items():
            reference = photos.get(product)
            pairs = [(reference, v) for v in found] if reference is not None else []
            pairs += [(a, b) for i, a in enumerate(found) for b in found[i + 1 :]]
            for ref, tgt in pairs:
                changes = changes_between(_attributes(ref), _attributes(tgt), taxonomy)
                if changes and len(changes) <= MAX_CHANGES:
                    queries.append((product, _query(ref, tgt, changes)))
    if render:
        rendered, redrawn = _rendered_pairs(snapshot, references, taxonomy, workers)
        gallery += rendered
        queries += redrawn
    if not queries:
        raise SnapshotError(f"{snapshot.root}: no exact pairs found (no gallery row names a {NEGATIVE_COLUMN})")
    return gallery, queries


def _rendered_pairs(
    snapshot: Snapshot, references: Mapping[str, Mapping[str, Any]], taxonomy: Taxonomy, workers: int
) -> tuple[list[dict[str, Any]], list[tuple[str, dict[str, Any]]]]:
    """Gallery rows of the re-rendered two-change designs and their queries (the query photo as reference)."""
    plan = read_synth_plan(snapshot.root)
    targets = pair_targets(plan)
    for pair in targets:
        photo = references.get(pair.reference.product_id)
        if photo is None or _attributes(photo) != frozenset(pair.reference.all_attributes()):
            raise SnapshotError(
                f"{snapshot.root}: query {pair.reference.product_id} of {pair.subset} differs from the release its "
                "synth_manifest.json describes; re-rendered pairs need the release as generated"
            )
    rows = render_pair_targets(plan, targets, workers)
    queries = []
    for pair, row in zip(targets, rows, strict=True):
        reference = references[pair.reference.product_id]
        changes = changes_between(_attributes(reference), _attributes(row), taxonomy)
        if changes and len(changes) <= MAX_CHANGES:
            queries.append((pair.reference.product_id, _query(reference, row, changes)))
    return rows, queries


def _link_tree(source: Path, target: Path) -> None:
    """Hard-link (else copy) every file of the source snapshot except its manifest."""
    for path in sorted(source.rglob("*")):
        relative = path.relative_to(source)
        if not path.is_file() or relative.as_posix() == MANIFEST_NAME or relative.parts[0].startswith("."):
            continue
        if relative.parts[0] == COMPOSED:
            continue
        dest = target / relative
        dest.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.link(path, dest)
        except OSError:
            shutil.copy2(path, dest)


def derive_synth_composed(
    source: Snapshot,
    out: Path,
    validation: float = 0.2,
    seed: int = 0,
    overwrite: bool = False,
    render: bool = True,
    workers: int = 1,
) -> Path:
    """Write `out/<version>`: the source snapshot plus a `composed` subset of its exact pairs; return the folder.
    With `render`, each query product's design is also re-rendered with two groups changed (in `workers` processes).

    Products are split between the `query` and `validation` splits by a hash of their id (`validation` is the
    fraction held out). Built in a temporary folder beside the target and renamed into place.
    """
    if not 0.0 <= validation < 1.0:
        raise SnapshotError(f"validation fraction must lie in [0, 1), got {validation}")
    check_count("--workers", workers, MAX_PROCESSES, low=1)
    target = Path(out) / source.root.name
    if target.exists() and not overwrite:
        raise SnapshotError(f"{target} already exists; pass overwrite to replace it")
    if overwrite:
        refuse_unlisted(target)
    gallery, pairs = synth_pairs(source, render, workers)
    held = [row for product, row in pairs if in_validation(product, validation, seed)]
    scored = [row for product, row in pairs if not in_validation(product, validation, seed)]
    if not scored:
        raise SnapshotError(f"validation fraction {validation} leaves no query to score")
    with atomic_folder(target) as tmp:
        _link_tree(source.root, tmp)
        write_split(rows_to_table(gallery), tmp / COMPOSED / "gallery.parquet")
        write_split(composed_table(scored), tmp / COMPOSED / "query.parquet")
        if held:
            write_split(composed_table(held), tmp / COMPOSED / "validation.parquet")
        manifest = read_manifest(source.root)
        if manifest is not None:
            fields = {k: v for k, v in manifest.items() if k not in ("format", "files")}
            write_manifest(tmp, **fields, composed_from=source.content_hash)
    return target
