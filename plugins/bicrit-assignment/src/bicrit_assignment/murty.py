"""Best, lexicographic-best and k-best perfect matchings of a square weight matrix.

* :func:`best_assignment` — a max-weight perfect matching
  (``scipy.optimize.linear_sum_assignment``), optionally with forced and forbidden pairs,
  optionally breaking exact ties of the primary weight by a secondary weight (lexicographic: the
  λ = 0 and λ = ∞ queries of a λ-oracle).
* :func:`ranked_assignments` — Murty's algorithm (K. G. Murty, "An algorithm for ranking all the
  assignments in order of increasing cost", Operations Research 16(3), 1968): the k best
  assignments in order, optionally skipping a ban list (the best assignments *not* in the list).

Exact lexicographic ties. The secondary weight may only decide among assignments of maximal
primary weight. An optimal dual (u, v) of the primary problem characterises them exactly: by
complementary slackness a perfect matching is primal-optimal iff it uses only *tight* pairs,
u_i + v_j = W_ij. The duals are recovered from the primal optimum σ as shortest-path potentials
(Bellman–Ford on the exchange graph i → i′ with length W_{iσ(i)} − W_{iσ(i′)}, which has no
negative cycle because σ is optimal), and the secondary problem is solved over the tight pairs
only.

Ties under rounding. Two assignments whose primary weights are equal in exact arithmetic may
differ by a few ulps once summed in floating point. Both steps therefore treat weights within a
tolerance relative to the largest |weight| as tied: the tight-pair test (``TIGHT_RTOL`` per pair)
and the ranking of Murty's subproblems, whose primary key is snapped to a grid of
``TIE_RTOL``·n·max|W| — so the secondary weight decides between assignments that differ only by
rounding, the same way in the best answer and in the k-best order.

Murty's partition: for the best solution σ of a subproblem (forced pairs F, forbidden pairs B)
and its free rows r_1, …, r_q, child t forces (r_s, σ(r_s)) for s < t and forbids (r_t, σ(r_t)).
The children partition the subproblem minus σ; a max-heap of subproblems keyed by their best
solution yields the assignments in non-increasing order of (primary, secondary).
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Collection

import numpy as np
from scipy.optimize import linear_sum_assignment

__all__ = ["assignment_weight", "best_assignment", "ranked_assignments"]

#: Relative tolerance of the tight-pair test (times n and the largest |weight|).
TIGHT_RTOL = 1e-12
#: Grid of primary weights treated as tied in the k-best order (times n and the largest |weight|).
TIE_RTOL = 1e-10

Pairs = frozenset[tuple[int, int]]


def assignment_weight(W: np.ndarray, perm: np.ndarray) -> float:
    """Σ_i W[i, perm[i]], summed in row order."""
    return float(sum(W[i, int(j)] for i, j in enumerate(perm)))


def _cost(W: np.ndarray, forced: dict[int, int], forbidden: Pairs) -> np.ndarray:
    """Minimisation costs −W with forbidden pairs (and the other pairs of forced rows/columns)
    set to +inf, which ``linear_sum_assignment`` never picks."""
    C = -np.array(W, dtype=float)
    for i, j in forbidden:
        C[i, j] = np.inf
    for i, j in forced.items():
        keep = C[i, j]
        C[i, :] = np.inf
        C[:, j] = np.inf
        C[i, j] = keep
    return C


def _solve(C: np.ndarray) -> np.ndarray | None:
    """Column of each row in a min-cost perfect matching of C, or None when none is finite."""
    try:
        rows, cols = linear_sum_assignment(C)
    except ValueError:  # "cost matrix is infeasible"
        return None
    perm = np.empty(C.shape[0], dtype=np.int64)
    perm[rows] = cols
    if not np.all(np.isfinite(C[np.arange(C.shape[0]), perm])):
        return None
    return perm


def _scale(W: np.ndarray) -> float:
    """The largest finite |weight| (1 when all are 0): the magnitude rounding errors scale with."""
    finite = np.abs(W[np.isfinite(W)])
    top = float(np.max(finite)) if finite.size else 0.0
    return top if top > 0.0 else 1.0


def _tight_pairs(C: np.ndarray, perm: np.ndarray) -> np.ndarray:
    """Mask of the pairs that are tight under an optimal dual of min Σ C[i, σ(i)] at σ = perm.

    With d[i] := v_{σ(i)}, dual feasibility u_i + v_j ≤ C_ij and complementary slackness
    u_i = C_{iσ(i)} − v_{σ(i)} read d[i′] ≤ d[i] + (C_{iσ(i′)} − C_{iσ(i)}): difference
    constraints, solved by Bellman–Ford from a virtual source (all d = 0).
    """
    n = C.shape[0]
    rows = np.arange(n)
    on = C[rows, perm]
    W = C[:, perm] - on[:, None]  # W[i, i'] = C[i, σ(i')] − C[i, σ(i)]
    d = np.zeros(n)
    for _ in range(n):
        nd = np.minimum(d, np.min(d[:, None] + W, axis=0))
        if np.array_equal(nd, d):
            break
        d = nd
    v = np.empty(n)
    v[perm] = d
    u = on - d
    reduced = C - u[:, None] - v[None, :]
    return np.isfinite(C) & (reduced <= TIGHT_RTOL * n * _scale(C))


def best_assignment(
    W: np.ndarray,
    secondary: np.ndarray | None = None,
    *,
    forced: dict[int, int] | None = None,
    forbidden: Collection[tuple[int, int]] = (),
) -> np.ndarray | None:
    """A perfect matching maximising Σ W[i, σ(i)] (ties broken by ``secondary`` when given),
    honouring ``forced`` (row → column) and ``forbidden`` pairs; None when none exists."""
    forced = dict(forced or {})
    C = _cost(W, forced, frozenset(forbidden))
    perm = _solve(C)
    if perm is None or secondary is None:
        return perm
    tight = _tight_pairs(C, perm)
    C2 = -np.array(secondary, dtype=float)
    C2[~tight] = np.inf
    again = _solve(C2)
    return perm if again is None else again


def ranked_assignments(
    W: np.ndarray,
    k: int = 1,
    secondary: np.ndarray | None = None,
    ban: Collection[tuple[int, ...]] = (),
) -> list[np.ndarray]:
    """The ``k`` best perfect matchings (fewer when there are fewer), best first under
    (Σ W, Σ secondary) lexicographically, skipping those listed in ``ban`` (as tuples of
    columns). Murty's algorithm: one or two ``linear_sum_assignment`` per subproblem."""
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    n = W.shape[0]
    banned = {tuple(int(j) for j in b) for b in ban}

    grid = TIE_RTOL * n * _scale(W) if secondary is not None else 0.0

    def key(perm: np.ndarray) -> tuple[float, float]:
        p = assignment_weight(W, perm)
        if secondary is None:
            return (-p, 0.0)
        return (-float(round(p / grid)), -assignment_weight(secondary, perm))

    tie = itertools.count()
    first = best_assignment(W, secondary)
    if first is None:
        return []
    heap: list[tuple[tuple[float, float], int, np.ndarray, dict[int, int], Pairs]] = [
        (key(first), next(tie), first, {}, frozenset())
    ]
    out: list[np.ndarray] = []
    while heap and len(out) < k:
        _, _, perm, forced, forbidden = heapq.heappop(heap)
        if tuple(int(j) for j in perm) not in banned:
            out.append(perm)
            if len(out) == k:
                break
        free = [i for i in range(n) if i not in forced]
        fixed = dict(forced)
        for r in free[:-1]:  # forcing all other free rows fixes the last one: no child there
            excl = forbidden | {(r, int(perm[r]))}
            child = best_assignment(W, secondary, forced=fixed, forbidden=excl)
            if child is not None:
                heapq.heappush(heap, (key(child), next(tie), child, dict(fixed), excl))
            fixed[r] = int(perm[r])
    return out
