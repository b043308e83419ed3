"""Choose an Executor by name (`--executor`): the local one or Ray."""

from __future__ import annotations

from lookbench.shards.executor import Executor, check_options


def make_executor(name: str, processes: int | None = None, address: str | None = None) -> Executor:
    """`local` (this machine: this process, or `processes` worker processes; one per GPU for a GPU job when
    several are present) or `ray` (the cluster at `address`, else RAY_ADDRESS or a local one)."""
    check_options(name, processes, address, None)
    if name == "ray":
        from lookbench.shards.ray_executor import RayExecutor

        return RayExecutor(address, processes)
    from lookbench.shards.local import LocalExecutor

    return LocalExecutor(processes)
