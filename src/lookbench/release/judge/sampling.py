"""Stratified sampling of crops by (subset, category) and seeded canaries (deliberately wrong values)."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any

import numpy as np

from lookbench.release.judge.stats import sample_size
from lookbench.release.records import Sample
from lookbench.taxonomy import Taxonomy


@dataclass(frozen=True)
class Check:
    """One attribute of one crop for the judge; a canary carries a value known to be wrong."""

    sample_id: str
    category: str
    attribute: str
    group: str
    canary: bool = False


def allocate(sizes: dict[Any, int], total: int) -> dict[Any, int]:
    """Proportional allocation with largest remainders, at least one per stratum when the total allows."""
    population = sum(sizes.values())
    if population == 0 or total == 0:
        return dict.fromkeys(sizes, 0)
    floor = 1 if total >= len(sizes) else 0
    share = {k: total * v / population for k, v in sizes.items()}
    out = {k: min(v, max(floor, int(share[k]))) for k, v in sizes.items()}
    for k in sorted(sizes, key=lambda k: share[k] - int(share[k]), reverse=True):
        if sum(out.values()) >= total:
            break
        if out[k] < sizes[k]:
            out[k] += 1
    return out


def stratified_sample(rows: list[Sample], margin: float, expected: float, seed: int) -> list[Sample]:
    """Crops drawn per (subset, category) stratum, the total from `sample_size(margin, expected, N)`."""
    strata: dict[tuple[str, str], list[Sample]] = defaultdict(list)
    for row in rows:
        strata[(",".join(row.subsets), row.category)].append(row)
    counts = allocate({k: len(v) for k, v in strata.items()}, sample_size(margin, expected, len(rows)))
    rng = np.random.default_rng(seed)
    picked: list[Sample] = []
    for key in sorted(strata):
        members = sorted(strata[key], key=lambda r: r.sample_id)
        order = rng.permutation(len(members))[: counts[key]]
        picked.extend(members[int(i)] for i in order)
    return picked


def checks_for(row: Sample, taxonomy: Taxonomy) -> list[Check]:
    """One check per annotated attribute of a crop."""
    values = [row.main_attribute, *row.other_attributes]
    return [Check(row.sample_id, row.category, v, taxonomy.group_of(v)) for v in values]


def canary_for(row: Sample, taxonomy: Taxonomy, rng: np.random.Generator) -> Check | None:
    """A wrong value: from a group of the crop's category, neither annotated nor in the source labels."""
    taken = {row.main_attribute, *row.other_attributes}
    taken |= {row.source_main_attribute or "", *(row.source_other_attributes or [])}
    groups = [g for g, vals in taxonomy.category(row.category).attributes.items() if set(vals) - taken]
    if not groups:
        return None
    group = groups[int(rng.integers(len(groups)))]
    choices = [v for v in taxonomy.category(row.category).attributes[group] if v not in taken]
    return Check(row.sample_id, row.category, choices[int(rng.integers(len(choices)))], group, canary=True)


def canaries(sample: list[Sample], fraction: float, taxonomy: Taxonomy, seed: int) -> list[Check]:
    """round(fraction * sampled crops) canaries on seeded crops of the sample."""
    rng = np.random.default_rng([seed, 1])
    count = round(fraction * len(sample))
    hosts = [sample[int(i)] for i in rng.permutation(len(sample))[:count]]
    return [c for c in (canary_for(row, taxonomy, rng) for row in hosts) if c is not None]
