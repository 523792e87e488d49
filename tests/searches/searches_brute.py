"""Brute force over explicit point sets, written independently of the code under test.

* integral optimum: enumerate the points;
* hull optimum: maximise ψ on every segment between two points (a grid crowding both ends, then
  a ternary refinement: ψ is quasi-concave, hence unimodal on a segment) — the optimum of a
  quasi-concave increasing ψ over a polygon lies on an edge between two of its points;
* chain vertices: exact rational arithmetic (fractions) on the floats: a point is a vertex of the
  λ ∈ [0, ∞] chain when it is the unique maximiser of h + λg on an interval of λ of positive
  length, or one of the two lexicographic extremes.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

# Half a segment, from its start: there a + t(b − a) is exact to the rounding of the point
# itself; every segment is searched from both ends.
_T = np.unique(np.concatenate([np.linspace(0.0, 0.5, 65), 10.0 ** -np.arange(1, 17)]))


def integral_opt(psi, h, g) -> float:
    return float(np.max(psi.value(np.asarray(h, float), np.asarray(g, float))))


def hull_opt(psi, h, g) -> float:
    """max ψ over every segment between two points (all segments at once, vectorised)."""
    pts = np.array(sorted(set(zip(h, g, strict=True))), dtype=float)
    best = float(np.max(psi.value(pts[:, 0], pts[:, 1])))
    if len(pts) < 2:
        return best
    # Every pair in both directions, each over its first half.
    i, j = np.triu_indices(len(pts), k=1)
    i, j = np.concatenate([i, j]), np.concatenate([j, i])
    a, b = pts[i], pts[j]

    def at(t):  # t: (pairs,) or (pairs, m)
        t = t if t.ndim == 2 else t[:, None]
        hh = a[:, :1] + t * (b[:, :1] - a[:, :1])
        gg = a[:, 1:] + t * (b[:, 1:] - a[:, 1:])
        return psi.value(hh, gg)

    grid = at(np.broadcast_to(_T, (len(a), len(_T))).copy())
    best = max(best, float(np.max(grid)))
    k = np.argmax(grid, axis=1)
    lo = _T[np.maximum(k - 1, 0)]
    hi = _T[np.minimum(k + 1, len(_T) - 1)]
    for _ in range(80):
        m1, m2 = lo + (hi - lo) / 3, hi - (hi - lo) / 3
        f1, f2 = at(m1)[:, 0], at(m2)[:, 0]
        up = f1 < f2
        lo = np.where(up, m1, lo)
        hi = np.where(up, hi, m2)
    return max(best, float(np.max(at(0.5 * (lo + hi)))))


def chain_vertices(h, g) -> int:
    pts = sorted({(Fraction(a), Fraction(b)) for a, b in zip(h, g, strict=True)})
    count = 0
    for p in pts:
        lo, hi = Fraction(0), None
        dominated = False
        for q in pts:
            if q == p:
                continue
            dh, dg = p[0] - q[0], p[1] - q[1]
            if dg > 0:
                lo = max(lo, -dh / dg)
            elif dg < 0:
                hi = dh / -dg if hi is None else min(hi, dh / -dg)
            elif dh < 0:
                dominated = True
        top_h = all((q[0], q[1]) <= (p[0], p[1]) for q in pts)
        top_g = all((q[1], q[0]) <= (p[1], p[0]) for q in pts)
        if top_h or top_g or (not dominated and (hi is None or lo < hi)):
            count += 1
    return count
