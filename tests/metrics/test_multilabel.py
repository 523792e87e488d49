"""Multi-label metrics: scikit-learn as the reference on random inputs, plus hand-computed cases."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import example, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from sklearn import metrics as skm

from bicrit.errors import InvalidInputError, InvalidParameterError
from bicrit.metrics import (
    example_f1,
    hamming_loss,
    jaccard_accuracy,
    macro_f1,
    micro_f1,
    multilabel_report,
    subset_accuracy,
)

FUNCS = [subset_accuracy, jaccard_accuracy, hamming_loss, micro_f1, macro_f1, example_f1]


# --- hand-computed -------------------------------------------------------------------------

# 3 instances, 3 labels.
#   y_1 = {0, 2}  ŷ_1 = {0}      ∩ = {0}  ∪ = {0, 2}     |△| = 1
#   y_2 = {}      ŷ_2 = {}       ∩ = {}   ∪ = {}         |△| = 0   (empty ∪ empty)
#   y_3 = {0, 1}  ŷ_3 = {1, 2}   ∩ = {1}  ∪ = {0, 1, 2}  |△| = 2
Y = np.array([[1, 0, 1], [0, 0, 0], [1, 1, 0]])
P = np.array([[1, 0, 0], [0, 0, 0], [0, 1, 1]])
EXPECTED = {
    # only instance 2 is exact
    "subset_accuracy": 1 / 3,
    # (1/2 + 1 + 1/3) / 3 = 11/18; the empty/empty instance scores 1
    "jaccard_accuracy": 11 / 18,
    # (1 + 0 + 2) wrong pairs / 9 pairs
    "hamming_loss": 3 / 9,
    # pooled: TP = 2, |Y| = 4, |P| = 3 -> 2·2 / (4 + 3) = 4/7
    "micro_f1": 4 / 7,
    # label 0: tp 1, gold 2, pred 1 -> 2/3; label 1: tp 1, 1, 1 -> 1; label 2: tp 0, 1, 1 -> 0
    # mean (2/3 + 1 + 0) / 3 = 5/9
    "macro_f1": 5 / 9,
    # per instance 2·1/(2+1) = 2/3, 1 (empty/empty), 2·1/(2+2) = 1/2 -> (2/3 + 1 + 1/2)/3 = 13/18
    "example_f1": 13 / 18,
}


@pytest.mark.parametrize("func", FUNCS, ids=lambda f: f.__name__)
@pytest.mark.parametrize(
    "kind", ["dense", "bool", "float", "csr_matrix", "csr_array", "coo", "mixed"]
)
def test_hand_computed(func, kind):
    convert = {
        "dense": lambda a: a,
        "bool": lambda a: a.astype(bool),
        "float": lambda a: a.astype(float),
        "csr_matrix": sp.csr_matrix,
        "csr_array": sp.csr_array,
        "coo": sp.coo_array,
        "mixed": sp.csc_matrix,
    }[kind]
    y_pred = P if kind == "mixed" else convert(P)
    assert func(convert(Y), y_pred) == pytest.approx(EXPECTED[func.__name__])


def test_report_matches_functions():
    report = multilabel_report(Y, P)
    for name, value in EXPECTED.items():
        assert report[name] == pytest.approx(value)
    assert report["n_samples"] == 3
    assert report["n_labels"] == 3


def test_macro_zero_division_applies_to_absent_labels():
    # Label 2 is absent from gold and prediction: its F1 is 0/0. Labels 0 and 1 score 1 and 0.
    y = np.array([[1, 0, 0], [1, 1, 0]])
    p = np.array([[1, 0, 0], [1, 0, 0]])
    assert macro_f1(y, p) == pytest.approx((1 + 0 + 0) / 3)
    assert macro_f1(y, p, zero_division=1.0) == pytest.approx((1 + 0 + 1) / 3)
    assert math.isnan(macro_f1(y, p, zero_division=float("nan")))


def test_all_empty():
    z = np.zeros((4, 3), dtype=int)
    assert subset_accuracy(z, z) == 1.0
    assert jaccard_accuracy(z, z) == 1.0
    assert example_f1(z, z) == 1.0
    assert hamming_loss(z, z) == 0.0
    assert micro_f1(z, z) == 0.0
    assert micro_f1(z, z, zero_division=1) == 1.0
    assert macro_f1(z, z, zero_division=1) == 1.0


def test_one_sided_empty_instance_scores_zero():
    assert example_f1([[0, 0]], [[1, 0]]) == 0.0
    assert example_f1([[0, 1]], [[0, 0]]) == 0.0
    assert jaccard_accuracy([[0, 1]], [[0, 0]]) == 0.0


# --- scikit-learn as the reference -------------------------------------------------------


def sklearn_reference(Y: np.ndarray, P: np.ndarray, zd: float) -> dict[str, float]:
    """scikit-learn's numbers for our metrics.

    scikit-learn treats a one-column indicator as binary, so for K = 1 the example-based scores
    are taken on the matrix padded with an all-zero label (which changes no instance's sets nor
    the pooled counts), and Hamming loss and macro-F1 on the single column.
    """
    k = Y.shape[1]
    Yx, Px = (
        (np.hstack([Y, np.zeros_like(Y)]), np.hstack([P, np.zeros_like(P)])) if k == 1 else (Y, P)
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {
            "subset_accuracy": skm.accuracy_score(Yx, Px),
            "jaccard_accuracy": skm.jaccard_score(Yx, Px, average="samples", zero_division=1.0),
            "hamming_loss": skm.hamming_loss(Y[:, 0], P[:, 0])
            if k == 1
            else skm.hamming_loss(Y, P),
            "micro_f1": skm.f1_score(Yx, Px, average="micro", zero_division=zd),
            "macro_f1": (
                skm.f1_score(Y[:, 0], P[:, 0], zero_division=zd)
                if k == 1
                else skm.f1_score(Y, P, average="macro", zero_division=zd)
            ),
            "example_f1": skm.f1_score(Yx, Px, average="samples", zero_division=1.0),
        }


@st.composite
def indicator_pairs(draw):
    n = draw(st.integers(1, 12))
    k = draw(st.integers(1, 7))
    y = draw(arrays(np.int8, (n, k), elements=st.integers(0, 1)))
    p = draw(arrays(np.int8, (n, k), elements=st.integers(0, 1)))
    # sometimes force all-zero rows and columns in gold, prediction or both
    for arr in (y, p):
        if draw(st.booleans()):
            arr[draw(st.integers(0, n - 1)), :] = 0
        if draw(st.booleans()):
            arr[:, draw(st.integers(0, k - 1))] = 0
    return y, p


ONE = np.ones((1, 1), dtype=np.int8)
ZERO = np.zeros((1, 1), dtype=np.int8)


@settings(max_examples=150, deadline=None)
@given(pair=indicator_pairs(), zd=st.sampled_from([0.0, 1.0]))
@example(pair=(ZERO, ZERO), zd=0.0)  # single instance, single label, nothing anywhere
@example(pair=(ZERO, ZERO), zd=1.0)
@example(pair=(ONE, ZERO), zd=0.0)
@example(pair=(ZERO, ONE), zd=1.0)
@example(pair=(np.zeros((5, 4), np.int8), np.zeros((5, 4), np.int8)), zd=0.0)
@example(pair=(np.eye(3, dtype=np.int8), np.ones((3, 3), np.int8)), zd=0.0)
@example(pair=(np.array([[1, 0, 1, 1]], np.int8), np.array([[0, 0, 1, 0]], np.int8)), zd=1.0)
def test_against_sklearn(pair, zd):
    Y, P = pair
    ref = sklearn_reference(Y, P, zd)
    kwargs = {"zero_division": zd}
    for y, p in [(Y, P), (sp.csr_array(Y), sp.csr_array(P)), (sp.csr_matrix(Y), P)]:
        for func in FUNCS:
            extra = kwargs if func in (micro_f1, macro_f1) else {}
            assert func(y, p, **extra) == pytest.approx(ref[func.__name__]), func.__name__
        report = multilabel_report(y, p, zero_division=zd)
        for name, value in ref.items():
            assert report[name] == pytest.approx(value), name


# --- input validation --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("y", "p", "message"),
    [
        (np.ones((2, 3)), np.ones((2, 4)), r"same shape.*Y \(2, 3\) and Y_pred \(2, 4\)"),
        (np.ones((2, 3)), np.ones((3, 3)), r"same shape"),
        (np.ones(3), np.ones(3), r"Y must be 2-D"),
        (np.ones((2, 3)), np.ones((2, 3, 1)), r"Y_pred must be 2-D"),
        (
            np.array([[0, 2]]),
            np.array([[0, 1]]),
            r"Y must hold only 0/1 values, found 2 at row 0, column 1",
        ),
        (np.array([[0, 1]]), np.array([[0.5, 1]]), r"Y_pred must hold only 0/1 values, found 0.5"),
        (
            np.array([[0, 1]]),
            np.array([[np.nan, 1]]),
            r"Y_pred must hold only 0/1 values, found nan",
        ),
        (np.array([["a", "b"]]), np.array([[0, 1]]), r"Y must hold 0/1 values, got dtype"),
        (np.zeros((0, 3)), np.zeros((0, 3)), r"Y is empty"),
        (np.zeros((2, 0)), np.zeros((2, 0)), r"Y has no labels"),
        (
            sp.csr_array(np.array([[0, 3]])),
            np.array([[0, 1]]),
            r"Y must hold only 0/1 values, found 3",
        ),
        ([[0, 1], [1]], [[0, 1], [1, 0]], r"Y is not a rectangular array"),
    ],
)
def test_invalid_input(y, p, message):
    for func in FUNCS:
        with pytest.raises(InvalidInputError, match=message):
            func(y, p)


def test_duplicate_sparse_entries_are_summed_before_the_check():
    dup = sp.coo_array((np.array([1, 1]), (np.array([0, 0]), np.array([1, 1]))), shape=(1, 2))
    with pytest.raises(InvalidInputError, match="duplicate sparse entries"):
        micro_f1(dup, np.array([[0, 1]]))


def test_explicit_sparse_zeros_are_ignored():
    y = sp.csr_array((np.array([0, 1]), np.array([0, 1]), np.array([0, 2])), shape=(1, 2))
    assert subset_accuracy(y, np.array([[0, 1]])) == 1.0


@pytest.mark.parametrize("bad", [-0.1, 1.5, "warn", True, None])
def test_invalid_zero_division(bad):
    for func in (micro_f1, macro_f1, multilabel_report):
        with pytest.raises(InvalidParameterError, match="zero_division"):
            func(Y, P, zero_division=bad)
