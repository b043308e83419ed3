"""Contamination flags: the date rule (LiveCodeBench) and the training-data rule (MTEB)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from dataclasses import asdict, dataclass

from lookbench.models.meta import ModelMeta

BENCHMARK_NAMES = frozenset({"lookbench"})
"""Training-data names that cover every snapshot."""

MARKS = {"date": "‡", "data": "†", "unknown": "?"}
"""Short marks shown next to model names in tables."""


@dataclass(frozen=True)
class Flag:
    """One reason a run's numbers may be inflated by training on the evaluated samples."""

    kind: str
    reason: str

    @property
    def mark(self) -> str:
        """The short table mark of this kind."""
        return MARKS[self.kind]

    def to_dict(self) -> dict[str, str]:
        """A JSON-ready form with the mark."""
        return {**asdict(self), "mark": self.mark}


def date_flags(meta: ModelMeta, window_start: dt.date | None) -> list[Flag]:
    """Flag a training cutoff (else, as its proxy, a release date) on or after the window start.

    The declared cutoff is the better evidence: a model released after the window start but trained on data
    cut off before it is not flagged. A card declaring neither date gets the 'unknown' flag.
    """
    if meta.release_day is None and meta.cutoff_day is None:
        return [Flag("unknown", "the model card declares neither a release date nor a training cutoff")]
    label, value, given = (
        ("training cutoff", meta.cutoff_day, meta.cutoff_text)
        if meta.cutoff_day
        else ("release date", meta.release_day, meta.release_text)
    )
    if window_start is None or value is None or value < window_start:
        return []
    return [Flag("date", f"{label} {given or value.isoformat()} is on or after the window start {window_start}")]


def data_flags(meta: ModelMeta, snapshot_id: str, sources: Iterable[str] = ()) -> list[Flag]:
    """Flag a card whose training data names this snapshot, the benchmark itself, or a source of its samples."""
    wanted = {snapshot_id.lower(): f"snapshot {snapshot_id}"}
    wanted.update({name: "the LookBench benchmark" for name in BENCHMARK_NAMES})
    wanted.update({s.lower(): f"source {s!r} of evaluated samples" for s in sources if s})
    out = []
    for name in meta.training_data:
        what = wanted.get(name.lower())
        if what is not None:
            out.append(Flag("data", f"the model card lists {what} among its training data ({name!r})"))
    return out


def contamination_flags(
    meta: ModelMeta, window_start: dt.date | None, snapshot_id: str, sources: Iterable[str] = ()
) -> list[Flag]:
    """Every flag for one run in one window."""
    return date_flags(meta, window_start) + data_flags(meta, snapshot_id, sources)


def marks(flags: Iterable[Flag]) -> str:
    """The distinct marks of some flags, in a fixed order."""
    kinds = {f.kind for f in flags}
    return "".join(MARKS[k] for k in MARKS if k in kinds)
