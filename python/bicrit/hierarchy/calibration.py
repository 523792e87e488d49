"""Probabilities per node from a fitted :class:`~bicrit.HierarchicalSVM`, calibrated on held-out
data (docs/hierarchy-scores.md).

:class:`NodeCalibration` maps every node's max-marginal margin δ_n(x)
(:meth:`~bicrit.HierarchicalSVM.node_scores`) to a probability by Platt scaling,
``p_n = 1 / (1 + exp(−(a_n·δ_n + b_n)))``, with (a_n, b_n) fitted per node on data the model
was not trained on, with Platt's smoothed targets (N₊ + 1)/(N₊ + 2) and 1/(N₋ + 2) so that a
node with few or no positives gets a finite fit close to its held-out frequency (Platt 1999;
the Newton method with backtracking of Lin, Lin and Weng 2007). Then, by default, every node
takes the largest probability in its subtree (``p_n ← max_{c ∈ D(n)} p_c``), so the
probabilities are coherent with the hierarchy like the scores they come from.

The per-node logistic fits are native (thousands of 2-parameter fits, in parallel), rather than
one scikit-learn ``LogisticRegression`` per node: that is a Python loop of thousands of fits,
and it needs both classes present in every node's held-out labels.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from bicrit import _native
from bicrit.errors import InvalidInputError, check_flag

__all__ = ["NodeCalibration", "platt_fit"]


def platt_fit(
    scores: np.ndarray, labels: np.ndarray, weights: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Platt scaling of every column at once: ``(a, b)`` minimising the cross-entropy of
    ``σ(a·scores + b)`` against Platt's smoothed targets of ``labels`` (0/1), over the rows
    where ``weights`` is 1 (default: all). Columns with no row get a = 0, b = 0. Native
    (``rust/bicrit-hierarchy/src/platt.rs``: Newton with a backtracking line search per
    column, the columns in parallel)."""
    s = np.ascontiguousarray(scores, dtype=np.float64)
    y = np.ascontiguousarray(labels, dtype=np.float64)
    w = np.ones_like(s) if weights is None else np.ascontiguousarray(weights, dtype=np.float64)
    if s.ndim != 2:
        raise InvalidInputError(f"scores must be 2-D (instances × nodes), got {s.ndim}-D")
    return _native.platt_fit(s, y, w)


class NodeCalibration:
    """Calibrated, hierarchy-coherent node probabilities of a fitted
    :class:`~bicrit.HierarchicalSVM` (module docstring).

    Parameters
    ----------
    estimator:
        A fitted :class:`~bicrit.HierarchicalSVM`, not trained on the calibration data.
    coherent:
        Give each node the largest probability in its subtree, so that no node is more probable
        than its parent (default). ``False`` keeps the per-node Platt probabilities.
    threshold:
        Passed to :meth:`~bicrit.HierarchicalSVM.node_scores`.

    Attributes
    ----------
    a_, b_ : ndarray of shape (n_nodes,)
        Platt's slope and offset per node (the root's are unused: its probability is 1).
    """

    def __init__(self, estimator: Any, *, coherent: bool = True, threshold: float = 0.0) -> None:
        self.estimator = estimator
        self.coherent = coherent
        self.threshold = threshold

    def _gold(self, Y: Any, n: int) -> np.ndarray:
        est = self.estimator
        if Y is None:
            raise InvalidInputError("Y is required unless X is a hierarchy dataset")
        h0 = est._original_hierarchy()
        Ys = est._check_y(h0, Y, n)
        out = np.zeros((n, h0.n_nodes))
        for i, y in enumerate(Ys):
            out[i, y] = 1.0
        out[:, h0.root] = 1.0
        return out

    def fit(self, X: Any, Y: Any = None) -> NodeCalibration:
        """Fits Platt's (a_n, b_n) of every node on held-out ``(X, Y)`` (or a hierarchy dataset
        as ``X``) and returns ``self``."""
        self.estimator._check_fitted()
        S = self.estimator.node_scores(X, threshold=self.threshold)
        _, Y = self.estimator._split(X, Y)
        return self.fit_scores(S, Y)

    def fit_scores(self, scores: np.ndarray, Y: Any) -> NodeCalibration:
        """Fits on node scores computed elsewhere — e.g. out-of-fold scores of models trained
        like ``estimator`` on the other folds of its training data (cross-fitting, as
        ``bicrit reproduce hmc`` does) — and the gold label sets ``Y``; returns ``self``."""
        check_flag("coherent", self.coherent)
        est = self.estimator
        est._check_fitted()
        h = est._original_hierarchy()
        S = np.asarray(scores, dtype=np.float64)
        if S.ndim != 2 or S.shape[1] != h.n_nodes:
            raise InvalidInputError(
                f"scores must have shape (n, {h.n_nodes}) (one column per node), got {S.shape}"
            )
        if np.isnan(S).any():
            raise InvalidInputError("scores contain NaN")
        G = self._gold(Y, S.shape[0])
        self.a_, self.b_ = platt_fit(S, G, np.isfinite(S).astype(np.float64))
        self._children = h.children
        self._order = np.asarray(h.topological_order)[::-1]
        self._root = h.root
        return self

    def predict_proba(self, X: Any) -> np.ndarray:
        """(n, n_nodes) probability that each node is in the label of each instance (columns
        are node ids; the root's is 1). Non-finite node scores — nodes in every label or in
        none — give 1 or 0."""
        self._check_fitted()
        return self.predict_proba_scores(self.estimator.node_scores(X, threshold=self.threshold))

    def predict_proba_scores(self, scores: np.ndarray) -> np.ndarray:
        """:meth:`predict_proba` from node scores computed elsewhere (``node_scores(X)``)."""
        self._check_fitted()
        S = np.asarray(scores, dtype=np.float64)
        if S.ndim != 2 or S.shape[1] != self.a_.shape[0]:
            raise InvalidInputError(
                f"scores must have shape (n, {self.a_.shape[0]}) (one column per node), "
                f"got {S.shape}"
            )
        with np.errstate(over="ignore", invalid="ignore"):
            P = 1.0 / (1.0 + np.exp(-(self.a_ * np.where(np.isfinite(S), S, 0.0) + self.b_)))
        P = np.where(np.isposinf(S), 1.0, np.where(np.isneginf(S), 0.0, P))
        P[:, self._root] = 1.0
        if self.coherent:
            for v in self._order:
                ch = self._children[v]
                if ch:
                    P[:, v] = np.maximum(P[:, v], P[:, list(ch)].max(axis=1))
        return P

    def _check_fitted(self) -> None:
        if not hasattr(self, "a_"):
            from sklearn.exceptions import NotFittedError

            raise NotFittedError("this NodeCalibration is not fitted yet; call fit(X, Y) first")
