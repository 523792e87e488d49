"""A small synthetic assignment dataset for training tests and examples.

Each instance has n items and n slots; the d features of every (item, slot) pair are standard
normal; the gold assignment maximises Σ_i (x[i, y[i]]·w* + ε[i, y[i]]) for a hidden unit vector
w* and pair noise ε ~ N(0, noise²) — a linear model can learn w* (up to scale), and the noise
sets how far below 100 % the best achievable position accuracy lies.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import linear_sum_assignment

__all__ = ["make_assignment_data", "position_accuracy"]


def make_assignment_data(
    n_samples: int = 200,
    n_items: int | tuple[int, int] = 5,
    n_features: int = 6,
    *,
    noise: float = 0.3,
    random_state: int | np.random.Generator | None = None,
) -> tuple[list[np.ndarray], list[np.ndarray], np.ndarray]:
    """``(X, Y, w_true)``: ``X[i]`` of shape (n, n, d), ``Y[i]`` a permutation (int64 array).

    ``n_items`` is n, or a ``(lo, hi)`` range (inclusive) to draw a size per instance.
    """
    if n_samples < 1 or n_features < 1 or noise < 0:
        raise ValueError(
            f"need n_samples ≥ 1, n_features ≥ 1 and noise ≥ 0, got {n_samples}, {n_features}, "
            f"{noise}"
        )
    rng = np.random.default_rng(random_state)
    w_true = rng.normal(size=n_features)
    w_true /= np.linalg.norm(w_true)
    lo, hi = (n_items, n_items) if isinstance(n_items, int) else n_items
    if not 1 <= lo <= hi:
        raise ValueError(f"n_items must be ≥ 1 (or a range lo ≤ hi), got {n_items}")
    X, Y = [], []
    for _ in range(n_samples):
        n = int(rng.integers(lo, hi + 1))
        x = rng.normal(size=(n, n, n_features))
        scores = x @ w_true + noise * rng.normal(size=(n, n))
        rows, cols = linear_sum_assignment(scores, maximize=True)
        y = np.empty(n, dtype=np.int64)
        y[rows] = cols
        X.append(x)
        Y.append(y)
    return X, Y, w_true


def position_accuracy(Y_true: list[np.ndarray], Y_pred: list[np.ndarray]) -> float:
    """Fraction of items assigned to their gold slot, over all instances (chance ≈ 1/n)."""
    hits = sum(
        int(np.count_nonzero(np.asarray(p) == np.asarray(t)))
        for t, p in zip(Y_true, Y_pred, strict=True)
    )
    total = sum(len(t) for t in Y_true)
    return hits / total
