"""Independent reference of the multilabel model for the tests: the documented feature layout
written out in numpy (vectorised over all 2^K labels), and the local-polytope LP written in its
textbook form (node marginals for both states, four edge marginals per edge, marginalisation
equalities) for ``scipy.optimize.linprog`` (HiGHS)."""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from scipy.optimize import linprog

from bicrit.structures.base import Cone

#: Must match bicrit's documented slack for strict cone ends: δ = 1e-7·(1 + |slope|).
CONE_STRICT_SLACK = 1e-7


def all_labels(K: int) -> np.ndarray:
    """All 2^K labels as rows of a (2^K, K) int array."""
    return np.array(list(itertools.product([0, 1], repeat=K)), dtype=np.int64).reshape(-1, K)


def split_weights(w: np.ndarray, K: int, d: int, n_edges: int) -> tuple[np.ndarray, np.ndarray]:
    """(unary blocks (K, d), edge weights (n_edges, 4)) of the documented layout."""
    return w[: K * d].reshape(K, d), w[K * d :].reshape(n_edges, 4)


def scores(w: np.ndarray, x: np.ndarray, Y: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """w·φ(x, y) for every row y of Y."""
    K, d = Y.shape[1], x.shape[0]
    U, W = split_weights(w, K, d, len(edges))
    s = Y @ (U @ x)
    for e, (i, j) in enumerate(edges):
        s = s + W[e, 2 * Y[:, i] + Y[:, j]]
    return s


def objective(
    margin: float, terms: Mapping[str, float], margin_coef: float, coef: Mapping[str, float]
) -> float:
    return margin_coef * margin + sum(c * terms[t] for t, c in coef.items())


def brute_force(
    w: np.ndarray,
    x: np.ndarray,
    y_true: np.ndarray,
    edges: np.ndarray,
    coef: Mapping[str, float],
    *,
    margin_coef: float = 1.0,
    tiebreak: tuple[float, Mapping[str, float]] | None = None,
    ban: Sequence[np.ndarray] = (),
    cone: Cone | None = None,
) -> list[tuple[float, float, np.ndarray, float, dict[str, float]]]:
    """All admissible labels as (primary, secondary, label, margin, terms), best first."""
    K = len(y_true)
    Y = all_labels(K)
    s = scores(w, x, Y, edges)
    gold = scores(w, x, y_true[None, :], edges)[0]
    banned = {tuple(int(v) for v in b) for b in ban}
    out = []
    for r in range(len(Y)):
        y = Y[r]
        if tuple(int(v) for v in y) in banned:
            continue
        m = float(s[r] - gold)
        loss = float(np.sum(y != y_true))
        t = {"loss": loss, "size": float(y.sum()), "hamming": loss}
        if cone is not None and not cone.contains(m, loss):
            continue
        p = objective(m, t, margin_coef, coef)
        q = 0.0 if tiebreak is None else objective(m, t, tiebreak[0], tiebreak[1])
        out.append((p, q, y, m, t))
    out.sort(key=lambda r: (-r[0], -r[1]))
    return out


class LocalPolytope:
    """The local-polytope LP of one instance in textbook form, for ``linprog``.

    Variables: ν_k(a) for a ∈ {0, 1} (2 per label), then μ_e(a, b) (4 per edge, state 2a + b).
    Equalities: ν_k(0) + ν_k(1) = 1; Σ_b μ_e(a, b) = ν_i(a); Σ_a μ_e(a, b) = ν_j(b).
    """

    def __init__(self, w: np.ndarray, x: np.ndarray, y_true: np.ndarray, edges: np.ndarray) -> None:
        K, d = len(y_true), len(x)
        self.K, self.E, self.edges = K, len(edges), edges
        U, W = split_weights(w, K, d, len(edges))
        theta = U @ x
        self.n = 2 * K + 4 * self.E
        # score, loss and size as linear functions of the variables (plus constants)
        self.score = np.zeros(self.n)
        self.score[1 : 2 * K : 2] = theta
        self.score[2 * K :] = W.ravel()
        self.gold_score = float(scores(w, x, y_true[None, :], edges)[0])
        self.loss = np.zeros(self.n)
        for k in range(K):
            self.loss[2 * k + (1 - y_true[k])] = 1.0  # the state that differs from the gold one
        self.size = np.zeros(self.n)
        self.size[1 : 2 * K : 2] = 1.0
        rows, rhs = [], []
        for k in range(K):
            r = np.zeros(self.n)
            r[2 * k] = r[2 * k + 1] = 1.0
            rows.append(r)
            rhs.append(1.0)
        for e, (i, j) in enumerate(edges):
            base = 2 * K + 4 * e
            for a in (0, 1):
                r = np.zeros(self.n)
                r[base + 2 * a] = r[base + 2 * a + 1] = 1.0
                r[2 * i + a] = -1.0
                rows.append(r)
                rhs.append(0.0)
            for b in (0, 1):
                r = np.zeros(self.n)
                r[base + b] = r[base + 2 + b] = 1.0
                r[2 * j + b] = -1.0
                rows.append(r)
                rhs.append(0.0)
        self.A_eq = np.array(rows)
        self.b_eq = np.array(rhs)

    def form(self, margin_coef: float, coef: Mapping[str, float]) -> tuple[np.ndarray, float]:
        """(vector, constant) of ``margin_coef·m + Σ coef·terms``."""
        c = margin_coef * self.score + (coef.get("loss", 0.0) + coef.get("hamming", 0.0)) * (
            self.loss
        )
        c = c + coef.get("size", 0.0) * self.size
        return c, -margin_coef * self.gold_score

    def cone_rows(self, cone: Cone) -> tuple[list[np.ndarray], list[float]]:
        """A_ub rows and b_ub of lo·(1 + m) ≤ L and L ≤ hi·(1 + m) (strict ends by δ)."""
        rows, rhs = [], []
        if not (cone.lo == 0 and cone.lo_closed):
            delta = 0.0 if cone.lo_closed else CONE_STRICT_SLACK * (1 + abs(cone.lo))
            rows.append(cone.lo * self.score - self.loss)
            rhs.append(-delta - cone.lo * (1 - self.gold_score))
        if math.isfinite(cone.hi):
            delta = 0.0 if cone.hi_closed else CONE_STRICT_SLACK * (1 + abs(cone.hi))
            rows.append(self.loss - cone.hi * self.score)
            rhs.append(-delta + cone.hi * (1 - self.gold_score))
        return rows, rhs

    def maximize(
        self,
        margin_coef: float,
        coef: Mapping[str, float],
        *,
        tiebreak: tuple[float, Mapping[str, float]] | None = None,
        cone: Cone | None = None,
        lex_tol: float = 1e-7,
    ) -> tuple[float, float] | None:
        """(primary optimum, tie-break value at the lexicographic optimum) or None if the cone
        rows are infeasible."""
        c, c0 = self.form(margin_coef, coef)
        A_ub: list[np.ndarray] = []
        b_ub: list[float] = []
        if cone is not None:
            A_ub, b_ub = self.cone_rows(cone)
        res = self._solve(-c, A_ub, b_ub)
        if res is None:
            return None
        p = float(c @ res.x + c0)
        if tiebreak is None:
            return p, 0.0
        c2, c20 = self.form(tiebreak[0], tiebreak[1])
        # HiGHS may call the optimal face infeasible when the cone rows leave only a sliver:
        # loosen the primary floor until it is found
        for tol in (lex_tol, 1e-9, 1e-7, 1e-6):
            floor = p - max(tol, lex_tol) * (1 + abs(p))
            res2 = self._solve(-c2, [*A_ub, -c], [*b_ub, -(floor - c0)])
            if res2 is not None:
                return p, float(c2 @ res2.x + c20)
        raise AssertionError("linprog lost the optimal face")

    def cone_slack(self, cone: Cone) -> float:
        """max t with every cone row holding with slack t (t ≤ 1): negative when the rows exclude
        the whole polytope, near 0 when they leave only a sliver."""
        rows, rhs = self.cone_rows(cone)
        if not rows:
            return 1.0
        A = np.hstack([np.array(rows), np.ones((len(rows), 1))])
        c = np.zeros(self.n + 1)
        c[-1] = -1.0
        res = linprog(
            c,
            A_ub=A,
            b_ub=np.array(rhs),
            A_eq=np.hstack([self.A_eq, np.zeros((len(self.A_eq), 1))]),
            b_eq=self.b_eq,
            bounds=[(0, 1)] * self.n + [(None, 1)],
            method="highs",
        )
        assert res.status == 0, res.message
        return float(res.x[-1])

    def _solve(self, c: np.ndarray, A_ub: list[np.ndarray], b_ub: list[float]) -> Any:
        res = linprog(
            c,
            A_ub=np.array(A_ub) if A_ub else None,
            b_ub=np.array(b_ub) if b_ub else None,
            A_eq=self.A_eq,
            b_eq=self.b_eq,
            bounds=(0, 1),
            method="highs",
        )
        if res.status == 2:
            return None
        assert res.status == 0, res.message
        return res
