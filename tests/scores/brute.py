"""Brute-force references for the score-level structures: every label of a tiny instance, its
score, task loss and terms computed here from the definitions (not by the code under test)."""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import numpy as np

import bicrit

SURROGATES = {
    "margin": {},
    "slack": {},
    "beta": {"beta": 0.5},
    "generalized": {"alpha": 1.25, "beta": 0.5},
    "log": {},
    "probloss": {},
    "probloss-convex": {},
    "microf1": {},
}


def surrogate(name: str):
    return bicrit.surrogate(name, **SURROGATES[name])


def psi_max(name: str, points: list[tuple[float, float]]) -> float:
    """max ψ over labels given as (m, loss, hamming, size, gold_size) tuples: the factor map of
    the surrogate (Micro-F1: h = H + m, g = −(|y| + |y_i|); others h = m, g = L)."""
    s = surrogate(name)
    best = -np.inf
    for m, loss, ham, size, gsize in points:
        h, g = (ham + m, -(size + gsize)) if name == "microf1" else (m, loss)
        best = max(best, float(s.value(h, g)))
    return best


# ---- chains -----------------------------------------------------------------------------------


def chain_score(u, tr, start, end, y) -> float:
    v = sum(u[t, s] for t, s in enumerate(y))
    for t in range(1, len(y)):
        v += tr[y[t - 1], y[t]] if tr.ndim == 2 else tr[t - 1, y[t - 1], y[t]]
    if start is not None:
        v += start[y[0]]
    if end is not None:
        v += end[y[-1]]
    return float(v)


def chain_points(u, tr, start, end, gold, outside) -> Iterator[tuple]:
    n, s = u.shape
    g0 = chain_score(u, tr, start, end, gold)
    gsize = sum(1 for x in gold if x not in outside)
    for y in itertools.product(range(s), repeat=n):
        loss = sum(a != b for a, b in zip(y, gold, strict=True))
        ham = sum(
            0
            if a == b
            else (
                0
                if a in outside and b in outside
                else (2 if a not in outside and b not in outside else 1)
            )
            for a, b in zip(y, gold, strict=True)
        )
        size = sum(1 for x in y if x not in outside)
        yield (chain_score(u, tr, start, end, y) - g0, loss, ham, size, gsize), y


# ---- trees ------------------------------------------------------------------------------------


def is_tree(heads, single_root: bool) -> bool:
    n = len(heads)
    if any(h == j + 1 for j, h in enumerate(heads)):
        return False
    roots = sum(1 for h in heads if h == 0)
    if roots == 0 or (single_root and roots > 1):
        return False
    for j in range(1, n + 1):
        seen, v = set(), j
        while v != 0:
            if v in seen:
                return False
            seen.add(v)
            v = heads[v - 1]
    return True


def is_projective(heads) -> bool:
    arcs = [(min(h, d), max(h, d)) for d, h in enumerate(heads, start=1)]
    return not any(a < c < b < e for a, b in arcs for c, e in arcs)


def trees(n: int, single_root: bool, projective: bool) -> list[tuple[int, ...]]:
    return [
        h
        for h in itertools.product(range(n + 1), repeat=n)
        if is_tree(h, single_root) and (not projective or is_projective(h))
    ]


def tree_score(arcs, labels, heads, rels) -> float:
    v = sum(arcs[h, d] for d, h in enumerate(heads, start=1))
    if labels is not None:
        v += sum(labels[h, d, r] for d, (h, r) in enumerate(zip(heads, rels, strict=True), start=1))
    return float(v)
