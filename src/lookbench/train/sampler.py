"""The m-per-class batch sampler: each batch holds `size / m` items with `m` images each, a pure function of the step.

Because a batch depends only on (seed, step), resuming at step s replays exactly the batches an uninterrupted run
would have drawn, and every rank of a DDP run derives the same global batch and takes its own slice of it.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from lookbench.errors import TrainError


def _rng(seed: int, *key: int) -> np.random.Generator:
    return np.random.default_rng(np.random.SeedSequence([seed & 0xFFFFFFFF, *key]))


class MPerClassSampler:
    """Global batches of `batch_size` rows: `batch_size / m` distinct classes, `m` rows of each.

    An epoch is one seeded permutation of the classes, consumed `batch_size / m` classes at a time (the remainder is
    dropped). A class with fewer than `m` rows repeats some of them (the augmentations make the copies differ).
    """

    def __init__(self, classes: np.ndarray, batch_size: int, m: int, seed: int) -> None:
        if batch_size % m:
            raise TrainError(f"batch size {batch_size} is not a multiple of m_per_class {m}")
        self.m = m
        self.batch_size = batch_size
        self.per_batch = batch_size // m
        self.seed = seed
        order = np.argsort(classes, kind="stable")
        bounds = np.flatnonzero(np.diff(classes[order])) + 1
        self.rows_by_class = np.split(order, bounds) if len(order) else []
        if len(self.rows_by_class) < self.per_batch:
            raise TrainError(
                f"a batch of {batch_size} with m_per_class {m} needs {self.per_batch} distinct items; "
                f"the training set has {len(self.rows_by_class)}"
            )
        self.batches_per_epoch = len(self.rows_by_class) // self.per_batch

    def batch(self, step: int) -> np.ndarray:
        """The global batch of optimiser step `step` (row indices, grouped by class)."""
        epoch, index = divmod(step, self.batches_per_epoch)
        permutation = _rng(self.seed, 1, epoch).permutation(len(self.rows_by_class))
        chosen = permutation[index * self.per_batch : (index + 1) * self.per_batch]
        rng = _rng(self.seed, 2, step)
        out = []
        for c in chosen:
            rows = self.rows_by_class[int(c)]
            out.append(rng.choice(rows, size=self.m, replace=len(rows) < self.m))
        return np.concatenate(out).astype(np.int64)


def sample_seed(seed: int, step: int, position: int) -> int:
    """The augmentation seed of one image of one step: independent of workers, ranks and resumes."""
    return int(np.random.SeedSequence([seed & 0xFFFFFFFF, 3, step, position]).generate_state(1)[0])


class StepBatches:
    """A DataLoader batch sampler: for steps [start, end), this rank's micro-batches of (row, augmentation seed).

    The global batch is cut into `accumulation * world` equal chunks; micro-step a of rank r is chunk `a * world + r`,
    so one process accumulating `world` micro-batches sees exactly what `world` DDP ranks see in one step.
    """

    def __init__(
        self, sampler: MPerClassSampler, start: int, end: int, accumulation: int, world: int, rank: int
    ) -> None:
        chunks = accumulation * world
        if sampler.batch_size % chunks:
            raise TrainError(
                f"batch size {sampler.batch_size} does not split into {accumulation} accumulation step(s) "
                f"x {world} process(es)"
            )
        self.sampler = sampler
        self.start, self.end = start, end
        self.accumulation, self.world, self.rank = accumulation, world, rank
        self.micro = sampler.batch_size // chunks

    def __iter__(self) -> Iterator[list[tuple[int, int]]]:
        for step in range(self.start, self.end):
            rows = self.sampler.batch(step)
            for a in range(self.accumulation):
                first = (a * self.world + self.rank) * self.micro
                yield [
                    (int(rows[p]), sample_seed(self.sampler.seed, step, p)) for p in range(first, first + self.micro)
                ]

    def __len__(self) -> int:
        return (self.end - self.start) * self.accumulation
