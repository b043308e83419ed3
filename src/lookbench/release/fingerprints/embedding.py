"""The optional embedding tier: cosine similarity of model embeddings (a `resolve_model` spec) above a threshold."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from lookbench.release.embedding import ImageEmbedder, unit_rows
from lookbench.search.duplicates.history import earlier_versions, snapshot_parts
from lookbench.search.duplicates.index import Match
from lookbench.snapshot import open_snapshot


def _published(embedder: ImageEmbedder, output: Path, version: str) -> tuple[list[str], np.ndarray]:
    keys: list[str] = []
    parts: list[np.ndarray] = []
    for folder in earlier_versions(output, version):
        snap = open_snapshot(folder)
        for subset, split in snapshot_parts(snap):
            for start, images in snap.iter_images(subset, split, batch_size=256):
                rows = [(start + i, data) for i, data in enumerate(images) if data]
                if rows:
                    parts.append(unit_rows(embedder.embed_images([data for _, data in rows])))
                    keys.extend(f"{folder.name}/{subset}/{split}#{row}" for row, _ in rows)
    return keys, (np.concatenate(parts) if parts else np.zeros((0, 0)))


def embedding_duplicates(
    embedder: ImageEmbedder, images: list[bytes], names: list[str], output: Path, version: str, threshold: float
) -> dict[int, tuple[str, Match]]:
    """`{index: (against, match)}` for images within `threshold` cosine of an earlier-version or earlier batch image."""
    if not images:
        return {}
    batch = unit_rows(embedder.embed_images(images))
    keys, history = _published(embedder, output, version)
    found: dict[int, tuple[str, Match]] = {}
    for i, vector in enumerate(batch):
        if len(history):
            sims = history @ vector
            best = int(np.argmax(sims))
            if sims[best] >= threshold:
                found[i] = ("earlier", Match(keys[best], "embedding", float(1 - sims[best])))
                continue
        earlier = [j for j in range(i) if j not in found]
        if earlier:
            sims = batch[earlier] @ vector
            best = int(np.argmax(sims))
            if sims[best] >= threshold:
                found[i] = ("batch", Match(names[earlier[best]], "embedding", float(1 - sims[best])))
    return found
