"""What the visual report shows: sampled queries with their top results, and the most confused attributes."""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa

from lookbench.errors import ResultError
from lookbench.evaluation.composed.relevance import target_attributes
from lookbench.publish.reports.encode import fine_at_1
from lookbench.publish.reports.images import ImageTable, thumbnails
from lookbench.snapshot.composed import Change, ComposedQueries, read_composed_queries
from lookbench.snapshot.labels import SplitLabels
from lookbench.snapshot.reader import Snapshot
from lookbench.snapshot.schema import NOISE, STREETLOOK_SUBSETS, SUBSET_TITLES
from lookbench.taxonomy.loader import load_taxonomy
from lookbench.taxonomy.models import TaxonomyError

TOP = 5


@dataclass
class Hit:
    """One retrieved corpus item."""

    rank: int
    item_id: str
    score: float
    category: str
    main: str
    fine: bool
    coarse: bool
    item: bool
    noise: bool
    matched: list[str]
    missing: list[str]
    thumb: str | None = None
    """Image id in the page's image table."""
    relevant: bool = False
    """Composed queries: the result answers the query (changed attributes at their targets, the others kept)."""
    hard_negative: bool = False
    """Composed queries: the reference's look without the change."""
    unchanged: list[str] = field(default_factory=list)
    """Composed queries: values the change removes that the result still has."""

    @property
    def compared(self) -> bool:
        """Attributes are compared only for results of the query's category that are not distractors."""
        return self.coarse and not self.noise


@dataclass
class QueryCard:
    """One query with its crop, full photo (street looks) and top results."""

    subset: str
    title: str
    row: int
    item_id: str
    category: str
    main: str
    attributes: list[str]
    fine_at_1: bool
    hits: list[Hit] = field(default_factory=list)
    thumb: str | None = None
    photo: str | None = None
    confused: list[str] = field(default_factory=list)
    samples: list[str] = field(default_factory=list)
    """Which of the report's samples (SAMPLES) show this card."""
    """The confusions ('category: wanted -> got') this query is an example of."""
    text: str | None = None
    """Composed queries: the modification text (the card's attributes are then the target's)."""
    changes: list[str] = field(default_factory=list)
    """Composed queries: each structured change as 'group: from -> to'."""
    changed: list[str] = field(default_factory=list)
    """Composed queries: the values the changes ask for, marked among the target attributes."""

    @property
    def anchor(self) -> str:
        """The card's element id, linked from the confusion tables."""
        return query_anchor(self.subset, self.row)


def query_anchor(subset: str, row: int) -> str:
    """Element id of a query's card."""
    return f"q-{subset}-{row}"


SAMPLES = {
    "misses": "per subset, the categories with the lowest Fine Recall@1 first, up to {per_category} queries of each, "
    "only misses (no fine match at rank 1), up to {per_subset} in all",
    "hits": "per subset, the categories with the highest Fine Recall@1 first, up to {per_category} queries of each, "
    "only hits (a fine match at rank 1), up to {half} in all",
    "random": "per subset, {half} queries drawn at random (seeded: the same run gives the same sample)",
}
"""The samples a reader switches between, and how each is chosen; hits and the random sample take half as many
queries as the misses (`half`), which keeps the page light."""


def half(per_subset: int) -> int:
    """How many hits and random queries a subset shows beside `per_subset` misses."""
    return max(1, per_subset // 2)


def _by_category(idx: list[int], cats: list[str], fine: np.ndarray, rows: list[int], worst: bool) -> list[list[int]]:
    """Queries grouped by category, worst (or best) categories first, misses (or hits) first within each."""
    by_cat: dict[str, list[int]] = {}
    for i in idx:
        by_cat.setdefault(cats[i], []).append(i)
    sign = 1.0 if worst else -1.0
    order = sorted(by_cat, key=lambda c: (sign * float(np.mean(fine[by_cat[c]])), c))
    return [sorted(by_cat[c], key=lambda i: (sign * fine[i], rows[i])) for c in order]


def select_samples(
    per_query: pa.Table, chosen: list[tuple[str, int]] | None, per_subset: int, per_category: int, seed: int = 0
) -> dict[str, list[int]]:
    """Per-query table indices of each sample (SAMPLES), or {'chosen': ...} for the (subset, query row) pairs asked."""
    subsets = per_query["subset"].to_pylist()
    rows = per_query["query_row"].to_pylist()
    if chosen:
        index = {(s, r): i for i, (s, r) in enumerate(zip(subsets, rows, strict=True))}
        missing = [f"{s}:{r}" for s, r in chosen if (s, r) not in index]
        if missing:
            raise ResultError(f"queries not in the per-query file: {', '.join(missing)}")
        return {"chosen": [index[key] for key in chosen]}
    cats = per_query["category"].to_pylist()
    fine = fine_at_1(per_query)
    out: dict[str, list[int]] = {name: [] for name in SAMPLES}
    for subset in dict.fromkeys(subsets):
        idx = [i for i, s in enumerate(subsets) if s == subset]
        for name, worst, size in (("misses", True, per_subset), ("hits", False, half(per_subset))):
            picked: list[int] = []
            for members in _by_category(idx, cats, fine, rows, worst):
                members = [i for i in members if bool(fine[i]) != worst]  # only misses, or only hits
                picked.extend(members[: max(0, min(per_category, size - len(picked)))])
            out[name].extend(picked)
        rng = np.random.default_rng([seed, zlib.crc32(subset.encode())])
        drawn = rng.choice(len(idx), size=min(half(per_subset), len(idx)), replace=False)
        out["random"].extend(sorted((idx[j] for j in drawn), key=lambda i: rows[i]))
    return out


def _flag(record: dict[str, list], name: str, rank: int) -> bool:
    flags = record.get(name)
    return bool(flags[rank]) if flags else False


def _hits(
    corpus: SplitLabels,
    gallery: int,
    record: dict[str, list],
    attrs: frozenset[str],
    removed: frozenset[str] = frozenset(),
) -> list[Hit]:
    hits = []
    for rank, row in enumerate(record["topk_rows"][:TOP]):
        if row < 0:
            continue
        theirs = corpus.attribute_set(row)
        same_category = bool(record["coarse"][rank]) and row < gallery
        hits.append(
            Hit(
                rank=rank + 1,
                item_id=corpus.item_id[row],
                score=float(record["topk_scores"][rank]),
                category=corpus.category[row],
                main=corpus.main_attribute[row],
                fine=bool(record["fine"][rank]),
                coarse=bool(record["coarse"][rank]),
                item=bool(record["item"][rank]),
                noise=row >= gallery,
                matched=sorted(attrs & theirs) if same_category else [],
                missing=sorted(attrs - theirs) if same_category else [],
                relevant=_flag(record, "relevant", rank),
                hard_negative=_flag(record, "hard_negative", rank),
                unchanged=sorted(removed & theirs) if same_category else [],
            )
        )
    return hits


def change_text(change: Change) -> str:
    """'sleeve length: long sleeve -> short sleeve' (a detail added or removed: 'details: + hood', '- hood')."""
    if not change.source:
        return f"{change.group}: + {change.target}"
    if not change.target:
        return f"{change.group}: \u2212 {change.source}"
    return f"{change.group}: {change.source} \u2192 {change.target}"


def query_cards(snapshot: Snapshot, per_query: pa.Table, indices: list[int], images: ImageTable) -> list[QueryCard]:
    """Cards for the selected per-query rows, thumbnails stored in `images`."""
    columns = ["subset", "query_row", "topk_rows", "topk_scores", "fine", "coarse", "item"]
    columns += [c for c in ("relevant", "hard_negative") if c in per_query.column_names]
    records = per_query.select(columns).take(pa.array(indices, pa.int64())).to_pylist()
    fine1 = fine_at_1(per_query)[indices]
    cards = []
    corpora: dict[str, tuple[SplitLabels, int]] = {}
    composed: dict[str, ComposedQueries] = {}
    for record, hit1 in zip(records, fine1, strict=True):
        subset, row = record["subset"], record["query_row"]
        if subset not in corpora:
            corpora[subset] = (snapshot.corpus_labels(subset), snapshot.num_rows(subset, "gallery"))
            if snapshot.kinds.get(subset) == "composed":
                composed[subset] = read_composed_queries(snapshot, subset)
        labels = snapshot.labels(subset, "query")
        attrs = labels.attribute_set(row)
        changes = composed[subset].changes[row] if subset in composed else ()
        wanted = target_attributes(attrs, changes)
        card = QueryCard(
            subset=subset,
            title=SUBSET_TITLES.get(subset, subset),
            row=row,
            item_id=labels.item_id[row],
            category=labels.category[row],
            main=labels.main_attribute[row],
            attributes=sorted(wanted),
            fine_at_1=bool(record["relevant"][0]) if subset in composed and record["relevant"] else bool(hit1),
            hits=_hits(*corpora[subset], record, wanted, attrs - wanted),
            text=composed[subset].texts[row] if subset in composed else None,
            changes=[change_text(c) for c in changes],
            changed=sorted(c.target for c in changes if c.target),
        )
        cards.append((card, record["topk_rows"][:TOP]))
    _attach_thumbnails(snapshot, cards, images)
    return [card for card, _ in cards]


def _attach_thumbnails(snapshot: Snapshot, cards: list[tuple[QueryCard, list[int]]], images: ImageTable) -> None:
    for subset in dict.fromkeys(card.subset for card, _ in cards):
        mine = [(card, rows) for card, rows in cards if card.subset == subset]
        query_rows = [card.row for card, _ in mine]
        crops = thumbnails(snapshot, subset, "query", query_rows)
        photos = (
            thumbnails(snapshot, subset, "query", query_rows, "raw_image", 160) if subset in STREETLOOK_SUBSETS else {}
        )
        gallery = snapshot.num_rows(subset, "gallery")
        all_rows = {r for _, rows in mine for r in rows if r >= 0}
        own = thumbnails(snapshot, subset, "gallery", [r for r in all_rows if r < gallery])
        noise_rows = [r - gallery for r in all_rows if r >= gallery]
        noise = thumbnails(snapshot, NOISE, "gallery", noise_rows) if noise_rows else {}
        for card, top_rows in mine:
            card.thumb = images.add(crops.get(card.row))
            card.photo = images.add(photos.get(card.row))
            for hit, row in zip(card.hits, [r for r in top_rows if r >= 0], strict=True):
                hit.thumb = images.add(own.get(row) if row < gallery else noise.get(row - gallery))


@dataclass
class Confusion:
    """Queries of one category whose rank-1 result has the right category but another main attribute."""

    category: str
    wanted: str
    got: str
    count: int
    examples: list[int]
    """Per-query table indices of example queries (lowest query rows first)."""

    @property
    def key(self) -> str:
        """How query cards name it."""
        return f"{self.category}: {self.wanted} \u2192 {self.got}"


@dataclass
class ConfusionGroup:
    """Confusions within one attribute group (colour with colour), or across groups."""

    name: str
    rows: list[Confusion]


ACROSS = "across attribute groups"
UNKNOWN_GROUP = "not in the taxonomy"


def attribute_group(attribute: str) -> str:
    """The taxonomy group of an attribute (`colour`, `length`, ...), or UNKNOWN_GROUP."""
    try:
        return load_taxonomy().group_of(attribute)
    except TaxonomyError:
        return UNKNOWN_GROUP


RECURS = 2
"""A confusion is listed when it happened to at least this many queries (a one-off tells nothing)."""


def confusions(
    snapshot: Snapshot, per_query: pa.Table, top: int = 10, examples: int = 2, recurs: int = RECURS
) -> dict[str, list[ConfusionGroup]]:
    """Per subset, the most frequent main-attribute confusions at rank 1, grouped by attribute group.

    A confusion is a query whose rank-1 result is of its category (not a distractor) with a different main
    attribute. Both attributes in one taxonomy group (red vs blue) file it under that group; otherwise under
    'across attribute groups', which comes last; the others in order of their largest count.
    """
    out: dict[str, list[ConfusionGroup]] = {}
    subsets = per_query["subset"].to_pylist()
    rows = per_query["query_row"].to_pylist()
    first = [r[0] if r else -1 for r in per_query["topk_rows"].to_pylist()]
    for subset in (s for s in dict.fromkeys(subsets) if snapshot.kinds.get(s) != "composed"):  # no composed main asked
        queries, corpus = snapshot.labels(subset, "query"), snapshot.corpus_labels(subset)
        gallery = snapshot.num_rows(subset, "gallery")
        found: dict[tuple[str, str, str], list[int]] = {}
        for index, (s, row, hit) in enumerate(zip(subsets, rows, first, strict=True)):
            if s != subset or hit < 0 or hit >= gallery or corpus.category[hit] != queries.category[row]:
                continue
            if corpus.main_attribute[hit] != queries.main_attribute[row]:
                key = (queries.category[row], queries.main_attribute[row], corpus.main_attribute[hit])
                found.setdefault(key, []).append(index)
        recurring = [item for item in found.items() if len(item[1]) >= recurs]
        ranked = sorted(recurring, key=lambda item: (-len(item[1]), item[0]))[:top]
        groups: dict[str, list[Confusion]] = {}
        for (category, wanted, got), members in ranked:
            a, b = attribute_group(wanted), attribute_group(got)
            name = a if a == b else ACROSS
            chosen = sorted(members, key=lambda i: rows[i])[:examples]
            groups.setdefault(name, []).append(Confusion(category, wanted, got, len(members), chosen))
        names = sorted(groups, key=lambda name: name == ACROSS)
        out[subset] = [ConfusionGroup(name, groups[name]) for name in names]
    return out
