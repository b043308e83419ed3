"""Shards, markers and resume, on a job whose shards write parquet files (no model needed)."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from lookbench.errors import LookBenchError
from lookbench.shards.executor import Needs, Progress, ShardError, check_options
from lookbench.shards.local import LocalExecutor
from lookbench.shards.make import make_executor
from lookbench.shards.marker import read_marker, write_marker
from lookbench.shards.plan import Shard, shard_ranges
from lookbench.shards.table import Mapped, TableItems, TableJob, map_items

SCHEMA = pa.schema([("item", pa.string()), ("length", pa.int64())])


class Broken(ValueError):
    """What the mapper raises for an item it is told to fail on."""


@dataclass
class Lengths:
    """Opened mapper: each item's length; raises on `fail_on`."""

    fail_on: str | None
    seen: list[str] = field(default_factory=list)

    def __call__(self, items: list[Any], progress: Progress) -> Mapped:
        self.seen.extend(items)
        if self.fail_on in items:
            raise Broken(f"cannot map {self.fail_on!r}")
        progress(len(items))
        bad = {i: "empty" for i, item in enumerate(items) if not item}
        return Mapped([{"item": item, "length": len(item)} for item in items], bad=bad, stats={"chars": 1.0})

    def close(self) -> None:
        return None


@dataclass(frozen=True)
class LengthMapper:
    fail_on: str | None = None

    def open(self, slots: int) -> Lengths:
        return Lengths(self.fail_on)


def job(fail_on: str | None = None) -> TableJob:
    return TableJob("lengths", Needs("cpu"), SCHEMA, LengthMapper(fail_on))


ITEMS = [f"item-{i:02d}" + "x" * i for i in range(10)]


def run(folder: Path, items: list[str] = ITEMS, executor: Any = None, fail_on: str | None = None, sha: str = "v1"):
    return map_items(executor or LocalExecutor(), TableItems(job(fail_on), folder, items, items, sha, None, 3))


def test_ranges_align_to_batches_and_cover_every_row() -> None:
    assert shard_ranges(10, None, 4) == [(0, 4), (4, 8), (8, 10)]
    assert shard_ranges(10, 3, 1) == [(0, 4), (4, 8), (8, 10)]
    assert shard_ranges(10, 3, 1, align=8) == [(0, 8), (8, 10)]  # fewer shards than asked: batches stay whole
    assert shard_ranges(10, 50, 1) == [(i, i + 1) for i in range(10)]
    assert shard_ranges(0, 4, 16) == []
    with pytest.raises(LookBenchError, match="--shards"):
        shard_ranges(10, 0, 4)


def test_first_run_runs_every_shard_second_skips_them(tmp_path: Path) -> None:
    first = run(tmp_path)
    assert [r["length"] for r in first.rows] == [len(i) for i in ITEMS]
    assert (len(first.run.ran), len(first.run.skipped)) == (4, 0)
    assert first.stats == {"chars": 4.0}
    again = run(tmp_path)
    assert (len(again.run.ran), len(again.run.skipped)) == (0, 4)
    assert again.rows == first.rows


def test_corrupt_output_is_detected_and_only_its_shard_redone(tmp_path: Path) -> None:
    first = run(tmp_path)
    shard = sorted(first.run.markers, key=lambda s: s.start)[1]
    path = shard.output_path()
    path.write_bytes(path.read_bytes()[:-9] + b"corrupted")
    again = run(tmp_path)
    assert again.run.ran == [shard]
    assert again.rows == first.rows


def test_missing_output_or_foreign_marker_is_redone(tmp_path: Path) -> None:
    first = run(tmp_path)
    shards = sorted(first.run.markers, key=lambda s: s.start)
    shards[0].output_path().unlink()  # a marker whose output is gone
    marker = json.loads(shards[2].marker_path.read_text())
    marker["input_sha256"] = "0" * 64  # a marker written for other content
    shards[2].marker_path.write_text(json.dumps(marker))
    shards[3].marker_path.write_text("{not json")  # a torn or edited marker
    again = run(tmp_path)
    assert sorted(s.start for s in again.run.ran) == [shards[0].start, shards[2].start, shards[3].start]
    assert again.rows == first.rows


def test_changed_content_or_work_redoes_exactly_what_changed(tmp_path: Path) -> None:
    run(tmp_path)
    items = list(ITEMS)
    items[4] = "changed"
    changed = run(tmp_path, items)
    assert [(s.start, s.stop) for s in changed.run.ran] == [(3, 6)]
    assert changed.rows[4] == {"item": "changed", "length": 7}
    other_work = run(tmp_path, items, sha="v2")
    assert len(other_work.run.ran) == 4


def test_a_failing_shard_keeps_the_finished_ones(tmp_path: Path) -> None:
    with pytest.raises(Broken, match="cannot map"):
        run(tmp_path, fail_on=ITEMS[7])
    done = [p for p in tmp_path.glob("*.done.json")]
    assert len(done) == 2  # in this process, shards run in order: the two before the failing one finished
    again = run(tmp_path)
    assert (len(again.run.ran), len(again.run.skipped)) == (2, 2)


def test_bad_rows_and_counters_are_kept_in_markers(tmp_path: Path) -> None:
    items = ["a", "", "ccc", ""]
    result = map_items(LocalExecutor(), TableItems(job(), tmp_path, items, items, "v1", 2, 1))
    markers = result.run.in_order()
    assert [m.bad for m in markers] == [{1: "empty"}, {1: "empty"}]
    assert result.stats == {"chars": 2.0}
    assert read_marker(sorted(result.run.markers, key=lambda s: s.start)[0]) == markers[0]


def test_worker_processes_write_the_same_bytes(tmp_path: Path) -> None:
    here = run(tmp_path / "here")
    there = run(tmp_path / "there", executor=LocalExecutor(processes=2))
    assert there.rows == here.rows
    names = sorted(p.name for p in (tmp_path / "here").glob("*.parquet"))
    assert names == sorted(p.name for p in (tmp_path / "there").glob("*.parquet"))
    for name in names:
        assert (tmp_path / "here" / name).read_bytes() == (tmp_path / "there" / name).read_bytes()


def test_an_error_in_a_worker_process_reaches_the_driver_with_its_message(tmp_path: Path) -> None:
    with pytest.raises(Broken, match="cannot map 'item-05"):
        run(tmp_path, executor=LocalExecutor(processes=2), fail_on=ITEMS[5])
    again = run(tmp_path, executor=LocalExecutor(processes=2))
    assert len(again.run.skipped) >= 1 and len(again.run.ran) >= 1


def test_a_marker_is_written_by_atomic_rename_and_never_half(tmp_path: Path) -> None:
    result = run(tmp_path)
    shard = next(iter(result.run.markers))
    marker = result.run.markers[shard]
    write_marker(shard, marker)
    assert not list(tmp_path.glob(".*.tmp"))
    assert read_marker(Shard(shard.job, shard.start, shard.stop, shard.input_sha256, "other", tmp_path)) is None


@pytest.mark.parametrize(
    ("name", "processes", "address", "shards", "message"),
    [
        ("slurm", None, None, None, "--executor: expected one of local, ray"),
        ("local", 0, None, None, "--processes"),
        ("local", None, None, -2, "--shards"),
        ("local", None, "10.0.0.1:6379", None, "--ray-address applies to --executor ray"),
    ],
)
def test_bad_options_are_refused(
    name: str, processes: int | None, address: str | None, shards: int | None, message: str
) -> None:
    with pytest.raises(LookBenchError, match=message):
        check_options(name, processes, address, shards)
    if shards is None:
        with pytest.raises(LookBenchError, match=message):
            make_executor(name, processes, address)


def test_a_ray_address_without_a_head_is_refused_in_seconds() -> None:
    from lookbench.shards.ray_executor import check_reachable

    with socket.socket() as sock:  # a port nobody listens on: bound, never listening
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
        with pytest.raises(ShardError, match=f"no Ray head answers at 127.0.0.1:{port}"):
            check_reachable(f"127.0.0.1:{port}")
    for bad in ("nonsense", "host:", ":6379", "host:port"):
        with pytest.raises(ShardError, match="expected HOST:PORT"):
            check_reachable(bad)
    for fine in (None, "", "auto", "local"):
        check_reachable(fine)


GPU_SCHEMA = pa.schema([("item", pa.string()), ("device", pa.string()), ("pid", pa.int64())])


@dataclass(frozen=True)
class WhereMapper:
    """Records, per item, the GPU the worker was pinned to and the worker's process."""

    def open(self, slots: int) -> Where:
        return Where()


class Where:
    def __call__(self, items: list[Any], progress: Progress) -> Mapped:
        device = os.environ.get("CUDA_VISIBLE_DEVICES", "unpinned")
        return Mapped([{"item": item, "device": device, "pid": os.getpid()} for item in items])

    def close(self) -> None:
        return None


def test_a_gpu_job_gets_one_worker_process_per_gpu_each_pinned_to_its_own(tmp_path: Path) -> None:
    executor = LocalExecutor()
    executor._gpus = 2  # as on a machine with two CUDA devices: the pinning happens before CUDA starts
    gpu_job = TableJob("where", Needs("gpu", stateful=True), GPU_SCHEMA, WhereMapper())
    assert executor.workers(gpu_job) == 2 and executor.workers(job()) == 1
    items = [f"image-{i}" for i in range(8)]
    result = map_items(executor, TableItems(gpu_job, tmp_path, items, items, "v1", 8, 1))
    by_pid: dict[int, set[str]] = {}
    for row in result.rows:
        by_pid.setdefault(row["pid"], set()).add(row["device"])
    assert os.getpid() not in by_pid and 1 <= len(by_pid) <= 2  # (a worker slow to start may get no shard)
    pinned = [device for devices in by_pid.values() for device in devices]
    assert len(pinned) == len(by_pid) and len(set(pinned)) == len(pinned) and set(pinned) <= {"0", "1"}


def test_ray_is_imported_only_by_the_ray_executor() -> None:
    code = (
        "import sys; import lookbench.cli.main, lookbench.embeddings.sharded, lookbench.release.pipeline; "
        "from lookbench.shards.make import make_executor; make_executor('local', 2).close(); "
        "print('ray' in sys.modules)"
    )
    found = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert found.stdout.strip() == "False"


def test_the_ray_executor_without_ray_names_the_extra_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # as where Ray is not installed
    with pytest.raises(ShardError, match=r"--executor ray needs Ray: pip install 'lookbench\[ray\]'"):
        make_executor("ray")


@contextlib.contextmanager
def listener(reply: Callable[[socket.socket], None]) -> Iterator[int]:
    """A TCP server on loopback that is not Ray: each connection gets `reply`; yields its port."""
    server = socket.create_server(("127.0.0.1", 0))
    done = threading.Event()

    def serve() -> None:
        server.settimeout(0.2)
        while not done.is_set():
            try:
                connection, _ = server.accept()
            except TimeoutError:
                continue
            with connection:
                reply(connection)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield server.getsockname()[1]
    finally:
        done.set()
        thread.join()
        server.close()


def _silent(connection: socket.socket) -> None:
    while connection.recv(1024):  # reads whatever comes, answers nothing, until the client hangs up
        pass


def _http1(connection: socket.socket) -> None:
    connection.recv(1024)
    connection.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")


def _trickle(connection: socket.socket) -> None:
    for byte in b"\x00\x00\x00\x04\x00\x00\x00\x00":  # never the ninth byte: 8 seconds of almost a SETTINGS frame
        connection.sendall(bytes([byte]))
        time.sleep(1.5)


@pytest.mark.slow
@pytest.mark.parametrize("reply", [_silent, _http1, _trickle])
def test_a_ray_address_where_something_else_listens_is_refused_in_10_s(reply: Callable[[socket.socket], None]) -> None:
    from lookbench.shards.ray_executor import check_reachable

    with listener(reply) as port:
        started = time.monotonic()
        with pytest.raises(ShardError, match=f"what listens at 127.0.0.1:{port} is not a Ray head"):
            check_reachable(f"127.0.0.1:{port}")
        assert time.monotonic() - started < 11
