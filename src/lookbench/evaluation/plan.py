"""A run's plan: its protocol, cut-offs, window and noise pool, and each subset's kind, decided once before any image
is embedded and read by every stage after it (like MTEB's TaskMetadata); nothing downstream sniffs names again."""

from __future__ import annotations

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, model_validator

from lookbench._util.dates import snapshot_date
from lookbench._util.limits import MAX_K
from lookbench.errors import LookBenchError
from lookbench.evaluation.noise import NoisePool, noise_rows
from lookbench.evaluation.protocols import Protocol, protocol_of
from lookbench.evaluation.settings import EvalSettings
from lookbench.metrics.definitions import DEFAULT_KS
from lookbench.snapshot.reader import Snapshot
from lookbench.snapshot.schema import SubsetKind

_RECORD = ConfigDict(frozen=True, strict=True, extra="forbid", arbitrary_types_allowed=True)


class SubsetPlan(BaseModel):
    """One subset as the run scores it."""

    model_config = _RECORD

    name: str
    kind: SubsetKind
    """`composed`: reference image plus a change, scored by the composed task; `image`: plain retrieval."""


class Plan(BaseModel):
    """The snapshot a run reads, the facts every subset shares, and its subsets in scoring order."""

    model_config = _RECORD

    snapshot_id: str
    snapshot_name: str
    location: str
    subsets: tuple[SubsetPlan, ...] = Field(min_length=1)
    protocol: Protocol | None
    """The official protocol the snapshot's card names (a legacy benchmark); None for LookBench."""
    ks: tuple[int, ...] = Field(min_length=1)
    """Cut-offs, ascending and distinct."""
    since: np.datetime64 | None
    until: np.datetime64 | None
    fallback_date: np.datetime64 | None
    """The date of queries without `first_seen_at` when the run is windowed (the snapshot's date)."""
    noise: NoisePool
    noise_rows: int = Field(ge=0)
    """Noise rows searched after each subset's gallery (0 without the pool)."""

    @model_validator(mode="after")
    def _each_subset_once(self) -> Plan:
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

    @classmethod
    def of(cls, snapshot: Snapshot, settings: EvalSettings) -> Plan:
        """Decide the run's facts once; bad cut-offs, unknown subsets and an unknown protocol fail here."""
        protocol = protocol_of(snapshot)
        wanted = settings.ks if settings.ks is not None else DEFAULT_KS if protocol is None else protocol.ks
        ks = tuple(sorted(set(wanted)))
        if not ks or ks[0] < 1 or ks[-1] > MAX_K:
            raise LookBenchError(f"cut-offs must be positive integers up to {MAX_K}, got {settings.ks}")
        names = snapshot.check_subsets(settings.subsets) if settings.subsets else snapshot.subsets
        if not names:
            raise LookBenchError(f"snapshot {snapshot.root} has no subsets to evaluate")
        windowed = settings.since is not None or settings.until is not None
        return cls(
            snapshot_id=snapshot.snapshot_id,
            snapshot_name=snapshot.name,
            location=snapshot.location,
            subsets=tuple(SubsetPlan(name=name, kind=snapshot.kinds[name]) for name in names),
            protocol=protocol,
            ks=ks,
            since=settings.since,
            until=settings.until,
            fallback_date=snapshot_date(snapshot.snapshot_id) if windowed else None,
            noise=settings.noise,
            noise_rows=noise_rows(snapshot, settings.noise),
        )
