"""Multi-label decoding of ``HierarchicalSVM.predict``: the ``threshold`` offset added to every
reported node's score before the exact argmax (DP on trees, min-cut on DAGs), checked against
outcomes known without the model (a huge offset takes every node, a hugely negative one the
label with fewest nodes), and its errors; every multi-label model on a separable set with
internal terminals (virtual leaves), in both weight layouts."""

from __future__ import annotations

import numpy as np
import pytest

from bicrit.errors import IncompatibleError, InvalidParameterError
from bicrit.hierarchy import Hierarchy
from bicrit.hierarchy.estimator import HierarchicalSVM


def _tree() -> Hierarchy:
    #      root
    #     /    \
    #    a      b
    #   / \
    #  a1  a2
    return Hierarchy(["root", "a", "b", "a1", "a2"], [[], [0], [0], [1], [1]])


def _dag() -> Hierarchy:
    #      root
    #     /    \
    #    a      b
    #   / \   /
    #  a1  ab          (ab has parents a and b)
    return Hierarchy(["root", "a", "b", "a1", "ab"], [[], [0], [0], [1], [1, 2]])


def _multi(h: Hierarchy, sets: list[list[int]], n: int = 36) -> tuple[np.ndarray, list]:
    rng = np.random.default_rng(1)
    X = rng.standard_normal((n, 3))
    pick = rng.integers(0, len(sets), n)
    Y = [h.closure(sets[k]) for k in pick.tolist()]
    return X, [y[y != h.root] for y in Y]


@pytest.mark.parametrize("model", ["flat", "hsvm", "nhsvm"])
def test_threshold_extremes_on_a_tree(model: str) -> None:
    h = _tree()
    X, Y = _multi(h, [[3, 4], [3, 2], [4]])
    est = HierarchicalSVM(h, model=model, C=1.0, max_epochs=3).fit(X, Y)
    assert est.multilabel_
    # threshold 0 is the default decoding
    pairs = zip(est.predict(X), est.predict(X, threshold=0), strict=True)
    assert all(np.array_equal(p, q) for p, q in pairs)
    # a huge offset makes every node worth taking: the whole tree below the root
    assert all(p.tolist() == [1, 2, 3, 4] for p in est.predict(X, threshold=1e6))
    # a hugely negative one: the leaf-terminated set with fewest nodes, the path to b
    assert all(p.tolist() == [2] for p in est.predict(X, threshold=-1e6))


def test_threshold_extremes_on_a_dag() -> None:
    h = _dag()
    assert not h.is_tree
    X, Y = _multi(h, [[3, 4], [4], [2]])
    est = HierarchicalSVM(h, model="hsvm", C=1.0, max_epochs=3).fit(X, Y)
    assert all(p.tolist() == [1, 2, 3, 4] for p in est.predict(X, threshold=1e6))
    sizes0 = [len(p) for p in est.predict(X)]
    sizes1 = [len(p) for p in est.predict(X, threshold=1.0)]
    # the objective Σ_{n∈y}(s_n + τ) favours larger sets as τ grows
    assert np.mean(sizes1) >= np.mean(sizes0)


def test_threshold_errors() -> None:
    h = _tree()
    X, Y = _multi(h, [[3, 4], [2]])
    est = HierarchicalSVM(h, model="hsvm", max_epochs=2).fit(X, Y)
    for bad in (float("nan"), float("inf"), "1", True):
        with pytest.raises(InvalidParameterError, match="threshold"):
            est.predict(X, threshold=bad)
    single = HierarchicalSVM(h, model="hsvm", max_epochs=2).fit(X, [np.array([1, 3])] * len(X))
    assert not single.multilabel_
    with pytest.raises(IncompatibleError, match="multi-label"):
        single.predict(X, threshold=0.5)


def _separable(n: int = 240) -> tuple[Hierarchy, np.ndarray, list]:
    """Multi-label data on a tree where one feature marks each terminal (leaves a1, a2, b1, b2,
    c and the internal a, b, so virtual leaves are needed), plus a constant column."""
    rng = np.random.default_rng(0)
    names = ["root", "a", "b", "c", "a1", "a2", "b1", "b2"]
    h = Hierarchy(names, [[], [0], [0], [0], [1], [1], [2], [2]])
    terms = [3, 4, 5, 6, 7, 1, 2]
    Z = rng.random((n, len(terms))) < 0.25
    Z[:, 5] &= ~(Z[:, 1] | Z[:, 2])  # a as a terminal only without a1, a2
    Z[:, 6] &= ~(Z[:, 3] | Z[:, 4])
    Z[Z.sum(axis=1) == 0, 0] = True
    X = np.hstack([2.0 * Z - 1 + 0.3 * rng.standard_normal(Z.shape), np.ones((n, 1))])
    Y = [np.setdiff1d(h.closure([terms[j] for j in np.flatnonzero(z)]), [h.root]) for z in Z]
    return h, X, Y


@pytest.mark.parametrize("model", ["flat", "hsvm", "nhsvm", "ssvm"])
@pytest.mark.parametrize("layout", ["node", "feature"])
def test_multilabel_models_fit_a_separable_set(model: str, layout: str) -> None:
    from bicrit.metrics.hierarchy import hierarchical_f1

    h, X, Y = _separable()
    est = HierarchicalSVM(h, model=model, C=10.0, max_epochs=20, layout=layout).fit(X, Y)
    assert est.hierarchy_.n_nodes > h.n_nodes  # virtual leaves under a and b
    P = est.predict(X)
    assert hierarchical_f1(Y, P) >= 0.99
    assert np.mean([len(p) for p in P]) == pytest.approx(np.mean([len(y) for y in Y]), abs=0.05)
