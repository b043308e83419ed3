"""A linear probe (class-balanced, L2-regularised logistic regression) scored by cross-validated AUC with a
bootstrap interval over its out-of-fold scores."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

MIN_PER_SIDE = 10
"""Fewest images per side (gallery, noise) for a cross-validated AUC: every fold then holds both sides."""
MAX_COMPONENTS = 128
"""Wide features (embeddings) are projected on the training fold's leading principal components first."""
OVERSAMPLE = 16
NO_VARIATION = "every sampled image has the same features: nothing to separate them by"
L2 = 1.0
NEWTON_STEPS = 30


@dataclass(frozen=True)
class Probe:
    """A fitted probe: standardisation, projection and weights; `noise_score` is the logit of 'noise'."""

    mean: np.ndarray
    scale: np.ndarray
    basis: np.ndarray
    weights: np.ndarray
    bias: float

    def noise_score(self, x: np.ndarray) -> np.ndarray:
        """(n,) logits; > 0 places an image on the noise side."""
        z = ((x - self.mean) / self.scale) @ self.basis
        return np.asarray(z @ self.weights + self.bias, dtype=np.float64)


@dataclass(frozen=True)
class AucEstimate:
    """A cross-validated AUC with its percentile bootstrap interval."""

    auc: float
    low: float
    high: float


def leading_components(z: np.ndarray, k: int) -> np.ndarray:
    """(d, k) orthonormal leading principal directions of centred `z`, by a seeded randomised range finder with one
    power iteration (Halko et al. 2011): a few matrix products instead of a full SVD."""
    centred = z - z.mean(axis=0)
    sketch = np.random.default_rng(0).normal(size=(z.shape[1], k + OVERSAMPLE))
    q, _ = np.linalg.qr(centred @ sketch)
    q, _ = np.linalg.qr(centred @ (centred.T @ q))
    _, _, vt = np.linalg.svd(q.T @ centred, full_matrices=False)
    return np.asarray(vt[:k].T)


def fit_probe(x: np.ndarray, noise: np.ndarray) -> Probe:
    """Fit on (n, d) features, `noise` (n,) bool; both sides weigh the same whatever their sizes."""
    x = np.asarray(x, dtype=np.float64)
    mean = x.mean(axis=0)
    scale = x.std(axis=0)
    scale = np.where(scale > 1e-12, scale, 1.0)
    z = (x - mean) / scale
    basis = leading_components(z, MAX_COMPONENTS) if z.shape[1] > MAX_COMPONENTS else np.eye(z.shape[1])
    z = z @ basis
    y = noise.astype(np.float64)
    weight = np.where(noise, len(y) / (2.0 * max(noise.sum(), 1)), len(y) / (2.0 * max((~noise).sum(), 1)))
    design = np.hstack([z, np.ones((len(z), 1))])
    theta = np.zeros(design.shape[1])
    penalty = np.full(design.shape[1], L2)
    penalty[-1] = 0.0
    for _ in range(NEWTON_STEPS):
        p = 1.0 / (1.0 + np.exp(-np.clip(design @ theta, -30, 30)))
        gradient = design.T @ (weight * (p - y)) + penalty * theta
        hessian = (design * (weight * p * (1 - p))[:, None]).T @ design + np.diag(penalty + 1e-9)
        step = np.linalg.solve(hessian, gradient)
        theta -= step
        if np.abs(step).max() < 1e-6:
            break
    return Probe(mean=mean, scale=scale, basis=basis, weights=theta[:-1], bias=float(theta[-1]))


def auc(scores: np.ndarray, positive: np.ndarray) -> float:
    """Area under the ROC curve (Mann-Whitney U, ties counted half)."""
    ranks = _average_ranks(scores)
    n_pos = int(positive.sum())
    n_neg = len(positive) - n_pos
    return float((ranks[positive].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def _average_ranks(values: np.ndarray) -> np.ndarray:
    _, inverse, counts = np.unique(values, return_inverse=True, return_counts=True)
    last = np.cumsum(counts)
    return (last - (counts - 1) / 2.0)[inverse]


def folds_of(noise: np.ndarray, folds: int, rng: np.random.Generator) -> np.ndarray:
    """(n,) fold index per row, each side spread evenly over the folds."""
    out = np.empty(len(noise), dtype=np.int64)
    for side in (False, True):
        rows = rng.permutation(np.flatnonzero(noise == side))
        out[rows] = np.arange(len(rows)) % folds
    return out


def out_of_fold_scores(x: np.ndarray, noise: np.ndarray, folds: int, seed: int) -> np.ndarray:
    """Each row's noise logit from a probe fitted on the other folds."""
    assignment = folds_of(noise, folds, np.random.default_rng(seed))
    scores = np.empty(len(noise), dtype=np.float64)
    for fold in range(folds):
        held = assignment == fold
        scores[held] = fit_probe(x[~held], noise[~held]).noise_score(x[held])
    return scores


def bootstrap_auc(
    scores: np.ndarray, noise: np.ndarray, resamples: int, seed: int, confidence: float = 0.95
) -> AucEstimate:
    """AUC of `scores` with a percentile interval from resampling each side with replacement."""
    point = auc(scores, noise)
    if resamples == 0:
        return AucEstimate(point, point, point)
    rng = np.random.default_rng([seed, 1])
    pos = np.flatnonzero(noise)
    neg = np.flatnonzero(~noise)
    reps = np.empty(resamples)
    labels = np.r_[np.ones(len(pos), bool), np.zeros(len(neg), bool)]
    for b in range(resamples):
        rows = np.r_[rng.choice(pos, len(pos)), rng.choice(neg, len(neg))]
        reps[b] = auc(scores[rows], labels)
    alpha = (1.0 - confidence) / 2.0
    low, high = np.quantile(reps, [alpha, 1.0 - alpha])
    return AucEstimate(point, float(low), float(high))


def unmeasurable(x: np.ndarray, noise: np.ndarray) -> str | None:
    """Why no AUC can be measured on these features (too few images on a side, no variation), else None."""
    sides = {"gallery": int((~noise).sum()), "noise": int(noise.sum())}
    short = [f"{name} {count}" for name, count in sides.items() if count < MIN_PER_SIDE]
    if short:
        return f"too few images to cross-validate ({', '.join(short)}; at least {MIN_PER_SIDE} per side)"
    if not np.isfinite(x).all():
        return "some features are not finite"
    if np.ptp(x, axis=0).max(initial=0.0) == 0.0:
        return NO_VARIATION
    return None
