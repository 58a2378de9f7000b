"""Views of the embedding space: a 2-D PCA projection and a linear language-ID probe (LAReQA Sec. 5.4)."""

from __future__ import annotations

import numpy as np


def pca_2d(x: np.ndarray) -> np.ndarray:
    """Project rows onto their first two principal components."""
    centered = x - x.mean(axis=0, keepdims=True)
    _, _, vt = np.linalg.svd(centered, full_matrices=False)
    return centered @ vt[:2].T


def language_id_probe(
    x: np.ndarray, labels: np.ndarray, test_fraction: float = 0.3, l2: float = 1e-2, seed: int = 0
) -> float:
    """Held-out accuracy of a linear (ridge, one-vs-rest) classifier predicting the language from the
    embedding. High accuracy: language is linearly recoverable (weak language invariance)."""
    classes, y = np.unique(labels, return_inverse=True)
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(x))
    n_test = max(1, int(round(test_fraction * len(x))))
    test, train = order[:n_test], order[n_test:]
    xb = np.hstack([x, np.ones((len(x), 1))])
    targets = np.eye(len(classes))[y[train]]
    a = xb[train].T @ xb[train] + l2 * np.eye(xb.shape[1])
    w = np.linalg.solve(a, xb[train].T @ targets)
    return float((np.argmax(xb[test] @ w, axis=1) == y[test]).mean())
