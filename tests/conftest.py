"""Shared fixtures: small snapshots written in the exact released layout."""

from __future__ import annotations

import io
import os
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import HTTPServer
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image

from lookbench.snapshot.writer import image_value, rows_to_table, write_split

# Rich wraps console output at 80 columns when not on a terminal, so a long temporary path (an xdist worker's is
# longer) would break the one-line messages the tests read; every console built after this reads it.
os.environ["COLUMNS"] = "400"


@contextmanager
def serving(httpd: HTTPServer) -> Iterator[int]:
    """Serve `httpd` on a daemon thread until the block ends; yields its port."""
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield int(httpd.server_address[1])
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)


def write_files(path: Path, contents: dict[str, bytes]) -> Path:
    """Write `{relative name: bytes}` under `path` (a folder of a user's own files) and return it."""
    for name, data in contents.items():
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        (path / name).write_bytes(data)
    return path


def files_under(path: Path) -> dict[str, bytes]:
    """Every file under `path` by its relative name."""
    return {p.relative_to(path).as_posix(): p.read_bytes() for p in path.rglob("*") if p.is_file()}


def png_bytes(seed: int, size: int = 16) -> bytes:
    """A small deterministic RGB PNG."""
    rng = np.random.default_rng(seed)
    array = rng.integers(0, 256, size=(size, size, 3), dtype=np.uint8)
    buf = io.BytesIO()
    Image.fromarray(array).save(buf, format="PNG")
    return buf.getvalue()


def make_row(
    item_id: str,
    category: str,
    main: str,
    others: Sequence[str] = (),
    seed: int = 0,
    raw: bytes | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """One split row with every required column."""
    return {
        "image": image_value(png_bytes(seed), f"{item_id}.png"),
        "raw_image": image_value(raw, f"{item_id}_raw.png") if raw is not None else None,
        "category": category,
        "main_attribute": main,
        "other_attributes": list(others),
        "bbox": [0.0, 0.0, 16.0, 16.0],
        "item_ID": item_id,
        "task": "retrieval",
        "difficulty": "easy",
        **extra,
    }


SnapshotSpec = dict[str, dict[str, list[dict[str, Any]]]]


def write_snapshot(root: Path, spec: SnapshotSpec, version: str = "v20260101") -> Path:
    """Write `{subset: {split: rows}}` as a snapshot folder and return it."""
    snap = root / version
    for subset, splits in spec.items():
        for split, rows in splits.items():
            write_split(rows_to_table(rows), snap / subset / f"{split}.parquet")
    return snap


@pytest.fixture
def make_snapshot(tmp_path: Path) -> Callable[..., Path]:
    """Factory fixture: write a snapshot spec under tmp_path."""

    def factory(spec: SnapshotSpec, version: str = "v20260101") -> Path:
        return write_snapshot(tmp_path, spec, version)

    return factory


RAY_CPUS = 2
"""The test cluster's CPU slots: CI's 2 cores."""
RAY_OBJECT_STORE = 256 * 2**20
"""Bytes of the test cluster's object store (Ray's default takes 30% of RAM; the tests move a few MB)."""


@dataclass(frozen=True)
class RayCluster:
    """The session's Ray module, and the file whose presence makes a `python:thumbs` worker kill itself once."""

    ray: Any
    die_at: Path


@pytest.fixture(scope="session")
def ray_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RayCluster]:
    """A local Ray cluster of 2 CPUs, started once for the session (auth disabled), shut down at its end.

    Its workers import lookbench as this process does, and the test helper modules (python: models, mappers).
    """
    ray = pytest.importorskip("ray")
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if worker is not None:  # every worker's temporary folder shares one parent
        started = tmp_path_factory.getbasetemp().parent / "ray-cluster-started-by"
        started.mkdir(exist_ok=True)
        (started / worker).touch()
        others = sorted(p.name for p in started.iterdir() if p.name != worker)
        assert not others, f"Ray tests ran on {others} too: `--dist loadgroup` did not group them (pytest-xdist#1386)"
    tests = Path(__file__).parent
    paths = [str(tests), str(tests / "shards"), str(tests / "release"), *sys.path]
    die_at = tmp_path_factory.mktemp("ray") / "die-at"
    env = {"PYTHONPATH": os.pathsep.join(p for p in paths if p), "LOOKBENCH_TEST_DIE": str(die_at)}
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("RAY_AUTH_MODE", "disabled")  # Ray >= 2.52 turns token auth on for a new local cluster
        ray.init(
            num_cpus=RAY_CPUS,
            object_store_memory=RAY_OBJECT_STORE,
            include_dashboard=False,
            log_to_driver=False,
            runtime_env={"env_vars": env},
        )
        try:
            yield RayCluster(ray, die_at)
        finally:
            ray.shutdown()


ONE_WORKER_MODULES = frozenset(
    {
        "datasets/synth/test_synth_plan.py",
        "datasets/synth/test_synth_shots.py",
        "datasets/synth/test_synth_snapshot.py",
        "datasets/synth/test_synth_training.py",
        "evaluation/composed/test_composed_derive.py",
        "publish/site/test_browser.py",
        "release/test_release_labelling.py",
        "shards/test_sharded_embedding.py",
    }
)
"""Modules whose module-scoped fixtures (generated releases, a built site, two browsers) take seconds: their tests
run on one worker, which builds each fixture once instead of once per worker."""


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist's own, which reads the groups
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Under `pytest -n N --dist loadgroup` every Ray test runs on one worker, which starts the one cluster, and each
    module of ONE_WORKER_MODULES on one worker; these groups go first, then the tests marked slow, so that the short
    tests fill the end (xdist deals out tests in this order)."""
    tests = Path(__file__).parent
    for item in items:
        if item.get_closest_marker("ray"):
            item.add_marker(pytest.mark.xdist_group("ray"))
        elif item.path.relative_to(tests).as_posix() in ONE_WORKER_MODULES:
            item.add_marker(pytest.mark.xdist_group(item.path.stem))

    def rank(item: pytest.Item) -> int:
        group = item.get_closest_marker("xdist_group")
        if group is not None:
            return 0 if group.args[0] == "ray" else 1
        return 2 if item.get_closest_marker("slow") else 3

    items.sort(key=rank)
