"""Independent references for the α solvers, written with scipy only (no bicrit code): random
trees and DAGs, the leaf-ancestor sets Ā(l) by a plain search, and the three convex problems
solved by SLSQP (power and Shared SVM problems) and HiGHS (the ρ = 1 LP)."""

from __future__ import annotations

import numpy as np
from scipy.optimize import Bounds, LinearConstraint, linprog, minimize


def random_parents(
    rng: np.random.Generator, n: int, max_parents: int
) -> tuple[list[list[int]], int]:
    """A random rooted tree (``max_parents = 1``) or DAG on ``n`` nodes, root id random."""
    perm = rng.permutation(n)
    parents: list[list[int]] = [[] for _ in range(n)]
    for i in range(1, n):
        k = int(rng.integers(1, min(max_parents, i) + 1))
        parents[perm[i]] = sorted(int(p) for p in rng.choice(perm[:i], size=k, replace=False))
    return parents, int(perm[0])


def random_branching_tree(rng: np.random.Generator, n_splits: int) -> list[list[int]]:
    """A tree rooted at 0 whose internal nodes all have 2 or 3 children (no single-child chains:
    it is its own minimal graph in the sense of Theorem ``thm:invarinace``)."""
    parents: list[list[int]] = [[]]
    leaves = [0]
    for _ in range(n_splits):
        v = leaves.pop(int(rng.integers(len(leaves))))
        for _ in range(int(rng.integers(2, 4))):
            parents.append([v])
            leaves.append(len(parents) - 1)
    return parents


def children_of(parents: list[list[int]]) -> list[list[int]]:
    ch: list[list[int]] = [[] for _ in parents]
    for v, ps in enumerate(parents):
        for p in ps:
            ch[p].append(v)
    return ch


def leaf_ancestors(parents: list[list[int]]) -> tuple[list[int], list[set[int]]]:
    """The leaves and Ā(l) (the leaf with all its ancestors) by depth-first search."""
    ch = children_of(parents)
    leaves = [v for v in range(len(parents)) if not ch[v]]
    sets = []
    for leaf in leaves:
        seen = {leaf}
        stack = [leaf]
        while stack:
            for p in parents[stack.pop()]:
                if p not in seen:
                    seen.add(p)
                    stack.append(p)
        sets.append(seen)
    return leaves, sets


def incidence(parents: list[list[int]]) -> np.ndarray:
    """A[l, n] = 1 when node n ∈ Ā(l), one row per leaf."""
    _, sets = leaf_ancestors(parents)
    A = np.zeros((len(sets), len(parents)))
    for r, s in enumerate(sets):
        A[r, sorted(s)] = 1.0
    return A


def _edges(parents: list[list[int]]) -> list[tuple[int, int]]:
    return [(p, c) for c, ps in enumerate(parents) for p in ps]


def _constraints(
    parents: list[list[int]], T: float | None, directional: bool, fixed_zero: list[int]
) -> list:
    A = incidence(parents)
    n = len(parents)
    cons = [LinearConstraint(A, 1.0, 1.0 if T is None else T)]
    if directional:
        D = np.zeros((len(_edges(parents)), n))
        for r, (p, c) in enumerate(_edges(parents)):
            D[r, c], D[r, p] = 1.0, -1.0
        cons.append(LinearConstraint(D, 0.0, np.inf))
    if fixed_zero:
        Z = np.zeros((len(fixed_zero), n))
        Z[np.arange(len(fixed_zero)), fixed_zero] = 1.0
        cons.append(LinearConstraint(Z, 0.0, 0.0))
    return cons


def _feasible_start(parents: list[list[int]]) -> np.ndarray:
    """α = 1 on the leaves: satisfies every constraint of every problem here."""
    ch = children_of(parents)
    return np.array([0.0 if ch[v] else 1.0 for v in range(len(parents))])


def power_reference(
    parents: list[list[int]],
    rho: float,
    *,
    T: float | None = None,
    directional: bool = False,
    root: int | None = None,
) -> float:
    """min Σ α^ρ over the leaf-sum constraints (with α_root = 0 when ``root`` is given), by
    SLSQP from the flat start; returns the optimal value."""
    n = len(parents)
    fixed = [] if root is None else [root]
    res = minimize(
        lambda a: float(np.sum(np.maximum(a, 0.0) ** rho)),
        _feasible_start(parents),
        jac=lambda a: rho * np.maximum(a, 0.0) ** (rho - 1.0),
        bounds=Bounds(np.zeros(n), np.full(n, np.inf)),
        constraints=_constraints(parents, T, directional, fixed),
        method="SLSQP",
        options={"ftol": 1e-15, "maxiter": 2000},
    )
    assert res.success, res.message
    return float(res.fun)


def maxmin_reference(
    parents: list[list[int]],
    *,
    T: float | None = None,
    directional: bool = True,
    root: int | None = None,
) -> float:
    """max t s.t. α_n ≥ t (n ≠ root when ``root`` is given), the leaf sums and the directional
    constraints, by HiGHS; returns t*."""
    n = len(parents)
    A = incidence(parents)
    rows, lo, hi = [], [], []
    for r in A:
        rows.append(np.append(r, 0.0))
        lo.append(1.0)
        hi.append(1.0 if T is None else T)
    for v in range(n):
        if v == root:
            continue
        r = np.zeros(n + 1)
        r[v], r[n] = 1.0, -1.0
        rows.append(r)
        lo.append(0.0)
        hi.append(np.inf)
    if directional:
        for p, c in _edges(parents):
            r = np.zeros(n + 1)
            r[c], r[p] = 1.0, -1.0
            rows.append(r)
            lo.append(0.0)
            hi.append(np.inf)
    M = np.array(rows)
    lo_a, hi_a = np.array(lo), np.array(hi)
    eq = lo_a == hi_a
    ub_rows = np.vstack([M[~eq & np.isfinite(hi_a)], -M[~eq]])
    ub_rhs = np.concatenate([hi_a[~eq & np.isfinite(hi_a)], -lo_a[~eq]])
    c = np.zeros(n + 1)
    c[n] = -1.0
    bounds = [(0.0, 0.0) if v == root else (0.0, None) for v in range(n)] + [(None, None)]
    res = linprog(c, A_ub=ub_rows, b_ub=ub_rhs, A_eq=M[eq], b_eq=lo_a[eq], bounds=bounds)
    assert res.status == 0, res.message
    return float(res.x[n])


def min_norm_on_face(
    parents: list[list[int]],
    t_star: float,
    *,
    T: float | None = None,
    directional: bool = True,
) -> float:
    """min Σ α² over {α feasible, α ≥ t*} (the tie-break of the ρ = 1 problem), by SLSQP."""
    n = len(parents)
    res = minimize(
        lambda a: float(a @ a),
        np.maximum(_feasible_start(parents), t_star),
        jac=lambda a: 2.0 * a,
        bounds=Bounds(np.full(n, t_star * (1 - 1e-9)), np.full(n, np.inf)),
        constraints=_constraints(parents, T, directional, []),
        method="SLSQP",
        options={"ftol": 1e-15, "maxiter": 2000},
    )
    assert res.success, res.message
    return float(res.fun)


def shared_dual(parents: list[list[int]], sq_norms: np.ndarray) -> float:
    """The optimum of min Σ N_n/α_n s.t. Σ_{Ā(l)} α ≤ 1, α ≥ 0, from its Lagrange dual

        max_{μ ≥ 0}  2·Σ_n √(N_n·(Aᵀμ)_n) − Σ_l μ_l

    (minimising N/α + g·α over α > 0 gives 2√(N·g)); concave, solved by BFGS over μ = e^ν (the
    bounds μ ≥ 0 become implicit). Weak duality: every feasible α has a primal value ≥ this."""
    A = incidence(parents)
    N = np.asarray(sq_norms, dtype=np.float64)
    scale = N.max()
    Ns = N / scale

    def neg(nu: np.ndarray) -> tuple[float, np.ndarray]:
        mu = np.exp(nu)
        g = A.T @ mu
        val = 2.0 * np.sqrt(Ns * g).sum() - mu.sum()
        dg = np.where(Ns > 0, np.sqrt(Ns / np.maximum(g, 1e-300)), 0.0)
        return -val, -((A @ dg - 1.0) * mu)

    best = -np.inf
    for start in (0.0, -2.0, 2.0):
        res = minimize(
            neg,
            np.full(A.shape[0], start),
            jac=True,
            method="BFGS",
            options={"gtol": 1e-12, "maxiter": 20000},
        )
        best = max(best, -float(res.fun))
    return best * scale
