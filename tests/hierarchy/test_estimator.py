"""HierarchicalSVM: the scikit-learn contract, every model on a small synthetic set and on small
Clus HMC slices (FunCat tree, GO DAG), clear errors for bad hierarchies and labels, Shared SVM's
alternating optimisation, and the export/import round trip."""

from __future__ import annotations

import json

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.exceptions import NotFittedError

import bicrit
from bicrit.datasets import synthetic_hierarchy
from bicrit.errors import IncompatibleError, InvalidInputError, InvalidParameterError
from bicrit.hierarchy import Hierarchy
from bicrit.hierarchy.estimator import MODELS, HierarchicalSVM

FAST = {"max_epochs": 8, "alpha_every": 2, "max_alternations": 3}


@pytest.fixture(scope="module")
def small() -> tuple:
    ds = synthetic_hierarchy("unbalanced", seed=3, n=600, d=30, depth=4)
    return ds, ds.split("train"), ds.split("test")


def _majority(train, test) -> float:
    """Accuracy of always predicting the most frequent training leaf."""
    leaves, counts = np.unique(train.leaf, return_counts=True)
    return float(np.mean(test.leaf == leaves[np.argmax(counts)]))


# --- contract -----------------------------------------------------------------------------------


def test_init_stores_parameters_only_and_clones(small) -> None:
    ds, _, _ = small
    est = HierarchicalSVM(ds.hierarchy, model="ssvm", C=3.0, rho=1.5)
    assert est.get_params()["C"] == 3.0 and est.get_params()["model"] == "ssvm"
    assert not hasattr(est, "coef_")
    c = clone(est).set_params(C=0.5)
    assert c.C == 0.5 and c.model == "ssvm" and est.C == 3.0
    # nothing is validated before fit
    HierarchicalSVM(ds.hierarchy, model="nope", C=-1)


def test_lazy_export_from_package() -> None:
    assert bicrit.HierarchicalSVM is HierarchicalSVM
    assert "HierarchicalSVM" in bicrit.__all__


def test_not_fitted(small) -> None:
    ds, _, te = small
    with pytest.raises(NotFittedError):
        HierarchicalSVM(ds.hierarchy).predict(te.X)


@pytest.mark.parametrize("model", MODELS)
def test_every_model_fits_the_synthetic_set(small, model: str) -> None:
    ds, tr, te = small
    est = HierarchicalSVM(ds, model=model, C=10.0, random_state=0, **FAST)
    assert est.fit(tr.X, tr.Y) is est
    pred = est.predict(te.X)
    h = ds.hierarchy
    assert len(pred) == te.n_samples
    for y in pred:  # leaf-terminated single paths, root excluded
        assert y.dtype == np.int64 and 0 not in y.tolist()
        assert h.is_closed(y)
        assert len(h.children[int(y.max())]) == 0
    acc = np.mean([np.array_equal(a, b) for a, b in zip(pred, te.Y, strict=True)])
    assert est.score(te.X, te.Y) == pytest.approx(acc)
    assert acc > _majority(tr, te) + 0.05
    assert est.coef_.shape == (h.n_nodes, ds.n_features)
    assert est.multilabel_ is False and est.history_.height >= 1
    assert set(est.history_.columns) >= {"round", "phase", "epoch", "objective", "time"}
    D = est.decision_function(te.X)
    assert D.shape == (te.n_samples, len(h.leaves))
    best = est.classes_[np.argmax(D, axis=1)]
    assert best.tolist() == [int(y.max()) for y in pred]


def test_alpha_of_each_model(small) -> None:
    ds, tr, _ = small
    h = ds.hierarchy
    leaves = set(h.leaves.tolist())
    flat = HierarchicalSVM(h, model="flat", max_epochs=1).fit(tr.X, tr.Y)
    assert [flat.alpha_[v] for v in range(h.n_nodes)] == [
        float(v in leaves) for v in range(h.n_nodes)
    ]
    hs = HierarchicalSVM(h, model="hsvm", max_epochs=1).fit(tr.X, tr.Y)
    assert np.all(hs.alpha_ == 1.0)
    nh = HierarchicalSVM(h, model="nhsvm", max_epochs=1).fit(tr.X, tr.Y)
    anc = h.ancestor_matrix[h.leaves].toarray()
    assert anc @ nh.alpha_ == pytest.approx(np.ones(len(leaves)))


def test_sparse_and_dense_input_agree(small) -> None:
    ds, tr, te = small
    kw = {"model": "nhsvm", "max_epochs": 3, "random_state": 1, "scale": False}
    a = HierarchicalSVM(ds.hierarchy, **kw).fit(tr.X, tr.Y)
    b = HierarchicalSVM(ds.hierarchy, **kw).fit(sp.csr_matrix(tr.X), tr.Y)
    assert np.allclose(a.coef_, b.coef_, rtol=1e-10, atol=1e-12)
    assert [y.tolist() for y in a.predict(te.X)] == [
        y.tolist() for y in b.predict(sp.csr_array(te.X))
    ]
    c = HierarchicalSVM(ds.hierarchy, **kw).fit(sp.csr_array(tr.X.astype(np.float32)), tr.Y)
    assert np.allclose(a.coef_, c.coef_, rtol=1e-4, atol=1e-6)


def test_terminal_ids_as_labels(small) -> None:
    ds, tr, _ = small
    kw = {"model": "hsvm", "max_epochs": 2, "random_state": 0}
    a = HierarchicalSVM(ds.hierarchy, **kw).fit(tr.X, tr.Y)
    b = HierarchicalSVM(ds.hierarchy, **kw).fit(tr.X, np.asarray(tr.leaf))
    assert np.array_equal(a.coef_, b.coef_)


# --- Shared SVM ---------------------------------------------------------------------------------


def test_ssvm_objective_decreases_over_alternations(small) -> None:
    ds, tr, _ = small
    est = HierarchicalSVM(
        ds.hierarchy, model="ssvm", C=10.0, alpha_every=2, max_alternations=5, tol=0.0
    ).fit(tr.X, tr.Y)
    path = est.objective_path_
    assert len(path) == 5 == est.n_alternations_
    # the α step keeps U (so the loss) and minimises the regulariser: it never increases P
    for before, after in path:
        assert after <= before * (1 + 1e-3)
    assert path[-1][1] < path[0][1]
    alphas = est.history_.filter(est.history_["phase"] == "alpha")
    assert alphas.height == 5
    # α is feasible: every leaf sum is at most 1 (the trees' closed form makes it exactly 1)
    h = est.hierarchy_
    sums = h.ancestor_matrix[h.leaves].toarray() @ est.alpha_
    assert np.all(sums <= 1 + 1e-9)
    # positive except at the root, whose block cancels in every margin (SSVM's optimum and
    # starting point have α_root = 0, and so U_root = 0)
    rest = np.arange(h.n_nodes) != h.root
    assert np.all(est.alpha_[rest] > 0) and est.alpha_[h.root] == 0.0
    assert np.all(est.coef_[h.root] == 0.0)


@pytest.mark.parametrize("ssvm_loss", ["hamming", "normalized", "zero_one"])
def test_ssvm_objective_matches_enumeration(ssvm_loss: str) -> None:
    """Eq. SSVMp at the returned (U, α), computed here by enumerating the leaves: λΣ‖U_n‖²/α_n
    (as ½Σ‖U_n‖²/α_n + C·Σ_i loss) with the fixed loss Δ(l, l_i) — the node Hamming distance
    |Ā(l) △ Ā(l_i)| (``hamming``), √(Σ_{Ā(l) △ Ā(l_i)} α⁰) at the starting α⁰ (ρ = 2 with
    α⁰_root = 0; ``normalized``) or 1[l ≠ l_i] (``zero_one``) — must equal the objective the
    estimator reports after its last α step. A node with α_n = 0 must have U_n = 0 and adds
    nothing (the thesis's convention)."""
    h, X, Y = _toy()
    C = 2.0
    est = _ssvm_toy_fit(h, X, Y, C, ssvm_loss, max_alternations=2)
    expected = _ssvm_objective(h, X, Y, est.coef_, est.alpha_, C, ssvm_loss)
    got = est.history_.filter(est.history_["phase"] == "alpha")["objective"][-1]
    assert got == pytest.approx(expected, rel=1e-9)


def _ssvm_toy_fit(h, X, Y, C: float, ssvm_loss: str, max_alternations: int) -> HierarchicalSVM:
    """Shared SVM on the toy tree, in the raw features (no scaling, no bias column)."""
    return HierarchicalSVM(
        h,
        model="ssvm",
        C=C,
        ssvm_loss=ssvm_loss,
        alpha_every=2,
        max_alternations=max_alternations,
        tol=0.0,
        scale=False,
        fit_intercept=False,
    ).fit(X, Y)


def _ssvm_objective(h, X, Y, U, a, C: float, ssvm_loss: str) -> float:
    """Eq. SSVMp at (U, α) on the toy tree, by enumerating its leaves (see above)."""
    from bicrit.hierarchy import power_alpha

    paths = {leaf: set(h.closure([leaf]).tolist()) | {h.root} for leaf in (2, 3, 4)}
    a0 = power_alpha(h, 2.0, include_root=False)

    def delta(l1: int, l2: int) -> float:
        sd = paths[l1] ^ paths[l2]
        if ssvm_loss == "zero_one":
            return float(l1 != l2)
        return float(len(sd)) if ssvm_loss == "hamming" else float(np.sqrt(a0[list(sd)].sum()))

    S = X @ U.T
    loss = 0.0
    for i, y in enumerate(Y):
        li = int(y.max())  # the leaf: the deepest id of the toy tree's paths
        score = {leaf: S[i, sorted(p)].sum() for leaf, p in paths.items()}
        loss += max(score[leaf] - score[li] + delta(leaf, li) for leaf in paths)
    sq = np.sum(U * U, axis=1)
    assert np.all(sq[a == 0] == 0.0)
    reg = np.divide(sq, a, out=np.zeros_like(sq), where=a > 0)
    return 0.5 * float(np.sum(reg)) + C * loss


@pytest.mark.parametrize("ssvm_loss", ["hamming", "normalized"])
def test_ssvm_objective_path_holds_both_sides_of_the_alpha_step(ssvm_loss: str) -> None:
    """``objective_path_`` holds (P before the α step, P after it); the step keeps U, so with
    one alternation both are eq. SSVMp at the returned U: at the starting α⁰ and at the
    returned α (enumerated). The first is derived from the second's inference pass (the
    slacks are equal), not from a pass of its own."""
    from bicrit.hierarchy import power_alpha

    h, X, Y = _toy()
    C = 2.0
    est = _ssvm_toy_fit(h, X, Y, C, ssvm_loss, max_alternations=1)
    a0 = np.maximum(power_alpha(h, 2.0, include_root=False), 0.0)
    [(before, after)] = est.objective_path_
    assert before == pytest.approx(_ssvm_objective(h, X, Y, est.coef_, a0, C, ssvm_loss), rel=1e-9)
    assert after == pytest.approx(
        _ssvm_objective(h, X, Y, est.coef_, est.alpha_, C, ssvm_loss), rel=1e-9
    )
    assert after < before


def test_ssvm_loss_hamming_differs_from_normalized() -> None:
    h, X, Y = _toy()
    fits = {
        lo: HierarchicalSVM(h, model="ssvm", ssvm_loss=lo, **FAST).fit(X, Y)
        for lo in ("hamming", "normalized")
    }
    assert fits["hamming"]._loss_ == "node"
    assert np.all(fits["hamming"].node_loss_weight_ == 1.0)
    assert fits["normalized"]._loss_ == "normalized"
    assert not np.allclose(fits["hamming"].coef_, fits["normalized"].coef_)


# --- Clus HMC slices ----------------------------------------------------------------------------


def _clus(data_dir, name: str, n: int = 150):
    from bicrit.datasets import load

    tr = load(name, "train", root=data_dir, impute="mean")
    te = load(name, "test", root=data_dir, impute="mean")
    mu, sd = tr.X.mean(axis=0), tr.X.std(axis=0) + 1e-9
    return tr, (tr.X[:n] - mu) / sd, tr.Y[:n], (te.X[:n] - mu) / sd, te.Y[:n]


@pytest.mark.parametrize("model", MODELS)
def test_every_model_on_a_funcat_tree_slice(data_dir, model: str) -> None:
    from bicrit.metrics.hierarchy import hierarchical_f1

    ds, X, Y, Xt, Yt = _clus(data_dir, "clus_hmc/church_FUN")
    est = HierarchicalSVM(ds, model=model, C=1.0, **FAST)
    if model == "nhsvm3":  # single label only: the FunCat labels have several paths
        with pytest.raises(IncompatibleError, match="single-label"):
            est.fit(X, Y)
        return
    est.fit(X, Y)
    assert est.multilabel_ is True
    pred = est.predict(Xt)
    h = ds.hierarchy
    assert all(h.is_closed(y) and 0 not in y.tolist() and len(y) > 0 for y in pred)
    f1 = est.score(Xt, Yt)
    assert f1 == pytest.approx(hierarchical_f1(Yt, pred))
    assert 0.0 < f1 <= 1.0
    # labels end at internal nodes in this set: virtual leaves were added, and reported as parents
    assert est.hierarchy_.n_nodes > h.n_nodes
    assert np.all(est.classes_ < h.n_nodes)


@pytest.mark.parametrize("model", ["hsvm", "nhsvm", "ssvm"])
def test_models_on_a_go_dag_slice(data_dir, model: str) -> None:
    ds, X, Y, Xt, Yt = _clus(data_dir, "clus_hmc/pheno_GO", n=60)
    assert not ds.hierarchy.is_tree
    est = HierarchicalSVM(ds, model=model, C=1.0, max_epochs=2, alpha_every=1, max_alternations=2)
    est.fit(X, Y)
    pred = est.predict(Xt)
    assert all(ds.hierarchy.is_closed(y) for y in pred)
    assert 0.0 <= est.score(Xt, Yt) <= 1.0


# --- errors -------------------------------------------------------------------------------------


def _tree() -> Hierarchy:
    #      root
    #     /    \
    #    a      b
    #   / \
    #  a1  a2
    return Hierarchy(["root", "a", "b", "a1", "a2"], [[], [0], [0], [1], [1]])


def _toy(n: int = 40):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((n, 4))
    leaf = np.array([3, 4, 2])[rng.integers(0, 3, n)]
    h = _tree()
    return h, X, [h.closure([v]) for v in leaf.tolist()]


def test_bad_parameters_raise_naming_them() -> None:
    h, X, Y = _toy()
    for kw, match in [
        ({"model": "svm"}, "model"),
        ({"C": 0.0}, "C"),
        ({"rho": 0.5}, "rho"),
        ({"T": 0.5}, "T"),
        ({"max_epochs": 0}, "max_epochs"),
        ({"labels": "some"}, "labels"),
        ({"layout": "rows"}, "layout"),
        ({"ssvm_loss": "tree"}, "ssvm_loss"),
    ]:
        with pytest.raises(InvalidParameterError, match=match):
            HierarchicalSVM(h, **kw).fit(X, Y)
    with pytest.raises(InvalidParameterError, match="hierarchy"):
        HierarchicalSVM([[], [0]]).fit(X, Y)
    with pytest.raises(IncompatibleError, match="labels='any'"):
        HierarchicalSVM(h, model="nhsvm3", labels="any").fit(X, Y)
    with pytest.raises(IncompatibleError, match="nhsvm3"):
        HierarchicalSVM(h, model="nhsvm3", learner="bcfw").fit(X, Y)


@pytest.mark.parametrize(
    ("names", "parents", "match"),
    [
        (["r", "a", "b"], [[], [2], [1]], "cycle"),
        (["r", "a", "s"], [[], [0], []], "one root"),
        (["r", "a", "a"], [[], [0], [0]], "duplicate"),
    ],
)
def test_bad_hierarchies_raise(names, parents, match) -> None:
    with pytest.raises(InvalidInputError, match=match):
        HierarchicalSVM(Hierarchy(names, parents)).fit(np.zeros((1, 1)), [[1]])


def test_bad_labels_raise_clear_errors() -> None:
    h, X, Y = _toy()
    internal = list(Y)
    internal[5] = np.array([1])  # ends at the internal node 'a'
    with pytest.raises(
        InvalidInputError, match=r"Y\[5\] ends at node 1 \('a'\), which is not a leaf"
    ):
        HierarchicalSVM(h, model="nhsvm", labels="leaves").fit(X, internal)
    # labels="auto" trains it through a virtual leaf, and predicts in the original ids
    est = HierarchicalSVM(h, model="nhsvm", max_epochs=2).fit(X, internal)
    assert est.hierarchy_.n_nodes == 6 and est.classes_.tolist() == [2, 3, 4, 1]
    bad = list(Y)
    bad[2] = np.array([3])  # not ancestor-closed
    with pytest.raises(InvalidInputError, match="ancestor-closed"):
        HierarchicalSVM(h).fit(X, bad)
    bad[2] = np.array([1, 9])
    with pytest.raises(InvalidInputError, match="outside"):
        HierarchicalSVM(h).fit(X, bad)
    bad[2] = np.array([], dtype=np.int64)
    with pytest.raises(InvalidInputError, match="empty"):
        HierarchicalSVM(h).fit(X, bad)
    multi = list(Y)
    multi[0] = np.array([1, 2, 3])
    with pytest.raises(InvalidInputError, match="terminal"):
        HierarchicalSVM(h, multilabel=False).fit(X, multi)
    with pytest.raises(IncompatibleError, match="single-label"):
        HierarchicalSVM(h, model="nhsvm3").fit(X, multi)
    with pytest.raises(InvalidInputError, match="instances"):
        HierarchicalSVM(h).fit(X[:-1], Y)
    Xn = X.copy()
    Xn[0, 0] = np.nan
    with pytest.raises(InvalidInputError, match="NaN"):
        HierarchicalSVM(h).fit(Xn, Y)
    est = HierarchicalSVM(h, max_epochs=1).fit(X, Y)
    with pytest.raises(InvalidInputError, match="features"):
        est.predict(X[:, :2])


# --- export / import ----------------------------------------------------------------------------


@pytest.mark.parametrize("model", ["nhsvm", "ssvm"])
def test_export_import_round_trip(small, model: str) -> None:
    ds, tr, te = small
    est = HierarchicalSVM(ds, model=model, C=2.0, **FAST).fit(tr.X, tr.Y)
    config, arrays = est._export()
    config = json.loads(json.dumps(config))  # JSON-able
    assert all(isinstance(a, np.ndarray) for a in arrays.values())
    back = HierarchicalSVM._import(config, {k: a.copy() for k, a in arrays.items()})
    assert back.coef_.tobytes() == est.coef_.tobytes()
    assert back.alpha_.tobytes() == est.alpha_.tobytes()
    assert back.get_params()["C"] == 2.0 and back.model == model
    assert [y.tolist() for y in back.predict(te.X)] == [y.tolist() for y in est.predict(te.X)]
    assert np.array_equal(back.decision_function(te.X), est.decision_function(te.X))


def test_export_import_multilabel_with_virtual_leaves(data_dir) -> None:
    ds, X, Y, Xt, _ = _clus(data_dir, "clus_hmc/church_FUN", n=80)
    est = HierarchicalSVM(ds, model="hsvm", max_epochs=2).fit(X, Y)
    config, arrays = est._export()
    back = HierarchicalSVM._import(json.loads(json.dumps(config)), arrays)
    assert back.coef_.tobytes() == est.coef_.tobytes()
    assert [y.tolist() for y in back.predict(Xt)] == [y.tolist() for y in est.predict(Xt)]


def test_save_load_through_the_model_file(small, tmp_path) -> None:
    """HierarchicalSVM goes through bicrit's pickle-free model file like the other estimators."""
    import bicrit

    ds, tr, te = small
    est = HierarchicalSVM(ds, model="nhsvm", C=2.0, **FAST).fit(tr.X, tr.Y)
    path = est.save(tmp_path / "h.bicrit")
    for back in (bicrit.load(path), HierarchicalSVM.load(path)):
        assert isinstance(back, HierarchicalSVM)
        assert back.coef_.tobytes() == est.coef_.tobytes()
        assert [y.tolist() for y in back.predict(te.X)] == [y.tolist() for y in est.predict(te.X)]


# --- one estimator stack ------------------------------------------------------------------------


def test_a_hierarchical_svm_is_a_structured_svm_fitted_on_a_dataset(small) -> None:
    ds, tr, te = small
    assert issubclass(HierarchicalSVM, bicrit.StructuredSVM)
    kw = {"model": "nhsvm", "max_epochs": 3, "random_state": 0}
    on_data = HierarchicalSVM(**kw).fit(tr)  # the hierarchy and the labels come with the data
    on_arrays = HierarchicalSVM(ds.hierarchy, **kw).fit(tr.X, tr.Y)
    np.testing.assert_array_equal(on_data.coef_, on_arrays.coef_)
    assert on_data.score(te) == on_arrays.score(te.X, te.Y)
    assert on_data.report(te)["accuracy"] == on_data.score(te)  # single label: exact match
    records = on_data.prediction_records(te)
    assert len(records) == len(te) and set(records[0]) == {"nodes", "names"}
    with pytest.raises(InvalidParameterError, match="hierarchy is required"):
        HierarchicalSVM().fit(tr.X, tr.Y)
