"""Per-node scores of HierarchicalSVM (max-marginal margins) against brute force over the fitted
label space, their coherence with the hierarchy (trees and DAGs, every model), their agreement
with ``predict``; feature scaling and node biases; NodeCalibration's Platt fits against scipy
and its coherent probabilities."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy.optimize import minimize
from sklearn.exceptions import NotFittedError

from bicrit.datasets import synthetic_hierarchy
from bicrit.errors import InvalidInputError, InvalidParameterError
from bicrit.hierarchy import Hierarchy, NodeCalibration, platt_fit
from bicrit.hierarchy.estimator import HierarchicalSVM
from bicrit.metrics.hierarchy import au_prc

FAST = {"max_epochs": 6, "alpha_every": 2, "max_alternations": 2, "random_state": 0}


def _assert_agree(h: Hierarchy, S: np.ndarray, P: list) -> None:
    """δ_n > 0 for the nodes of the predicted label, δ_n < 0 for the others — up to ties
    (δ_n = 0: a label with n and one without it score the same, e.g. nodes with α_n = 0)."""
    for s, y in zip(S, P, strict=True):
        pred = np.zeros(h.n_nodes, dtype=bool)
        pred[y] = True
        pred[h.root] = True
        assert np.all(s[pred] >= -1e-9) and np.all(s[~pred] <= 1e-9)


def _edges(h: Hierarchy) -> list[tuple[int, int]]:
    return [(p, v) for v in range(h.n_nodes) for p in h.parents[v]]


def _assert_coherent(h: Hierarchy, S: np.ndarray) -> None:
    for p, c in _edges(h):
        assert np.all(S[:, p] >= S[:, c] - 1e-9), (p, c)


def _multi_tree():
    """A tree whose multi-label labels are leaf-terminated (no virtual leaves are added)."""
    #        root
    #      /   |   \
    #     a    b    c
    #    / \   |
    #   a1 a2  b1
    h = Hierarchy(["root", "a", "b", "c", "a1", "a2", "b1"], [[], [0], [0], [0], [1], [1], [2]])
    rng = np.random.default_rng(1)
    n, d = 120, 5
    X = rng.normal(size=(n, d)) * 3 + 1
    W = rng.normal(size=(4, d))
    leaves = [3, 4, 5, 6]
    Y = []
    for i in range(n):
        on = [leaves[k] for k in range(4) if X[i] @ W[k] > 0] or [
            leaves[int(np.argmax(X[i] @ W.T))]
        ]
        Y.append(h.closure(on))
    return h, X, Y


def _brute_delta(h: Hierarchy, sigma: np.ndarray) -> np.ndarray:
    """max_{y ∋ n} S(y) − max_{y ∌ n} S(y) over the leaf-terminated multi-label sets."""
    n = h.n_nodes
    labels = []
    for mask in range(1 << n):
        y = {v for v in range(n) if mask >> v & 1}
        if h.root not in y or any(p not in y for v in y for p in h.parents[v]):
            continue
        if any(h.children[v] and not any(c in y for c in h.children[v]) for v in y):
            continue
        labels.append(y)
    out = np.empty(n)
    for v in range(n):
        inside = max(sigma[list(y)].sum() for y in labels if v in y)
        rest = [sigma[list(y)].sum() for y in labels if v not in y]
        out[v] = inside - (max(rest) if rest else -np.inf)
    return out


def test_node_scores_equal_brute_force_over_the_fitted_space() -> None:
    """σ_n = U_n·x̃ + b_n from the public coef_, intercept_ and scaling (x̃ the standardised x);
    node_scores is max_{y ∋ n} − max_{y ∌ n} of Σ_{v ∈ y} σ_v over every leaf-terminated
    multi-label set of the tree."""
    h, X, Y = _multi_tree()
    est = HierarchicalSVM(h, model="hsvm", labels="leaves", C=1.0, **FAST).fit(X, Y)
    assert est.hierarchy_.n_nodes == h.n_nodes  # no virtual leaves
    Xt = X[:15]
    sigma = ((Xt - est.scale_mean_) / est.scale_std_) @ est.coef_.T + est.intercept_
    got = est.node_scores(Xt)
    for i in range(len(Xt)):
        np.testing.assert_allclose(got[i], _brute_delta(h, sigma[i]), rtol=1e-9, atol=1e-9)
    np.testing.assert_array_equal(est.decision_function(Xt, level="node"), got)


@pytest.mark.parametrize("model", ["flat", "hsvm", "nhsvm", "ssvm"])
def test_node_scores_are_coherent_and_agree_with_predict_on_a_tree(data_dir, model) -> None:
    from bicrit.datasets import load

    tr = load("clus_hmc/church_FUN", "train", root=data_dir, impute="mean")
    X, Y = tr.X[:200], tr.Y[:200]
    est = HierarchicalSVM(tr, model=model, C=1.0, **FAST).fit(X, Y)
    assert est.hierarchy_.n_nodes > tr.hierarchy.n_nodes  # virtual leaves were added
    S = est.node_scores(X[:40])
    h = tr.hierarchy
    assert S.shape == (40, h.n_nodes)
    assert np.all(np.isposinf(S[:, h.root]))
    _assert_coherent(h, S)
    for thr in (0.0, 0.5):
        S = est.node_scores(X[:40], threshold=thr)
        _assert_agree(h, S, est.predict(X[:40], threshold=thr))


@pytest.mark.parametrize("model", ["hsvm", "nhsvm"])
def test_node_scores_are_coherent_on_a_go_dag(data_dir, model) -> None:
    from bicrit.datasets import load

    tr = load("clus_hmc/pheno_GO", "train", root=data_dir, impute="mean")
    X, Y = tr.X[:60], tr.Y[:60]
    est = HierarchicalSVM(tr, model=model, C=1.0, **FAST).fit(X, Y)
    h = tr.hierarchy
    assert not h.is_tree
    S = est.node_scores(X[:10], threshold=0.2)
    _assert_coherent(h, S)
    _assert_agree(h, S, est.predict(X[:10], threshold=0.2))


def test_single_label_node_scores_follow_the_predicted_path() -> None:
    ds = synthetic_hierarchy("unbalanced", seed=3, n=300, d=20, depth=4)
    tr, te = ds.split("train"), ds.split("test")
    for model in ("nhsvm3", "flat"):
        est = HierarchicalSVM(ds, model=model, C=1.0, **FAST).fit(tr.X, tr.Y)
        assert est.multilabel_ is False
        S = est.node_scores(te.X[:30])
        _assert_coherent(ds.hierarchy, S)
        _assert_agree(ds.hierarchy, S, est.predict(te.X[:30]))


def test_node_scores_errors() -> None:
    h, X, Y = _multi_tree()
    est = HierarchicalSVM(h, model="hsvm", **FAST)
    with pytest.raises(NotFittedError):
        est.node_scores(X)
    est.fit(X, Y)
    with pytest.raises(InvalidParameterError, match="level must be 'leaf' or 'node'"):
        est.decision_function(X, level="nodes")
    with pytest.raises(InvalidParameterError, match="threshold must be a finite number"):
        est.node_scores(X, threshold=np.nan)
    with pytest.raises(InvalidInputError, match="5 features"):
        est.node_scores(X[:, :3])


# --- scaling and node biases ----------------------------------------------------------------------


def test_scale_equals_fitting_on_standardised_features() -> None:
    h, X, Y = _multi_tree()
    a = HierarchicalSVM(h, model="hsvm", **FAST).fit(X, Y)
    Z = (X - X.mean(axis=0)) / X.std(axis=0)
    b = HierarchicalSVM(h, model="hsvm", scale=False, **FAST).fit(Z, Y)
    np.testing.assert_allclose(a.scale_mean_, X.mean(axis=0))
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(a.node_scores(X), b.node_scores(Z), rtol=1e-9, atol=1e-9)
    assert b.scale_mean_ is None and b.scale_std_ is None


@pytest.mark.parametrize("c", [1.0, 10.0])
def test_intercept_is_a_constant_feature_of_value_intercept_scaling(c) -> None:
    h, X, Y = _multi_tree()
    a = HierarchicalSVM(h, model="nhsvm", scale=False, intercept_scaling=c, **FAST).fit(X, Y)
    Xc = np.hstack([X, np.full((len(X), 1), c)])
    b = HierarchicalSVM(h, model="nhsvm", scale=False, fit_intercept=False, **FAST).fit(Xc, Y)
    assert a.coef_.shape == (h.n_nodes, X.shape[1]) and a.intercept_.shape == (h.n_nodes,)
    np.testing.assert_allclose(a.coef_, b.coef_[:, :-1], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(a.intercept_, b.coef_[:, -1] * c, rtol=1e-9, atol=1e-12)
    assert np.any(a.intercept_ != 0)
    off = HierarchicalSVM(h, model="nhsvm", fit_intercept=False, **FAST).fit(X, Y)
    assert np.all(off.intercept_ == 0) and off.coef_.shape == (h.n_nodes, X.shape[1])


def test_scaling_and_biases_survive_save_and_load(tmp_path) -> None:
    h, X, Y = _multi_tree()
    est = HierarchicalSVM(h, model="nhsvm", intercept_scaling=3.0, **FAST).fit(X, Y)
    back = HierarchicalSVM.load(est.save(tmp_path / "m.bicrit"))
    for name in ("coef_", "intercept_", "scale_mean_", "scale_std_"):
        assert getattr(back, name).tobytes() == getattr(est, name).tobytes(), name
    assert back.node_scores(X).tobytes() == est.node_scores(X).tobytes()


@pytest.mark.parametrize(
    ("kw", "match"),
    [
        ({"scale": "yes"}, "scale must be True or False"),
        ({"fit_intercept": 1}, "fit_intercept must be True or False"),
        ({"intercept_scaling": 0.0}, "intercept_scaling must be a number > 0"),
        ({"intercept_scaling": np.inf}, "intercept_scaling must be a number > 0"),
    ],
)
def test_bad_scaling_parameters(kw, match) -> None:
    h, X, Y = _multi_tree()
    with pytest.raises(InvalidParameterError, match=match):
        HierarchicalSVM(h, **kw).fit(X, Y)


# --- calibration ----------------------------------------------------------------------------------


def _platt_reference(s: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    n_pos, n_neg = y.sum(), (1 - y).sum()
    t = np.where(y > 0, (n_pos + 1) / (n_pos + 2), 1 / (n_neg + 2))

    def f(p: np.ndarray) -> float:
        z = p[0] * s + p[1]
        return float(np.sum(np.logaddexp(0, z) - t * z))

    r = minimize(f, np.zeros(2), method="BFGS", options={"gtol": 1e-10})
    return float(r.x[0]), float(r.x[1])


def test_platt_fit_equals_a_generic_minimiser() -> None:
    rng = np.random.default_rng(0)
    n = 80
    s = rng.normal(size=(n, 5))
    y = np.zeros((n, 5))
    y[:, 0] = rng.random(n) < 1 / (1 + np.exp(-2 * s[:, 0]))  # informative
    y[:, 1] = s[:, 1] > 0  # separable: Platt's targets keep the fit finite
    y[:3, 2] = 1  # rare
    # column 3: no positive; column 4: all positive
    y[:, 4] = 1
    a, b = platt_fit(s, y)
    for j in range(5):
        ra, rb = _platt_reference(s[:, j], y[:, j])
        assert a[j] == pytest.approx(ra, abs=1e-4) and b[j] == pytest.approx(rb, abs=1e-4)
    # masked rows are ignored
    w = np.ones_like(s)
    w[40:] = 0
    a2, b2 = platt_fit(s, y, w)
    a3, b3 = platt_fit(s[:40], y[:40])
    np.testing.assert_allclose(a2, a3, atol=1e-8)
    np.testing.assert_allclose(b2, b3, atol=1e-8)


def test_calibrated_probabilities_are_coherent_and_beat_the_prior(data_dir) -> None:
    from bicrit.datasets import load

    tr = load("clus_hmc/church_FUN", "train", root=data_dir, impute="mean")
    va = load("clus_hmc/church_FUN", "valid", root=data_dir, impute="mean")
    keep = [i for i, y in enumerate(va.Y) if len(y)]
    Xv, Yv = va.X[keep], [va.Y[i] for i in keep]
    est = HierarchicalSVM(tr, model="nhsvm", C=0.1, **FAST).fit(tr)
    half = len(Yv) // 2
    cal = NodeCalibration(est).fit(Xv[:half], Yv[:half])
    P = cal.predict_proba(Xv[half:])
    h = tr.hierarchy
    assert P.shape == (len(Yv) - half, h.n_nodes)
    assert np.all((P >= 0) & (P <= 1)) and np.all(P[:, h.root] == 1)
    _assert_coherent(h, P)
    # without the coherence step, each node's probability is increasing in its node score
    raw = NodeCalibration(est, coherent=False).fit(Xv[:half], Yv[:half])
    Q, S = raw.predict_proba(Xv[half:]), est.node_scores(Xv[half:])
    for v in itertools.islice((v for v in range(h.n_nodes) if raw.a_[v] > 0), 20):
        o = np.argsort(S[:, v], kind="stable")
        assert np.all(np.diff(Q[o, v]) >= -1e-12)
    freq = np.zeros(h.n_nodes)
    for y in tr.Y:
        freq[y] += 1
    prior = np.tile(freq / len(tr.Y), (len(P), 1))
    assert au_prc(Yv[half:], P, exclude=[h.root]) > au_prc(Yv[half:], prior, exclude=[h.root])


def test_calibration_errors() -> None:
    h, X, Y = _multi_tree()
    est = HierarchicalSVM(h, model="hsvm", **FAST).fit(X, Y)
    with pytest.raises(NotFittedError):
        NodeCalibration(est).predict_proba(X)
    with pytest.raises(InvalidInputError, match="Y is required"):
        NodeCalibration(est).fit(X)
    with pytest.raises(InvalidParameterError, match="coherent must be True or False"):
        NodeCalibration(est, coherent="yes").fit(X, Y)


# --- multi-label task losses ----------------------------------------------------------------------


def test_weighted_loss_costs_are_class_balanced_per_node(tmp_path) -> None:
    """multilabel_loss='weighted': node Hamming over the original non-root nodes, a missed node
    costing n/(2·n_pos) and a wrong one n/(2·n_neg) (scikit-learn's balanced class weights)."""
    h, X, Y = _multi_tree()
    est = HierarchicalSVM(h, model="nhsvm", multilabel_loss="weighted", **FAST).fit(X, Y)
    n = len(Y)
    pos = np.array([sum(v in set(y.tolist()) | {h.root} for y in Y) for v in range(h.n_nodes)])
    pos = np.clip(pos, 1, n)  # every node of the toy tree is seen; the root is in every label
    s = est.structure_
    assert s.loss_kind == "node"
    expected_miss = n / (2 * pos)
    neg = np.maximum(n - pos, 1)
    expected_wrong = n / (2 * neg)
    nonroot = np.arange(h.n_nodes) != h.root
    np.testing.assert_allclose(np.asarray(s.node_miss_weight)[nonroot], expected_miss[nonroot])
    np.testing.assert_allclose(np.asarray(s.node_loss_weight)[nonroot], expected_wrong[nonroot])
    back = HierarchicalSVM.load(est.save(tmp_path / "w.bicrit"))
    np.testing.assert_array_equal(back.node_miss_weight_, est.node_miss_weight_)
    assert back.node_scores(X).tobytes() == est.node_scores(X).tobytes()


def test_multilabel_losses_and_their_virtual_leaves(data_dir) -> None:
    from bicrit.datasets import load

    tr = load("clus_hmc/church_FUN", "train", root=data_dir, impute="mean")
    X, Y = tr.X[:150], tr.Y[:150]
    n0 = tr.hierarchy.n_nodes
    for loss, kind in (("leaf", "leaf"), ("node", "node"), ("weighted", "node")):
        est = HierarchicalSVM(tr, model="hsvm", multilabel_loss=loss, **FAST).fit(X, Y)
        assert est.structure_.loss_kind == kind
        assert est.hierarchy_.n_nodes > n0
        if loss != "leaf":  # virtual leaves are not evaluated: they cost nothing
            assert np.all(np.asarray(est.node_loss_weight_)[n0:] == 0)
    auto = HierarchicalSVM(tr, model="nhsvm", **FAST).fit(X, Y)
    assert auto.structure_.loss_kind == "leaf" and auto.node_miss_weight_ is None
    with pytest.raises(InvalidParameterError, match="multilabel_loss must be one of"):
        HierarchicalSVM(tr, multilabel_loss="balanced").fit(X, Y)
