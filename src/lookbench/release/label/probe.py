"""`probe` annotator: ridge-regression probes per attribute group on embeddings, fitted on a labelled snapshot."""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from lookbench.errors import ReleaseError
from lookbench.release.config import ProbeConfig
from lookbench.release.embedding import ImageEmbedder
from lookbench.release.label.base import Item, Outcome
from lookbench.snapshot import NOISE, open_snapshot
from lookbench.snapshot.schema import SPLITS
from lookbench.taxonomy import Taxonomy

NONE = "<none>"


@dataclass
class Design:
    """Embeddings standardised with the training statistics, plus category one-hot and a bias column."""

    mean: np.ndarray
    scale: np.ndarray
    categories: list[str]

    def matrix(self, vectors: np.ndarray, categories: list[str]) -> np.ndarray:
        """The design matrix of rows with their categories."""
        onehot = np.zeros((len(categories), len(self.categories)))
        for row, cat in enumerate(categories):
            if cat in self.categories:
                onehot[row, self.categories.index(cat)] = 1.0
        return np.hstack([(vectors - self.mean) / self.scale, onehot, np.ones((len(categories), 1))])


def ridge(x: np.ndarray, y: np.ndarray, penalty: float) -> np.ndarray:
    """argmin_W |XW - Y|^2 + penalty |W|^2 (bias column included in the penalty, harmless here)."""
    return np.linalg.solve(x.T @ x + penalty * np.eye(x.shape[1]), x.T @ y)


@dataclass
class TrainingSet:
    """The labelled rows of a snapshot that have image bytes, with their embeddings."""

    categories: list[str]
    mains: list[str]
    others: list[list[str]]
    vectors: np.ndarray


def training_set(path: Path, embedder: ImageEmbedder) -> TrainingSet:
    """Labels and embeddings of every row (with an image) of a labelled snapshot."""
    snap = open_snapshot(path)
    parts = [(s, sp) for s in snap.subsets for sp in SPLITS] + ([(NOISE, "gallery")] if snap.has_noise else [])
    found = TrainingSet([], [], [], np.zeros((0, 0)))
    vectors: list[np.ndarray] = []
    for subset, split in parts:
        labels = snap.labels(subset, split)
        for start, images in snap.iter_images(subset, split, batch_size=256):
            rows = [(start + i, data) for i, data in enumerate(images) if data]
            if not rows:
                continue
            vectors.append(np.asarray(embedder.embed_images([data for _, data in rows]), dtype=np.float64))
            for row, _ in rows:
                found.categories.append(labels.category[row])
                found.mains.append(labels.main_attribute[row])
                found.others.append(list(labels.other_attributes[row]))
    found.vectors = np.vstack(vectors) if vectors else np.zeros((0, 0))
    return found


class ProbeAnnotator:
    """Single-valued groups: argmax over the category's values (or none); multi-valued: each value above 0.5."""

    name = "probe"

    def __init__(self, config: ProbeConfig, taxonomy: Taxonomy, embedder: ImageEmbedder) -> None:
        self.config = config
        self.taxonomy = taxonomy
        self.embedder = embedder
        self.fitted_on = 0
        self._fit()

    def _fit(self) -> None:
        train = training_set(self.config.train, self.embedder)
        cats, mains, others, vectors = train.categories, train.mains, train.others, train.vectors
        known = [i for i, c in enumerate(cats) if c in self.taxonomy.categories]
        if not known:
            raise ReleaseError(f"annotate.probe.train {self.config.train}: no row of a taxonomy category to learn from")
        cats = [cats[i] for i in known]
        vectors = vectors[known]
        self.fitted_on = len(known)
        self.design = Design(vectors.mean(axis=0), vectors.std(axis=0) + 1e-6, sorted(set(cats)))
        x = self.design.matrix(vectors, cats)
        values = [{mains[i], *others[i]} for i in known]
        self.weights: dict[str, tuple[list[str], np.ndarray]] = {}
        for group, spec in self.taxonomy.groups.items():
            classes = list(spec.attributes) + ([] if spec.multi else [NONE])
            y = np.zeros((len(cats), len(classes)))
            for row, labels in enumerate(values):
                hits = [classes.index(v) for v in labels if v in spec.attributes]
                for col in hits or ([] if spec.multi else [classes.index(NONE)]):
                    y[row, col] = 1.0
            self.weights[group] = (classes, ridge(x, y, self.config.ridge))
        main_groups: dict[str, Counter[str]] = defaultdict(Counter)
        for row, cat in enumerate(cats):
            main = mains[known[row]]
            if main in self.taxonomy.categories[cat].attribute_names():
                main_groups[cat][self.taxonomy.group_of(main)] += 1
        self.main_group = {cat: counts.most_common(1)[0][0] for cat, counts in main_groups.items()}

    def _labels(self, row: np.ndarray, category: str) -> Outcome:
        allowed = self.taxonomy.categories[category].attributes
        chosen: dict[str, list[str]] = {}
        best: dict[str, str] = {}
        for group, values in allowed.items():
            classes, weights = self.weights[group]
            scores = dict(zip(classes, row @ weights, strict=True))
            best[group] = max(values, key=lambda v: scores[v])
            if self.taxonomy.groups[group].multi:
                chosen[group] = [v for v in values if scores[v] > 0.5]
            else:
                pick = max([*values, NONE], key=lambda v: scores[v])
                chosen[group] = [] if pick == NONE else [pick]
        group = self.main_group.get(category, next(iter(allowed)))
        main = chosen[group][0] if chosen[group] else best[group]
        others = [v for g in allowed for v in chosen[g] if v != main]
        return Outcome(main, others, attempts=1)

    def annotate(self, items: list[Item]) -> list[Outcome]:
        """Outcomes in item order; categories outside the taxonomy are flagged."""
        known = [i for i, item in enumerate(items) if item.category in self.taxonomy.categories]
        outcomes = [Outcome(None, flag=f"category {item.category!r} is not in the taxonomy") for item in items]
        if known:
            vectors = np.asarray(self.embedder.embed_images([items[i].image for i in known]), dtype=np.float64)
            x = self.design.matrix(vectors, [items[i].category for i in known])
            for row, index in enumerate(known):
                outcomes[index] = self._labels(x[row], items[index].category)
        return outcomes

    def describe(self) -> dict[str, Any]:
        """Backend, embedding model, training set."""
        return {
            "backend": self.name,
            "model": self.config.model,
            "train": str(self.config.train),
            "train_rows": self.fitted_on,
            "ridge": self.config.ridge,
        }
