"""Hierarchical metrics: a hand-computed 2-instance case and a set-based loop reference; AU(PRC)
against scikit-learn's micro average precision."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from bicrit.errors import InvalidInputError, InvalidParameterError
from bicrit.metrics import (
    hierarchical_accuracy,
    hierarchical_f1,
    hierarchical_scores,
    leaf_accuracy,
    per_level_accuracy,
    subset_accuracy,
)
from bicrit.metrics.hierarchy import accuracy, au_prc

# Tree:        0
#            /   \
#           1     2
#          / \     \
#         3   4     5
DEPTH = [0, 1, 1, 2, 2, 2]
# instance 1: y = {0,1,3}, ŷ = {0,1,4}   ∩ = {0,1}  |ŷ| = 3  |y| = 3
# instance 2: y = {0,2,5}, ŷ = {0,1}     ∩ = {0}    |ŷ| = 2  |y| = 3  (prediction stops at 1)
Y = [np.array([0, 1, 3]), np.array([0, 2, 5])]
Y_PRED = [np.array([0, 1, 4]), np.array([0, 1])]
# hP = (2 + 1)/(3 + 2) = 3/5, hR = 3/(3 + 3) = 1/2, hF = 2·(3/5)(1/2)/(3/5 + 1/2) = 6/11
# without the root: ∩ 1 + 0, |ŷ| 2 + 1, |y| 2 + 2 -> hP = 1/3, hR = 1/4, hF = 2/7
# per level: depth 0 both hold {0} -> 1; depth 1: {1}={1}, {2}≠{1} -> 1/2;
#            depth 2: {3}≠{4}, {5}≠{} -> 0


def as_matrix(sets, n_nodes=6):
    m = np.zeros((len(sets), n_nodes), dtype=int)
    for i, s in enumerate(sets):
        m[i, s] = 1
    return m


FORMS = {
    "lists": lambda s: s,
    "python lists": lambda s: [list(map(int, x)) for x in s],
    "dense": as_matrix,
    "sparse": lambda s: sp.csr_array(as_matrix(s)),
}


@pytest.mark.parametrize("form", FORMS)
def test_hand_computed(form):
    y, y_pred = FORMS[form](Y), FORMS[form](Y_PRED)
    assert hierarchical_scores(y, y_pred) == pytest.approx({"hP": 3 / 5, "hR": 1 / 2, "hF": 6 / 11})
    assert hierarchical_f1(y, y_pred) == pytest.approx(6 / 11)
    assert hierarchical_scores(y, y_pred, root=0) == pytest.approx(
        {"hP": 1 / 3, "hR": 1 / 4, "hF": 2 / 7}
    )
    assert accuracy(y, y_pred) == 0.0
    assert accuracy(y, y) == 1.0
    np.testing.assert_allclose(per_level_accuracy(y, y_pred, DEPTH), [1.0, 0.5, 0.0])


def test_mixed_forms_and_alias():
    assert hierarchical_accuracy is accuracy
    assert hierarchical_f1(as_matrix(Y), Y_PRED) == pytest.approx(6 / 11)
    assert hierarchical_f1(Y, sp.csr_matrix(as_matrix(Y_PRED))) == pytest.approx(6 / 11)


def test_leaf_accuracy():
    assert leaf_accuracy([3, 5, 4], np.array([4, 5, 4])) == pytest.approx(2 / 3)


def test_zero_division():
    only_root = [np.array([0]), np.array([0])]
    assert hierarchical_scores(only_root, only_root, root=0) == {"hP": 0.0, "hR": 0.0, "hF": 0.0}
    assert hierarchical_f1(only_root, only_root, root=0, zero_division=1.0) == 1.0
    # empty predictions: hP is 0/0, hR = 0
    s = hierarchical_scores(Y, [np.array([], dtype=int)] * 2, zero_division=1.0)
    assert s == {"hP": 1.0, "hR": 0.0, "hF": 0.0}


# --- random trees: a set-based loop as reference ------------------------------------------


@st.composite
def tree_labels(draw):
    n_nodes = draw(st.integers(1, 10))
    parent = [-1] + [draw(st.integers(0, v - 1)) for v in range(1, n_nodes)]
    depth = [0] * n_nodes
    for v in range(1, n_nodes):
        depth[v] = depth[parent[v]] + 1

    def closed(terminals):
        nodes = set()
        for v in terminals:
            while v != -1 and v not in nodes:
                nodes.add(v)
                v = parent[v]
        return sorted(nodes)

    n = draw(st.integers(1, 6))
    terminal_sets = st.lists(st.integers(0, n_nodes - 1), max_size=3)
    y = [closed(draw(terminal_sets)) for _ in range(n)]
    y_pred = [closed(draw(terminal_sets)) for _ in range(n)]
    return n_nodes, depth, y, y_pred


@settings(max_examples=150, deadline=None)
@given(case=tree_labels(), use_root=st.booleans())
def test_against_set_reference(case, use_root):
    n_nodes, depth, y, y_pred = case
    drop = {0} if use_root else set()
    sets = [(set(a) - drop, set(b) - drop) for a, b in zip(y, y_pred, strict=True)]
    inter = sum(len(a & b) for a, b in sets)
    n_true, n_pred = sum(len(a) for a, _ in sets), sum(len(b) for _, b in sets)
    expected = {
        "hP": inter / n_pred if n_pred else 0.0,
        "hR": inter / n_true if n_true else 0.0,
        "hF": 2 * inter / (n_true + n_pred) if n_true + n_pred else 0.0,
    }
    root = 0 if use_root else None
    as_arrays = [np.array(s, dtype=np.int64) for s in y], [np.array(s, dtype=int) for s in y_pred]
    as_dense = as_matrix(y, n_nodes), as_matrix(y_pred, n_nodes)
    for form in (as_arrays, as_dense, tuple(sp.csr_array(m) for m in as_dense)):
        assert hierarchical_scores(*form, root=root) == pytest.approx(expected)
        exact = np.mean([set(a) == set(b) for a, b in zip(y, y_pred, strict=True)])
        assert accuracy(*form) == pytest.approx(exact)
        levels = [
            np.mean(
                [
                    {v for v in a if depth[v] == d} == {v for v in b if depth[v] == d}
                    for a, b in zip(y, y_pred, strict=True)
                ]
            )
            for d in range(max(depth) + 1)
        ]
        np.testing.assert_allclose(per_level_accuracy(*form, depth), levels)
    assert accuracy(*as_dense) == pytest.approx(subset_accuracy(*as_dense))


# --- input validation ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("y", "y_pred", "message"),
    [
        ([[0, 3, 1]], [[0]], r"y\[0\] is not sorted without repeats"),
        ([[0], [0, 1, 1]], [[0], [0]], r"y\[1\] is not sorted without repeats"),
        ([[0], []], [[0], [2, 0]], r"y_pred\[1\] is not sorted without repeats"),
        ([[0, -1]], [[0]], r"y\[0\] holds the negative node id -1"),
        ([[0.0, 1.0]], [[0]], r"y\[0\] must hold integer node ids"),
        ([[[0]]], [[0]], r"y\[0\] must be a 1-D array of node ids"),
        ([[0], [0]], [[0]], r"same number of instances: y has 2, y_pred has 1"),
        ([], [], r"y is empty"),
        (np.ones((2, 3), int), np.ones((2, 4), int), r"y_pred has 4 node columns, but y has 3"),
        (np.ones((1, 3), int), [[0, 5]], r"y_pred\[0\] holds node id 5, but y has only 3 nodes"),
        (np.array([[0, 2]]), np.array([[0, 1]]), r"y must hold only 0/1 values"),
        ("0 1", [[0]], r"y must be a list of node-id arrays"),
    ],
)
def test_invalid_sets(y, y_pred, message):
    for func in (hierarchical_f1, hierarchical_scores, accuracy):
        with pytest.raises(InvalidInputError, match=message):
            func(y, y_pred)


def test_invalid_depth_and_root():
    with pytest.raises(InvalidInputError, match=r"y\[0\] holds node id 3, but depth has only 3"):
        per_level_accuracy([[0, 3]], [[0]], [0, 1, 1])
    with pytest.raises(InvalidInputError, match=r"y has 6 node columns, but depth has 3"):
        per_level_accuracy(as_matrix(Y), as_matrix(Y_PRED), [0, 1, 1])
    with pytest.raises(InvalidInputError, match=r"depth\[1\] = -1 is negative"):
        per_level_accuracy(Y, Y_PRED, [0, -1, 1, 2, 2, 2])
    with pytest.raises(InvalidInputError, match="depth must hold integers"):
        per_level_accuracy(Y, Y_PRED, [0.0, 1, 1, 2, 2, 2])
    with pytest.raises(InvalidInputError, match="depth must be a non-empty 1-D array"):
        per_level_accuracy(Y, Y_PRED, [])
    for bad in (-1, 1.5, "0", True):
        with pytest.raises(InvalidParameterError, match="root must be a non-negative node id"):
            hierarchical_f1(Y, Y_PRED, root=bad)
    with pytest.raises(InvalidInputError, match="leaves must be 1-D"):
        leaf_accuracy([[3]], [3])
    with pytest.raises(InvalidInputError, match="leaves_pred must hold integer node ids"):
        leaf_accuracy([3], [3.5])
    with pytest.raises(InvalidInputError, match="same number of instances"):
        leaf_accuracy([3, 4], [3])
    with pytest.raises(InvalidInputError, match="are empty"):
        leaf_accuracy([], [])


# --- AU(PRC) ---------------------------------------------------------------------------------


@settings(max_examples=100, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(1, 30),
    m=st.integers(2, 12),
    ties=st.booleans(),
)
def test_au_prc_equals_scikit_learn_micro_average_precision(seed, n, m, ties) -> None:
    from sklearn.metrics import average_precision_score

    rng = np.random.default_rng(seed)
    Y = (rng.random((n, m)) < 0.3).astype(np.int64)
    S = rng.integers(0, 4, size=(n, m)).astype(float) if ties else rng.normal(size=(n, m))
    exclude = sorted(set(rng.integers(0, m, size=rng.integers(0, 3)).tolist()))
    keep = [j for j in range(m) if j not in exclude]
    assume(Y[:, keep].sum() > 0)
    ref = average_precision_score(Y[:, keep], S[:, keep], average="micro")
    assert au_prc(Y, S, exclude=exclude) == pytest.approx(ref, rel=1e-12, abs=1e-12)
    # label-set input: the ids of each row's ones
    sets = [np.flatnonzero(row) for row in Y]
    assert au_prc(sets, S, exclude=exclude) == pytest.approx(ref, rel=1e-12, abs=1e-12)


def test_au_prc_values_by_hand() -> None:
    # ranking 0.9 (pos), 0.8 (neg), 0.7 (pos): AP = ½·1 + ½·⅔
    Y = np.array([[1, 0, 1]])
    assert au_prc(Y, [[0.9, 0.8, 0.7]]) == pytest.approx(0.5 + 1 / 3)
    # a perfect ranking, and the root column left out
    assert au_prc(np.array([[1, 1, 0], [1, 0, 0]]), [[9, 1, 0], [9, 0, -1]], exclude=[0]) == 1.0
    # ties enter together: all equal scores give the positive rate
    assert au_prc(np.array([[1, 0, 0, 0]]), [[1.0, 1.0, 1.0, 1.0]]) == pytest.approx(0.25)
    # ±∞ allowed (the root's node score)
    assert au_prc(np.array([[1, 1, 0]]), [[np.inf, 2.0, -np.inf]]) == 1.0


@pytest.mark.parametrize(
    ("y", "s", "kw", "match"),
    [
        (np.array([[1, 0]]), [[0.1, np.nan]], {}, "NaN"),
        (np.array([[1, 0]]), [0.1, 0.2], {}, "2-D"),
        (np.array([[0, 0]]), [[0.1, 0.2]], {}, "no positive"),
        (np.array([[1, 0]]), [[0.1, 0.2]], {"exclude": [0]}, "no positive"),
        (np.array([[1, 0]]), [[0.1, 0.2]], {"exclude": [0, 1]}, "leaves no node"),
        (np.array([[1, 0]]), [[0.1, 0.2]], {"exclude": [2]}, "outside 0..1"),
        (np.array([[1, 0], [0, 1]]), [[0.1, 0.2]], {}, "instances"),
        ([np.array([3])], [[0.1, 0.2]], {}, "node id 3"),
    ],
)
def test_au_prc_bad_input(y, s, kw, match) -> None:
    with pytest.raises(InvalidInputError, match=match):
        au_prc(y, s, **kw)
