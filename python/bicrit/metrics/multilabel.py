"""Multi-label metrics on 0/1 indicator matrices.

``Y`` (gold) and ``Y_pred`` are ``(n, K)`` arrays of 0/1 values — dense numpy arrays (bool, int or
float) or any ``scipy.sparse`` array or matrix — with one row per instance and one column per
label. Write ``y_i`` and ``ŷ_i`` for the label *sets* of row ``i``. Every metric here is a function
of six count vectors, computed once per call without densifying sparse input: per instance
``|y_i|``, ``|ŷ_i|``, ``|y_i ∩ ŷ_i|`` and per label ``k`` the gold count, predicted count and true
positives ``tp_k``.

Names follow the thesis where it is ambiguous:

* :func:`jaccard_accuracy` is the "Acc" column of the thesis's multi-label tables (example-based
  accuracy, Godbole & Sarawagi 2004), not subset accuracy.
* :func:`example_f1` is what the thesis's Micro-F1 surrogate chapter (``sec:microf1``) calls
  "Micro-F1": the per-instance F1 ``2|y ∩ ŷ| / (|y| + |ŷ|)`` averaged over instances.
* :func:`micro_f1` is the usual pooled (micro-averaged) F1 of scikit-learn and MULAN.

Zero-division conventions: an instance with ``|y| = |ŷ| = 0`` scores 1 in :func:`jaccard_accuracy`
and :func:`example_f1` (nothing to find, nothing wrongly predicted; also the thesis's convention
for the Micro-F1 surrogate). :func:`micro_f1` and :func:`macro_f1` take ``zero_division`` (default
0.0, scikit-learn's default) for a label, or the whole matrix, with no gold and no predicted
positive. They equal scikit-learn's ``f1_score`` with ``average='micro'``/``'macro'``/``'samples'``
(the latter with ``zero_division=1``), ``jaccard_score(average='samples', zero_division=1)``,
``hamming_loss`` and ``accuracy_score``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

from bicrit.errors import InvalidInputError
from bicrit.metrics._common import as_indicator, check_zero_division, divide, divide_scalar

__all__ = [
    "example_f1",
    "hamming_loss",
    "jaccard_accuracy",
    "macro_f1",
    "micro_f1",
    "multilabel_report",
    "subset_accuracy",
]


@dataclass(frozen=True)
class _Counts:
    """Sufficient statistics of a pair of indicator matrices."""

    n_true_row: np.ndarray  # |y_i|
    n_pred_row: np.ndarray  # |ŷ_i|
    n_both_row: np.ndarray  # |y_i ∩ ŷ_i|
    n_true_col: np.ndarray  # gold positives of each label
    n_pred_col: np.ndarray  # predicted positives of each label
    n_both_col: np.ndarray  # true positives of each label

    @property
    def n_diff_row(self) -> np.ndarray:
        """|y_i △ ŷ_i|, the Hamming distance of each instance."""
        return np.asarray(self.n_true_row + self.n_pred_row - 2 * self.n_both_row)

    @property
    def shape(self) -> tuple[int, int]:
        return self.n_true_row.shape[0], self.n_true_col.shape[0]


def _counts(Y: Any, Y_pred: Any) -> _Counts:
    """Validate the pair and compute the per-instance and per-label counts."""
    true = as_indicator(Y, "Y")
    pred = as_indicator(Y_pred, "Y_pred")
    if true.shape != pred.shape:
        raise InvalidInputError(
            f"Y and Y_pred must have the same shape, got Y {true.shape} and Y_pred {pred.shape}"
        )
    if sp.issparse(true) or sp.issparse(pred):
        true = sp.csr_array(true, dtype=np.int64)
        pred = sp.csr_array(pred, dtype=np.int64)
        both = true.multiply(pred)

        def rows(m: Any) -> np.ndarray:
            return np.asarray(m.sum(axis=1), dtype=np.int64).ravel()

        def cols(m: Any) -> np.ndarray:
            return np.asarray(m.sum(axis=0), dtype=np.int64).ravel()

    else:
        both = true & pred

        def rows(m: Any) -> np.ndarray:
            return np.asarray(m.sum(axis=1, dtype=np.int64)).ravel()

        def cols(m: Any) -> np.ndarray:
            return np.asarray(m.sum(axis=0, dtype=np.int64)).ravel()

    return _Counts(rows(true), rows(pred), rows(both), cols(true), cols(pred), cols(both))


def _subset(c: _Counts) -> float:
    return float(np.mean(c.n_diff_row == 0))


def _jaccard(c: _Counts) -> float:
    union = c.n_true_row + c.n_pred_row - c.n_both_row
    return float(np.mean(divide(c.n_both_row, union, 1.0)))


def _hamming(c: _Counts) -> float:
    n, k = c.shape
    return float(c.n_diff_row.sum() / (n * k))


def _micro(c: _Counts, zd: float) -> float:
    return divide_scalar(2 * c.n_both_row.sum(), c.n_true_row.sum() + c.n_pred_row.sum(), zd)


def _macro(c: _Counts, zd: float) -> float:
    return float(np.mean(divide(2 * c.n_both_col, c.n_true_col + c.n_pred_col, zd)))


def _example(c: _Counts) -> float:
    return float(np.mean(divide(2 * c.n_both_row, c.n_true_row + c.n_pred_row, 1.0)))


def subset_accuracy(Y: Any, Y_pred: Any) -> float:
    """Subset (exact-match) accuracy.

    .. math:: \\mathrm{SubsetAcc} = \\frac{1}{n}\\sum_{i=1}^{n} \\mathbf{1}[\\hat y_i = y_i]

    Parameters
    ----------
    Y, Y_pred : array-like or scipy.sparse of shape (n, K)
        Gold and predicted 0/1 indicator matrices.

    Returns
    -------
    float
        Fraction of instances whose whole label set is predicted exactly.
    """
    return _subset(_counts(Y, Y_pred))


def jaccard_accuracy(Y: Any, Y_pred: Any) -> float:
    """Example-based (Jaccard) accuracy, the "Acc" of the thesis's multi-label tables.

    .. math:: \\mathrm{Acc} = \\frac{1}{n}\\sum_{i=1}^{n}
              \\frac{|y_i \\cap \\hat y_i|}{|y_i \\cup \\hat y_i|},
              \\qquad \\frac{|\\emptyset \\cap \\emptyset|}{|\\emptyset \\cup \\emptyset|} := 1

    Parameters
    ----------
    Y, Y_pred : array-like or scipy.sparse of shape (n, K)
        Gold and predicted 0/1 indicator matrices.

    Returns
    -------
    float
        Mean Jaccard index of the gold and predicted sets. An instance whose gold and predicted
        sets are both empty scores 1 (it is predicted exactly). Equals scikit-learn's
        ``jaccard_score(Y, Y_pred, average='samples', zero_division=1)``.
    """
    return _jaccard(_counts(Y, Y_pred))


def hamming_loss(Y: Any, Y_pred: Any) -> float:
    """Hamming loss: the fraction of instance-label pairs predicted wrongly.

    .. math:: \\mathrm{HL} = \\frac{1}{nK}\\sum_{i=1}^{n} |y_i \\,\\triangle\\, \\hat y_i|

    Parameters
    ----------
    Y, Y_pred : array-like or scipy.sparse of shape (n, K)
        Gold and predicted 0/1 indicator matrices.

    Returns
    -------
    float
        Mean number of wrong labels per instance divided by ``K``.
    """
    return _hamming(_counts(Y, Y_pred))


def micro_f1(Y: Any, Y_pred: Any, *, zero_division: float = 0.0) -> float:
    """Micro-averaged F1, pooled over all instance-label pairs.

    .. math:: \\mathrm{F1}_{\\mathrm{micro}} = \\frac{2\\,TP}{2\\,TP + FP + FN}
              = \\frac{2\\sum_i |y_i \\cap \\hat y_i|}{\\sum_i |y_i| + \\sum_i |\\hat y_i|}

    Parameters
    ----------
    Y, Y_pred : array-like or scipy.sparse of shape (n, K)
        Gold and predicted 0/1 indicator matrices.
    zero_division : float, default 0.0
        Returned when there is no gold and no predicted positive at all (0/0).

    Returns
    -------
    float
        Pooled F1. Not the thesis's per-instance "Micro-F1": that is :func:`example_f1`.
    """
    zd = check_zero_division(zero_division)
    return _micro(_counts(Y, Y_pred), zd)


def macro_f1(Y: Any, Y_pred: Any, *, zero_division: float = 0.0) -> float:
    """Macro-averaged F1: the F1 of each label, averaged over the K labels.

    .. math:: \\mathrm{F1}_{\\mathrm{macro}} = \\frac{1}{K}\\sum_{k=1}^{K}
              \\frac{2\\,TP_k}{2\\,TP_k + FP_k + FN_k}

    Parameters
    ----------
    Y, Y_pred : array-like or scipy.sparse of shape (n, K)
        Gold and predicted 0/1 indicator matrices.
    zero_division : float, default 0.0
        F1 given to a label with no gold and no predicted positive (0/0). The default 0 is
        scikit-learn's; MULAN scores such a label 1. Rare labels absent from a test split make
        the difference noticeable, so report the convention with the number. Every label
        column counts in the average, including those that are absent.

    Returns
    -------
    float
        Unweighted mean of the per-label F1 scores.
    """
    zd = check_zero_division(zero_division)
    return _macro(_counts(Y, Y_pred), zd)


def example_f1(Y: Any, Y_pred: Any) -> float:
    """Example-based F1: the F1 of each instance, averaged over instances.

    This is what the thesis's Micro-F1 surrogate chapter (``sec:microf1``) calls "Micro-F1".

    .. math:: \\mathrm{F1}_{\\mathrm{example}} = \\frac{1}{n}\\sum_{i=1}^{n}
              \\frac{2|y_i \\cap \\hat y_i|}{|y_i| + |\\hat y_i|},
              \\qquad \\text{an instance with } |y_i| = |\\hat y_i| = 0 \\text{ scores } 1

    Parameters
    ----------
    Y, Y_pred : array-like or scipy.sparse of shape (n, K)
        Gold and predicted 0/1 indicator matrices.

    Returns
    -------
    float
        Mean per-instance F1. The per-instance value is the harmonic mean of precision
        ``|y ∩ ŷ|/|ŷ|`` and recall ``|y ∩ ŷ|/|y|`` whenever both are defined; an instance with
        exactly one empty side scores 0. Equals scikit-learn's
        ``f1_score(Y, Y_pred, average='samples', zero_division=1)``.
    """
    return _example(_counts(Y, Y_pred))


def multilabel_report(Y: Any, Y_pred: Any, *, zero_division: float = 0.0) -> dict[str, float]:
    """Every multi-label metric of this module, from one pass over the data.

    Parameters
    ----------
    Y, Y_pred : array-like or scipy.sparse of shape (n, K)
        Gold and predicted 0/1 indicator matrices.
    zero_division : float, default 0.0
        Passed to :func:`micro_f1` and :func:`macro_f1`.

    Returns
    -------
    dict
        Keys ``subset_accuracy``, ``jaccard_accuracy``, ``hamming_loss``, ``micro_f1``,
        ``macro_f1``, ``example_f1`` (each as computed by the function of that name) and
        ``n_samples``, ``n_labels``.
    """
    zd = check_zero_division(zero_division)
    c = _counts(Y, Y_pred)
    n, k = c.shape
    return {
        "subset_accuracy": _subset(c),
        "jaccard_accuracy": _jaccard(c),
        "hamming_loss": _hamming(c),
        "micro_f1": _micro(c, zd),
        "macro_f1": _macro(c, zd),
        "example_f1": _example(c),
        "n_samples": n,
        "n_labels": k,
    }
