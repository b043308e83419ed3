"""Which runs may share a ranking (the same release, window, noise setting and protocol), and each run's identity."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from lookbench._util.dates import version_date
from lookbench.errors import ResultError
from lookbench.publish.reports.labels import run_title, run_window
from lookbench.results.schema import ResultFile


@dataclass(frozen=True)
class RunGroup:
    """Runs (indices) that may be ranked together, and the title that says what they share."""

    title: str
    members: list[int]


def _key(result: ResultFile) -> tuple[str, str, str, str, str]:
    config = result.config
    return (
        result.snapshot.content_hash,
        run_window(result) or "",
        config.noise,
        config.protocol or "",
        config.fine_rule,
    )


def _release_day(result: ResultFile) -> dt.date:
    try:
        return version_date(result.snapshot.id) or dt.date.min
    except ValueError:
        return dt.date.min


def _group_title(result: ResultFile, same_id_elsewhere: bool) -> str:
    config = result.config
    parts = [result.snapshot.id + (f" (content {result.snapshot.content_hash[:8]})" if same_id_elsewhere else "")]
    parts.append(f"window {run_window(result)}" if result.config.window else "every date")
    parts.append("no noise pool" if config.noise == "none" else "with the noise pool")
    if config.protocol:
        parts.append(f"protocol {config.protocol}")
    if config.fine_rule != "main":
        parts.append(f"fine rule {config.fine_rule}")
    return ", ".join(parts)


def comparable_groups(results: Sequence[ResultFile]) -> list[RunGroup]:
    """Runs grouped by release content, own window, noise setting, protocol and fine rule; newest release first."""
    keyed: dict[tuple[str, str, str, str, str], list[int]] = {}
    for i, result in enumerate(results):
        keyed.setdefault(_key(result), []).append(i)
    hashes_per_id: dict[str, set[str]] = {}
    for result in results:
        hashes_per_id.setdefault(result.snapshot.id, set()).add(result.snapshot.content_hash)

    def order(members: list[int]) -> tuple[int, str, str, int]:
        first = results[members[0]]
        return (-_release_day(first).toordinal(), _inverse(first.snapshot.id), _key(first)[1], members[0])

    groups = sorted(keyed.values(), key=order)
    return [RunGroup(_group_title(results[m[0]], len(hashes_per_id[results[m[0]].snapshot.id]) > 1), m) for m in groups]


def _inverse(text: str) -> str:
    """A key that sorts text in reverse (newer `v...` ids first when ids carry no date)."""
    return "".join(chr(0x10FFFF - ord(ch)) for ch in text)


def run_ids(paths: Sequence[Path]) -> list[str]:
    """Each run's id: its result file's name without `.json`, with its folder's name where two files share a name,
    with its position (`#2`) where that is not enough."""
    stems = [p.name.removesuffix(".json") for p in paths]
    folders = [f"{p.parent.name}/{s}" for p, s in zip(paths, stems, strict=True)]
    ids = [s if stems.count(s) == 1 or folders.count(f) > 1 else f for s, f in zip(stems, folders, strict=True)]
    return [f"{i}#{n}" if ids.count(i) > 1 else i for n, i in enumerate(ids, 1)]


def _identity_parts(result: ResultFile) -> list[tuple[str, str]]:
    model = result.model.meta
    return [
        ("revision", f"rev {model.revision}" if model.revision else "rev -"),
        ("release", result.snapshot.id),
        ("seed", f"seed {result.config.bootstrap.seed}"),
    ]


def identity_labels(results: Sequence[ResultFile], ids: Sequence[str]) -> list[str]:
    """Each run's label: its title, plus the revision, release and seed where runs with that title differ in them,
    plus its run id where nothing else tells two runs apart."""
    titles = [run_title(r) for r in results]
    parts_of = []
    for i, result in enumerate(results):
        peers = [j for j, t in enumerate(titles) if t == titles[i]]
        parts_of.append(
            [
                text
                for k, (_, text) in enumerate(_identity_parts(result))
                if len({_identity_parts(results[j])[k][1] for j in peers}) > 1
            ]
        )
    keys = [(t, tuple(p)) for t, p in zip(titles, parts_of, strict=True)]
    labels = []
    for i, (title, parts) in enumerate(zip(titles, parts_of, strict=True)):
        shown = [*parts, ids[i]] if keys.count(keys[i]) > 1 else parts
        labels.append(title + (f" ({', '.join(shown)})" if shown else ""))
    return labels


def pick_run(name: str, ids: Sequence[str], labels: Sequence[str], option: str = "--baseline") -> int:
    """The run a run id or a label (unique among the runs) names; ResultError listing the run ids otherwise."""
    if name in ids:
        return list(ids).index(name)
    if list(labels).count(name) == 1:
        return list(labels).index(name)
    how = "names several runs" if name in labels else "is no run id or label"
    raise ResultError(f"{option} {name!r} {how}; run ids: {', '.join(ids)}")
