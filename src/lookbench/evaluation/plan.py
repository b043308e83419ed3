"""A run's plan: each subset's facts (kind, protocol, cut-offs, window, noise), decided once before any image is
embedded and read by every stage after it (like MTEB's TaskMetadata); nothing downstream sniffs names again."""

from __future__ import annotations

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, model_validator

from lookbench._util.dates import snapshot_date
from lookbench._util.limits import MAX_K
from lookbench.errors import LookBenchError
from lookbench.evaluation.noise import NoisePool, noise_rows
from lookbench.evaluation.settings import EvalSettings
from lookbench.metrics.definitions import DEFAULT_KS
from lookbench.results.protocols import PROTOCOLS, Protocol, protocol_of
from lookbench.snapshot.reader import Snapshot
from lookbench.snapshot.schema import SubsetKind

_RECORD = ConfigDict(frozen=True, strict=True, extra="forbid", arbitrary_types_allowed=True)


class SubsetPlan(BaseModel):
    """One subset as the run scores it."""

    model_config = _RECORD

    name: str
    kind: SubsetKind
    """`composed`: reference image plus a change, scored by the composed task; `image`: plain retrieval."""
    protocol: str | None
    """The official protocol the snapshot's card names (a legacy benchmark); None for LookBench."""
    ks: tuple[int, ...] = Field(min_length=1)
    """Cut-offs, ascending and distinct."""
    since: np.datetime64 | None
    until: np.datetime64 | None
    fallback_date: np.datetime64 | None
    """The date of queries without `first_seen_at` when the run is windowed (the snapshot's date)."""
    noise: NoisePool
    noise_rows: int = Field(ge=0)
    """Noise rows searched after the subset's gallery (0 without the pool)."""


class RunPlan(BaseModel):
    """The snapshot a run reads and its subsets' plans, in scoring order."""

    model_config = _RECORD

    snapshot_id: str
    snapshot_name: str
    location: str
    subsets: tuple[SubsetPlan, ...] = Field(min_length=1)

    @model_validator(mode="after")
    def _one_run(self) -> RunPlan:
        """One protocol, cut-offs, window and noise pool for the whole run; each subset once."""
        shared = {(s.protocol, s.ks, s.since, s.until, s.fallback_date, s.noise, s.noise_rows) for s in self.subsets}
        if len(shared) != 1:
            raise ValueError("a run's subsets share its protocol, cut-offs, window and noise pool")
        if len(set(self.names)) != len(self.subsets):
            raise ValueError(f"a subset is planned twice: {', '.join(self.names)}")
        return self

    @property
    def names(self) -> tuple[str, ...]:
        """The subsets, in scoring order."""
        return tuple(s.name for s in self.subsets)

    @property
    def composed(self) -> tuple[str, ...]:
        """The composed subsets, in scoring order."""
        return tuple(s.name for s in self.subsets if s.kind == "composed")

    @property
    def run(self) -> SubsetPlan:
        """The facts every subset shares (the first subset's)."""
        return self.subsets[0]

    @property
    def ks(self) -> tuple[int, ...]:
        """The run's cut-offs."""
        return self.run.ks

    @property
    def noise_rows(self) -> int:
        """Noise rows searched with every subset."""
        return self.run.noise_rows

    def official(self) -> Protocol | None:
        """The run's official protocol, as decided when planning."""
        return None if self.run.protocol is None else PROTOCOLS[self.run.protocol]


def build_plan(snapshot: Snapshot, settings: EvalSettings) -> RunPlan:
    """Decide each requested subset's facts once; bad cut-offs, unknown subsets and an unknown protocol fail here."""
    protocol = protocol_of(snapshot)
    wanted = settings.ks if settings.ks is not None else DEFAULT_KS if protocol is None else protocol.ks
    ks = tuple(sorted(set(wanted)))
    if not ks or ks[0] < 1 or ks[-1] > MAX_K:
        raise LookBenchError(f"cut-offs must be positive integers up to {MAX_K}, got {settings.ks}")
    names = snapshot.check_subsets(settings.subsets) if settings.subsets else snapshot.subsets
    if not names:
        raise LookBenchError(f"snapshot {snapshot.root} has no subsets to evaluate")
    windowed = settings.since is not None or settings.until is not None
    fallback = snapshot_date(snapshot.snapshot_id) if windowed else None
    rows = noise_rows(snapshot, settings.noise)
    subsets = tuple(
        SubsetPlan(
            name=name,
            kind=snapshot.kinds[name],
            protocol=None if protocol is None else protocol.name,
            ks=ks,
            since=settings.since,
            until=settings.until,
            fallback_date=fallback,
            noise=settings.noise,
            noise_rows=rows,
        )
        for name in names
    )
    return RunPlan(
        snapshot_id=snapshot.snapshot_id,
        snapshot_name=snapshot.name,
        location=snapshot.location,
        subsets=subsets,
    )
