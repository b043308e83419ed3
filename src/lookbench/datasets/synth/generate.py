"""Generate a LookBench-Synth snapshot: plan it, render it in parallel tasks, stream the rows to parquet.

Files are written into `OUT/.vYYYYMMDD.<key>.partial/`, each moved into place only when complete; an interrupted
run leaves the finished files there and the next run with the same seed, release and size (and, for a training
release, exclusion) resumes after them; one under another `--exhausted-categories` is refused while they are there.
When every file is done the folder is renamed to `OUT/vYYYYMMDD` (atomic: a reader sees all of it or nothing)."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from lookbench._util.atomic import write_text_atomic
from lookbench._util.limits import MAX_PROCESSES, check_count
from lookbench._util.outfolder import refuse_unlisted
from lookbench.datasets.synth.catalogue import GALLERY_CATEGORIES, NOISE_ONLY
from lookbench.datasets.synth.disjoint import DEFAULT_EXCLUSION, excluded_designs, exclusion_key
from lookbench.datasets.synth.parallel import available_cpus, ordered_map
from lookbench.datasets.synth.plan import NOISE_CHUNK, NOISE_SHARD, NoiseBasis, ReleasePlan, plan_release
from lookbench.datasets.synth.release import DEFAULT_RELEASE, DEFAULT_SEED, release_window, version_name
from lookbench.datasets.synth.shots import FRAMES
from lookbench.datasets.synth.street import SCENE_SIZE
from lookbench.datasets.synth.studio import STUDIO_SIZE
from lookbench.datasets.synth.tasks import GENERATOR_VERSION, SCHEMAS, Kind, RenderTask, run_task, set_noise_basis
from lookbench.datasets.synth.training import EXHAUSTED_POLICIES, TrainingPlan, plan_training
from lookbench.errors import SnapshotError
from lookbench.snapshot.schema import NOISE, TRAIN
from lookbench.snapshot.synth_manifest import MANIFEST
from lookbench.snapshot.writer import SplitWriter

STUDIO_CHUNK = 32
SCENE_CHUNK = 4
CATALOGUE_CHUNK = 64
"""Rows (street scenes for SCENE_CHUNK) per rendering task and parquet row group."""
INLINE_BELOW = 400
"""Releases with fewer images render in this process by default (starting workers would take longer)."""

Progress = Callable[[str], None]
PURPOSES = ("eval", "validation", "train")
"""`eval`: a benchmark release (queries, galleries, noise); `validation`: the same kind of release, named as one and
never with the default snapshot's seed and date (what `lookbench train` validates and chooses on); `train`: `train`
splits of several views per product."""


@dataclass(frozen=True)
class FileJob:
    """One parquet file of the snapshot and the tasks whose rows it holds, in order."""

    path: str
    kind: Kind
    tasks: tuple[RenderTask, ...]

    @property
    def rows(self) -> int:
        """Rows the file will hold."""
        return sum(task_rows(task) for task in self.tasks)


def task_rows(task: RenderTask) -> int:
    """Rows a task renders: one per studio query, catalogue shot or distractor, one per queried street garment."""
    if task.kind == "scene":
        return sum(len(scene.queried) for scene in task.items)
    if task.kind == "noise":
        return sum(chunk.count for chunk in task.items)
    return len(task.items)


def is_written(path: Path, rows: int) -> bool:
    """True if `path` is a readable parquet file with `rows` rows (a resumed run trusts nothing else)."""
    try:
        return pq.ParquetFile(path).metadata.num_rows == rows
    except (OSError, pa.ArrowException):
        return False


def snapshot_name(release: date, size: str, seed: int) -> str:
    """The snapshot's name, distinct per release, renderer, size and seed: `v20260601-synth-6-small-seed0`."""
    return f"{version_name(release)}-{GENERATOR_VERSION}-{size}-seed{seed}"


def _chunks(items: list[Any], size: int) -> Iterator[tuple[Any, ...]]:
    for start in range(0, len(items), size):
        yield tuple(items[start : start + size])


def file_jobs(plan: ReleasePlan) -> list[FileJob]:
    """Every file of the release with its tasks: per subset the queries then the gallery, then the noise shards."""

    def task(kind: Kind, style: str, items: tuple[Any, ...]) -> RenderTask:
        return RenderTask(kind, style, items, plan.seed, plan.release)  # type: ignore[arg-type]

    jobs = []
    for sub in plan.subsets:
        if sub.street:
            queries = tuple(task("scene", sub.style, c) for c in _chunks(sub.scenes, SCENE_CHUNK))
        else:
            queries = tuple(task("studio", sub.style, c) for c in _chunks(sub.studio, STUDIO_CHUNK))
        jobs.append(FileJob(f"{sub.subset}/query.parquet", "scene" if sub.street else "studio", queries))
        gallery = tuple(task("catalogue", "real", c) for c in _chunks(sub.gallery, CATALOGUE_CHUNK))
        jobs.append(FileJob(f"{sub.subset}/gallery.parquet", "catalogue", gallery))
    noise = [task("noise", "real", (chunk,)) for chunk in plan.noise_chunks()]
    per_shard = NOISE_SHARD // NOISE_CHUNK
    shards = list(_chunks(noise, per_shard))
    for index, tasks in enumerate(shards):
        jobs.append(FileJob(f"{NOISE}/gallery-{index:05d}-of-{len(shards):05d}.parquet", "noise", tasks))
    return jobs


def training_file_jobs(plan: TrainingPlan) -> list[FileJob]:
    """Every file of a training release: per subset one `train` split of its views (real_studio_flat: catalogue
    shots, then real studio shots; aigen_studio: aigen studio shots; the street-look subsets: that style's crops)."""

    def tasks(kind: Kind, style: str, items: list[Any], size: int) -> tuple[RenderTask, ...]:
        return tuple(
            RenderTask(kind, style, chunk, plan.seed, plan.release, training=True)  # type: ignore[arg-type]
            for chunk in _chunks(items, size)
        )

    flat = tasks("catalogue", "real", plan.catalogue, CATALOGUE_CHUNK) + tasks(
        "studio", "real", plan.studio["real"], STUDIO_CHUNK
    )
    return [
        FileJob(f"real_studio_flat/{TRAIN}.parquet", "train", flat),
        FileJob(f"aigen_studio/{TRAIN}.parquet", "train", tasks("studio", "aigen", plan.studio["aigen"], STUDIO_CHUNK)),
        FileJob(f"real_streetlook/{TRAIN}.parquet", "train", tasks("scene", "real", plan.scenes["real"], SCENE_CHUNK)),
        FileJob(
            f"aigen_streetlook/{TRAIN}.parquet", "train", tasks("scene", "aigen", plan.scenes["aigen"], SCENE_CHUNK)
        ),
    ]


def manifest(
    plan: ReleasePlan | TrainingPlan,
    jobs: list[FileJob],
    purpose: str = "eval",
    excluded: list[str] | None = None,
    exhausted: str = "fail",
) -> dict[str, Any]:
    """What produced the snapshot, its name, purpose, files and row counts (and a training release's exclusions and,
    unless exhausted categories fail, the categories it left out)."""
    start, end = release_window(plan.release)
    training = isinstance(plan, TrainingPlan)
    dropped: tuple[str, ...] = ()
    extra: dict[str, Any] = {}
    if isinstance(plan, TrainingPlan):
        dropped = plan.dropped
        extra = {"excluded_designs": excluded or [], "redrawn_products": plan.redrawn}
        if exhausted != "fail":
            extra |= {"exhausted_categories": exhausted, "dropped_categories": list(plan.dropped)}
    return {
        **extra,
        "generator": GENERATOR_VERSION,
        "name": snapshot_name(plan.release, plan.size, plan.seed) + ("" if purpose == "eval" else f"-{purpose}"),
        "purpose": purpose,
        "seed": plan.seed,
        "release": plan.release.isoformat(),
        "size": plan.size,
        "window": [start.isoformat(), end.isoformat()],
        "image_size": STUDIO_SIZE,
        "shop_frames": [list(frame) for frame in FRAMES],
        "scene_size": list(SCENE_SIZE),
        "gallery_categories": [c for c in GALLERY_CATEGORIES if c not in dropped],
        "noise_only_categories": [] if training else list(NOISE_ONLY),
        "rows": plan.counts(),
        "files": [job.path for job in jobs],
    }


def _make_readable(folder: Path) -> None:
    """Give the finished tree the usual umask permissions (temporary files are created private)."""
    umask = os.umask(0)
    os.umask(umask)
    folder.chmod(0o777 & ~umask)
    for path in folder.rglob("*"):
        path.chmod((0o777 if path.is_dir() else 0o666) & ~umask)


def render_files(
    plan: ReleasePlan | TrainingPlan, folder: Path, workers: int, progress: Progress | None = None
) -> list[FileJob]:
    """Render every file of the plan not yet in `folder`; rows stream to parquet in task order."""
    jobs = training_file_jobs(plan) if isinstance(plan, TrainingPlan) else file_jobs(plan)
    basis = plan.basis if isinstance(plan, ReleasePlan) else NoiseBasis()
    todo = [job for job in jobs if not is_written(folder / job.path, job.rows)]
    say = progress or (lambda _msg: None)
    if len(todo) < len(jobs):
        say(f"resuming: {len(jobs) - len(todo)} of {len(jobs)} files already written")
    tasks = [t for job in todo for t in job.tasks]
    results = ordered_map(run_task, tasks, workers, initializer=set_noise_basis, initargs=(basis,))
    try:
        for job in todo:
            writer = SplitWriter(folder / job.path, SCHEMAS[job.kind])
            try:
                for _ in job.tasks:
                    table: pa.Table = next(results)
                    writer.write(table)
            except BaseException:
                writer.abort()
                raise
            writer.close()
            say(f"{job.path}: {writer.rows} rows")
    finally:
        results.close()
    return jobs


def _partial_folder(target: Path, size: str, seed: int, purpose: str, excluded: list[str], exhausted: str) -> Path:
    """Where a run renders before the rename; its name keys every setting that changes the files."""
    tag = f"{GENERATOR_VERSION}-{size}-seed{seed}" + (f"-train-{exclusion_key(excluded)}" if purpose == "train" else "")
    tag += f"-{exhausted}" if purpose == "train" and exhausted != "fail" else ""
    return target.with_name(f".{target.name}.{tag}.partial")


def _refuse_another_policys_partial(target: Path, size: str, seed: int, excluded: list[str], exhausted: str) -> None:
    """Refuse to start a training release beside an interrupted run of it under another `--exhausted-categories`."""
    for policy in EXHAUSTED_POLICIES:
        other = _partial_folder(target, size, seed, "train", excluded, policy)
        if policy != exhausted and other.is_dir():
            raise SnapshotError(
                f"{other} holds an interrupted run of this release with --exhausted-categories {policy}; rerun with "
                f"{policy} to resume it, or delete that folder to start over with {exhausted}"
            )


def generate_snapshot(
    out: Path,
    release: date,
    size: str = "small",
    seed: int = 0,
    overwrite: bool = False,
    workers: int | None = None,
    progress: Progress | None = None,
    purpose: str = "eval",
    exclude_designs: list[str] | None = None,
    exhausted: str = "fail",
) -> Path:
    """Generate `out/vYYYYMMDD` with `workers` processes (default: one per CPU, inline for tiny releases),
    resuming an interrupted run; return it. Any number of workers gives the same bytes. `purpose` is `eval` (a
    benchmark release), `validation` (the same, never the default snapshot's seed and date) or `train` (several
    views per product, clear of the designs of the evaluation releases `exclude_designs` names; default: the
    default snapshot's, see `synth.disjoint`); a category whose every design they hold is refused, or left out with
    `exhausted="drop"`. `overwrite` replaces only a release that the marker of `out` lists as lookbench's."""
    if purpose not in PURPOSES:
        raise SnapshotError(f"unknown synth purpose {purpose!r}; known: {', '.join(PURPOSES)}")
    if purpose == "validation" and (seed, release) == (DEFAULT_SEED, DEFAULT_RELEASE):
        raise SnapshotError(
            f"a validation release with the default snapshot's seed {seed} and date {release} would be the default "
            "snapshot itself; pick another seed and date (e.g. --seed 1 --release 2026-05-01)"
        )
    target = Path(out) / version_name(release)
    if target.exists() and not overwrite:
        raise SnapshotError(f"{target} already exists; pass overwrite to replace it")
    if overwrite:
        refuse_unlisted(target)
    excluded = list(DEFAULT_EXCLUSION if exclude_designs is None else exclude_designs)
    work = _partial_folder(target, size, seed, purpose, excluded, exhausted)
    if purpose == "train":
        _refuse_another_policys_partial(target, size, seed, excluded, exhausted)
    plan: ReleasePlan | TrainingPlan
    if purpose == "train":
        plan = plan_training(seed, release, size, excluded_designs(excluded), exhausted)
        if plan.dropped and progress is not None:
            progress(f"left out, every design excluded: {', '.join(plan.dropped)}")
    else:
        plan = plan_release(seed, release, size)
    images = plan.total_images() if isinstance(plan, TrainingPlan) else plan.preset.total_images()
    if workers is not None:
        check_count("--workers", workers, MAX_PROCESSES, low=1)
    if workers is None:
        workers = 1 if images < INLINE_BELOW else available_cpus()
    try:
        work.mkdir(parents=True, exist_ok=True)
        jobs = render_files(plan, work, workers, progress)
        record = manifest(plan, jobs, purpose, excluded, exhausted)
        write_text_atomic(work / MANIFEST, json.dumps(record, indent=2, sort_keys=True) + "\n")
        _make_readable(work)
        if target.exists() and overwrite:
            old = target.with_name(f".{target.name}.old-{os.getpid()}")
            os.replace(target, old)
            os.replace(work, target)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(work, target)
    except OSError as exc:
        if target.is_dir() and not work.exists():
            return target  # a concurrent run of the same release finished first; its content is identical
        raise SnapshotError(f"cannot generate the Synth release {target}: {exc}") from exc
    return target
