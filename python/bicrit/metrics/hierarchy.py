"""Hierarchical-classification metrics on ancestor-closed node sets.

A label is the set of hierarchy nodes it covers, closed under ancestors (a leaf, or an internal
node where the label ends, together with all its ancestors; a union of such paths in a DAG or in
hierarchical multi-label data). Either form is accepted for ``y`` and ``y_pred``:

* a sequence with one 1-D integer array per instance: the node ids, sorted, without repeats;
* an ``(n, n_nodes)`` 0/1 indicator matrix (dense or ``scipy.sparse``), column = node id.

The metrics do not see the hierarchy, so they do not check ancestor closure; the set-based
hierarchical scores of Kiritchenko et al. (2005) assume it — with closed sets, a prediction in the
right subtree earns partial credit for the shared ancestors.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TypedDict

import numpy as np
import scipy.sparse as sp

from bicrit.errors import InvalidInputError, InvalidParameterError
from bicrit.metrics._common import (
    as_indicator,
    check_same_count,
    check_zero_division,
    divide_scalar,
)

__all__ = [
    "HierarchicalScores",
    "accuracy",
    "au_prc",
    "hierarchical_f1",
    "hierarchical_scores",
    "leaf_accuracy",
    "per_level_accuracy",
]


class HierarchicalScores(TypedDict):
    """Hierarchical precision, recall and F1."""

    hP: float
    hR: float
    hF: float


def _is_matrix(y: Any) -> bool:
    return sp.issparse(y) or (isinstance(y, np.ndarray) and y.ndim == 2)


def _node_sets(y: Any, name: str, n_nodes: int | None, source: str) -> sp.csr_array:
    """Validate one label collection and return it as a CSR indicator of ones.

    ``n_nodes``, when known, is the number of node ids, which ``source`` names for messages.
    """
    if _is_matrix(y):
        m = sp.csr_array(as_indicator(y, name, columns="nodes"), dtype=np.int64)
        if n_nodes is not None and m.shape[1] != n_nodes:
            raise InvalidInputError(
                f"{name} has {m.shape[1]} node columns, but {source} has {n_nodes}"
            )
        return m
    if isinstance(y, str | bytes) or not isinstance(y, Sequence | np.ndarray):
        raise InvalidInputError(
            f"{name} must be a list of node-id arrays or an (n, n_nodes) indicator matrix, "
            f"got {type(y).__name__}"
        )
    if len(y) == 0:
        raise InvalidInputError(f"{name} is empty: it has no instances")
    rows = []
    for i, nodes in enumerate(y):
        arr = np.asarray(nodes)
        if arr.ndim != 1:
            raise InvalidInputError(
                f"{name}[{i}] must be a 1-D array of node ids, got shape {arr.shape}"
            )
        if arr.size and arr.dtype.kind not in "iu":
            raise InvalidInputError(
                f"{name}[{i}] must hold integer node ids, got dtype {arr.dtype}"
            )
        rows.append(arr.astype(np.int64, copy=False))
    lengths = np.fromiter((r.size for r in rows), dtype=np.int64, count=len(rows))
    indptr = np.concatenate(([0], np.cumsum(lengths)))
    indices = np.concatenate(rows) if indptr[-1] else np.zeros(0, dtype=np.int64)
    if indices.size and indices.min() < 0:
        k = int(np.flatnonzero(indices < 0)[0])
        i = int(np.searchsorted(indptr, k, side="right") - 1)
        raise InvalidInputError(f"{name}[{i}] holds the negative node id {indices[k]}")
    # within each row, ids must strictly increase (sorted, no repeats)
    step_ok = np.diff(indices) > 0
    row_starts = indptr[1:-1][(indptr[1:-1] > 0) & (indptr[1:-1] < indices.size)]
    step_ok[row_starts - 1] = True  # no order between the last id of a row and the next row
    if not step_ok.all():
        k = int(np.flatnonzero(~step_ok)[0]) + 1
        i = int(np.searchsorted(indptr, k, side="right") - 1)
        raise InvalidInputError(
            f"{name}[{i}] is not sorted without repeats: node ids must strictly increase"
        )
    width = int(indices.max()) + 1 if indices.size else 1
    if n_nodes is not None:
        if width > n_nodes:
            k = int(np.flatnonzero(indices >= n_nodes)[0])
            i = int(np.searchsorted(indptr, k, side="right") - 1)
            raise InvalidInputError(
                f"{name}[{i}] holds node id {indices[k]}, but {source} has only {n_nodes} nodes"
            )
        width = n_nodes
    data = np.ones(indices.size, dtype=np.int64)
    return sp.csr_array((data, indices, indptr), shape=(len(rows), width))


@dataclass(frozen=True)
class _Pair:
    true: sp.csr_array
    pred: sp.csr_array
    both: sp.csr_array


def _pair(y: Any, y_pred: Any, n_nodes: int | None = None) -> _Pair:
    """Validate both collections; when either is a matrix, its width fixes the node count."""
    source = "depth"
    if n_nodes is None and _is_matrix(y):
        n_nodes, source = np.shape(y)[1], "y"
    elif n_nodes is None and _is_matrix(y_pred):
        n_nodes, source = np.shape(y_pred)[1], "y_pred"
    true = _node_sets(y, "y", n_nodes, source)
    pred = _node_sets(y_pred, "y_pred", n_nodes, source)
    check_same_count(true.shape[0], pred.shape[0], "y", "y_pred", "instances")
    width = max(true.shape[1], pred.shape[1])
    true.resize((true.shape[0], width))
    pred.resize((pred.shape[0], width))
    return _Pair(true, pred, true.multiply(pred).tocsr())


def _row_sums(m: sp.csr_array) -> np.ndarray:
    return np.asarray(m.sum(axis=1), dtype=np.int64).ravel()


def _column(m: sp.csr_array, node: int) -> np.ndarray:
    if node >= m.shape[1]:
        return np.zeros(m.shape[0], dtype=np.int64)
    return np.asarray(m[:, [node]].sum(axis=1), dtype=np.int64).ravel()


def hierarchical_scores(
    y: Any, y_pred: Any, *, root: int | None = None, zero_division: float = 0.0
) -> HierarchicalScores:
    """Hierarchical precision, recall and F1, micro-pooled over instances (Kiritchenko et al.).

    With ``y_i`` and ``ŷ_i`` the ancestor-closed gold and predicted node sets of instance ``i``:

    .. math:: hP = \\frac{\\sum_i |\\hat y_i \\cap y_i|}{\\sum_i |\\hat y_i|}, \\quad
              hR = \\frac{\\sum_i |\\hat y_i \\cap y_i|}{\\sum_i |y_i|}, \\quad
              hF = \\frac{2\\, hP\\, hR}{hP + hR}
                 = \\frac{2 \\sum_i |\\hat y_i \\cap y_i|}{\\sum_i |\\hat y_i| + \\sum_i |y_i|}

    Parameters
    ----------
    y, y_pred : list of 1-D int arrays, or (n, n_nodes) 0/1 matrices
        Gold and predicted node sets (module docstring).
    root : int, optional
        Node id of the root, left out of every set: it is in every closed set and would only
        add the same free credit to each instance.
    zero_division : float, default 0.0
        Value of a score whose denominator is 0 (no predicted node for hP, no gold node for hR,
        neither for hF).

    Returns
    -------
    HierarchicalScores
        ``{"hP": ..., "hR": ..., "hF": ...}``.
    """
    zd = check_zero_division(zero_division)
    if root is not None and (
        isinstance(root, bool) or not isinstance(root, int | np.integer) or root < 0
    ):
        raise InvalidParameterError(f"root must be a non-negative node id or None, got {root!r}")
    p = _pair(y, y_pred)
    n_true, n_pred, n_both = (int(_row_sums(m).sum()) for m in (p.true, p.pred, p.both))
    if root is not None:
        n_true -= int(_column(p.true, int(root)).sum())
        n_pred -= int(_column(p.pred, int(root)).sum())
        n_both -= int(_column(p.both, int(root)).sum())
    return {
        "hP": divide_scalar(n_both, n_pred, zd),
        "hR": divide_scalar(n_both, n_true, zd),
        "hF": divide_scalar(2 * n_both, n_true + n_pred, zd),
    }


def hierarchical_f1(
    y: Any, y_pred: Any, *, root: int | None = None, zero_division: float = 0.0
) -> float:
    """Hierarchical F1 (Kiritchenko et al.), micro-pooled over instances.

    .. math:: hF = \\frac{2 \\sum_i |\\hat y_i \\cap y_i|}{\\sum_i |\\hat y_i| + \\sum_i |y_i|}

    the harmonic mean of hP and hR of :func:`hierarchical_scores`, whose parameters it takes.

    Parameters
    ----------
    y, y_pred : list of 1-D int arrays, or (n, n_nodes) 0/1 matrices
        Gold and predicted node sets (module docstring).
    root : int, optional
        Node id of the root, left out of every set.
    zero_division : float, default 0.0
        Returned when both sides hold no node at all.

    Returns
    -------
    float
        hF.
    """
    return hierarchical_scores(y, y_pred, root=root, zero_division=zero_division)["hF"]


def accuracy(y: Any, y_pred: Any) -> float:
    """Exact-match accuracy of node sets.

    .. math:: \\mathrm{Acc} = \\frac{1}{n}\\sum_{i=1}^{n} \\mathbf{1}[\\hat y_i = y_i]

    Parameters
    ----------
    y, y_pred : list of 1-D int arrays, or (n, n_nodes) 0/1 matrices
        Gold and predicted node sets (module docstring).

    Returns
    -------
    float
        Fraction of instances whose whole node set is predicted. For single-path labels in a
        tree this is leaf (or terminal-node) accuracy.
    """
    p = _pair(y, y_pred)
    diff = _row_sums(p.true) + _row_sums(p.pred) - 2 * _row_sums(p.both)
    return float(np.mean(diff == 0))


def _level_counts(m: sp.csr_array, depth: np.ndarray, n_levels: int) -> np.ndarray:
    """(n, n_levels) number of nodes of each instance at each depth."""
    n = m.shape[0]
    m = m.tocsr()
    m.sum_duplicates()
    rows = np.repeat(np.arange(n), np.diff(m.indptr))
    key = rows * n_levels + depth[m.indices]
    return np.bincount(key, minlength=n * n_levels).reshape(n, n_levels)


def per_level_accuracy(y: Any, y_pred: Any, depth: Any) -> np.ndarray:
    """Exact-match accuracy at each depth of the hierarchy.

    With ``y_i^{(d)} = {v ∈ y_i : depth(v) = d}`` the gold nodes of instance ``i`` at depth ``d``:

    .. math:: \\mathrm{Acc}_d = \\frac{1}{n}\\sum_{i=1}^{n}
              \\mathbf{1}\\big[\\hat y_i^{(d)} = y_i^{(d)}\\big], \\qquad d = 0, \\dots, D

    Every instance counts at every depth: one whose gold label stops above ``d`` is correct at
    ``d`` exactly when its prediction has no node at ``d`` either (correctly stopping early is a
    correct answer). With single-path labels in a tree, ``Acc_d`` is the accuracy of the
    prediction cut at depth ``d``.

    Parameters
    ----------
    y, y_pred : list of 1-D int arrays, or (n, n_nodes) 0/1 matrices
        Gold and predicted node sets (module docstring).
    depth : array-like of int, shape (n_nodes,)
        Depth of every node id (the root at depth 0). Matrix input must have ``n_nodes``
        columns; node ids of list input must lie below ``n_nodes``.

    Returns
    -------
    numpy.ndarray of shape (max(depth) + 1,)
        ``Acc_d`` for ``d = 0 … max(depth)``.
    """
    depth_arr = np.asarray(depth)
    if depth_arr.ndim != 1 or depth_arr.size == 0:
        raise InvalidInputError(
            f"depth must be a non-empty 1-D array (one entry per node), got shape {depth_arr.shape}"
        )
    if depth_arr.dtype.kind not in "iu":
        raise InvalidInputError(f"depth must hold integers, got dtype {depth_arr.dtype}")
    if depth_arr.min() < 0:
        node = int(np.flatnonzero(depth_arr < 0)[0])
        raise InvalidInputError(f"depth[{node}] = {depth_arr[node]} is negative")
    depth_arr = depth_arr.astype(np.int64)
    n_levels = int(depth_arr.max()) + 1
    p = _pair(y, y_pred, n_nodes=depth_arr.size)
    t, q, b = (_level_counts(m, depth_arr, n_levels) for m in (p.true, p.pred, p.both))
    return np.asarray(np.mean(t + q - 2 * b == 0, axis=0))


def leaf_accuracy(leaves: Any, leaves_pred: Any) -> float:
    """Accuracy for single-label tasks whose labels are leaves (one leaf id per instance).

    .. math:: \\mathrm{Acc}_{\\mathrm{leaf}} = \\frac{1}{n}\\sum_{i=1}^{n}
              \\mathbf{1}[\\hat \\ell_i = \\ell_i]

    Parameters
    ----------
    leaves, leaves_pred : array-like of int, shape (n,)
        Gold and predicted leaf node ids.

    Returns
    -------
    float
        Fraction of instances whose leaf is predicted; in a tree, the same as :func:`accuracy`
        on the leaves' ancestor-closed paths.
    """
    arrays = []
    for name, values in (("leaves", leaves), ("leaves_pred", leaves_pred)):
        arr = np.asarray(values)
        if arr.ndim != 1:
            raise InvalidInputError(
                f"{name} must be 1-D (one leaf id per instance), got shape {arr.shape}"
            )
        if arr.size and arr.dtype.kind not in "iu":
            raise InvalidInputError(f"{name} must hold integer node ids, got dtype {arr.dtype}")
        arrays.append(arr)
    check_same_count(arrays[0].size, arrays[1].size, "leaves", "leaves_pred", "instances")
    return float(np.mean(arrays[0] == arrays[1]))


def au_prc(y: Any, y_score: Any, *, exclude: Any = None) -> float:
    """Area under the micro-averaged precision–recall curve, AU(PRC), the headline number of
    hierarchical multi-label classification (Vens et al. 2008; Giunchiglia & Lukasiewicz 2020).

    Every (instance, node) pair of the evaluated nodes is one binary decision ranked by its
    score; with the pairs sorted by decreasing score and P_k, R_k the precision and recall at
    the k-th distinct score,

    .. math:: \\mathrm{AU(PRC)} = \\sum_k (R_k - R_{k-1})\\, P_k, \\qquad R_0 = 0

    — the step-wise average precision of ``sklearn.metrics.average_precision_score(Y, S,
    average="micro")`` over the same columns (tied scores enter together), which the tests
    compare it with.

    Parameters
    ----------
    y : list of 1-D int arrays, or (n, n_nodes) 0/1 matrix
        Gold node sets (module docstring); list input needs ``y_score``'s width.
    y_score : array-like of shape (n, n_nodes)
        A score per instance and node (column = node id): larger means more likely. ±∞ are
        allowed (e.g. the root's node score), NaN is not.
    exclude : sequence of int, optional
        Node ids left out of the evaluation. The field's protocol leaves out the root and, for
        the Gene Ontology sets, the three ontology roots (``bicrit reproduce hmc``).

    Returns
    -------
    float
        AU(PRC) in [0, 1].
    """
    S = np.asarray(y_score, dtype=np.float64)
    if S.ndim != 2:
        raise InvalidInputError(f"y_score must be 2-D (instances × nodes), got shape {S.shape}")
    if np.isnan(S).any():
        raise InvalidInputError("y_score contains NaN")
    T = _node_sets(y, "y", S.shape[1], "y_score")
    check_same_count(T.shape[0], S.shape[0], "y", "y_score", "instances")
    keep = np.ones(S.shape[1], dtype=bool)
    if exclude is not None:
        ex = np.asarray(list(exclude), dtype=np.int64).ravel()
        if ex.size and (ex.min() < 0 or ex.max() >= S.shape[1]):
            raise InvalidInputError(
                f"exclude holds node ids outside 0..{S.shape[1] - 1}: {ex.tolist()}"
            )
        keep[ex] = False
    if not keep.any():
        raise InvalidInputError("exclude leaves no node to evaluate")
    truth = (T.toarray()[:, keep] > 0).ravel()
    scores = S[:, keep].ravel()
    n_pos = int(truth.sum())
    if n_pos == 0:
        raise InvalidInputError("y has no positive among the evaluated nodes: AU(PRC) is undefined")
    order = np.argsort(-scores, kind="mergesort")
    s, t = scores[order], truth[order]
    last = np.r_[np.flatnonzero(s[1:] != s[:-1]), s.size - 1]  # last pair of each distinct score
    tp = np.cumsum(t)[last]
    precision = tp / (last + 1)
    recall_gain = np.diff(np.r_[0, tp]) / n_pos
    return float(np.sum(recall_gain * precision))
