"""NHSVM3's native learner (``rust/bicrit-hierarchy/src/nhsvm3.rs`` through
``bicrit._native.Nhsvm3Trainer`` and ``HierarchicalSVM(model="nhsvm3")``): the loss and its
subgradient against a numpy brute force over the leaf paths (thesis eq. ``NHSVM3``) and its
finite differences, the old Python mini-batch loop (``nhsvm3_reference``) number for number,
the objective going down, the same model whatever ``n_jobs`` and for dense or sparse input,
the model file round trip, and clear errors."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import scipy.sparse as sp

from bicrit import _native
from bicrit.datasets import synthetic_hierarchy
from bicrit.errors import IncompatibleError, InvalidInputError, InvalidParameterError
from bicrit.hierarchy import Hierarchy
from bicrit.hierarchy.estimator import HierarchicalSVM
from bicrit.learners import Learner
from bicrit.structures._inputs import as_csr_tuple
from bicrit.structures.hierarchy import HierarchyStructure
from tests.hierarchy.nhsvm3_reference import reference_nhsvm3


@pytest.fixture(scope="module")
def small() -> tuple:
    ds = synthetic_hierarchy("unbalanced", seed=5, n=240, d=12, depth=4)
    return ds, ds.split("train"), ds.split("test")


# --- a tiny problem, solved by hand -------------------------------------------------------------

#        root(0)
#       /   |   \
#     a(1) b(2)  c(3)
#    / \         / \
#  a1(4) a2(5) c1(6) c2(7)
_PARENTS = [[], [0], [0], [0], [1], [1], [3], [3]]
_LEAVES = [2, 4, 5, 6, 7]
_ALPHA = np.array([0.1, 0.3, 0.9, 0.4, 0.6, 0.5, 0.45, 0.5])


def _path(leaf: int) -> np.ndarray:
    out = [leaf]
    while _PARENTS[out[-1]]:
        out.append(_PARENTS[out[-1]][0])
    return np.array(sorted(out), dtype=np.int64)


def _tiny(n: int = 12, d: int = 3, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    Y = [_path(int(v)) for v in rng.choice(_LEAVES, n)]
    s = HierarchyStructure(
        Hierarchy([f"n{i}" for i in range(8)], _PARENTS),
        labels="leaves",
        multilabel=False,
        loss="normalized",
        node_scale=np.sqrt(_ALPHA),
        node_loss_weight=_ALPHA,
        n_features=d,
    )
    return s, X, Y


def _lam(y: np.ndarray) -> np.ndarray:
    """Λ̃(y): √α_n on the nodes of y (thesis eq. ``nclassa``)."""
    v = np.zeros(len(_ALPHA))
    v[y] = np.sqrt(_ALPHA[y])
    return v


def _brute(W: np.ndarray, X: np.ndarray, Y: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Per instance ℓ_i(W) of eq. ``NHSVM3`` over every leaf path ≠ y_i, and the gap between the
    two largest candidates (the clip at 0 included)."""
    losses, gaps = [], []
    for x, y in zip(X, Y, strict=True):
        cands = [0.0]
        for leaf in _LEAVES:
            yy = _path(leaf)
            if np.array_equal(yy, y):
                continue
            diff = _lam(yy) - _lam(y)
            cands.append(float(diff @ (W @ x)) / float(np.linalg.norm(diff)) + 1.0)
        cands.sort(reverse=True)
        losses.append(cands[0])
        gaps.append(cands[0] - cands[1])
    return np.array(losses), np.array(gaps)


def test_loss_equals_the_brute_force_objective() -> None:
    s, X, Y = _tiny()
    rng = np.random.default_rng(1)
    for C in (0.3, 2.0):
        W = rng.standard_normal((8, 3))
        tr = _native.Nhsvm3Trainer(s._require(), s._x_many(X), Y, C=C, w0=W.ravel())
        want = 0.5 * float(np.sum(W * W)) + C * float(_brute(W, X, Y)[0].sum())
        assert tr.objective(averaged=False) == pytest.approx(want, rel=1e-12)
        # at w = 0 every margin is 0, so every ℓ_i is 1
        zero = _native.Nhsvm3Trainer(s._require(), s._x_many(X), Y, C=C)
        assert zero.objective() == pytest.approx(C * len(Y), rel=1e-15)


def test_subgradient_step_equals_finite_differences_of_the_objective() -> None:
    """One epoch with batch_size = n is one step from w0: with η_1 = 1/(2λ) and λ = 1/(nC),
    w1 = w0/2 − (C/2)·Σ_i g_i, so the native subgradient is Σ g_i = (w0/2 − w1)·2/C. It must
    equal the gradient of the brute-force Σ_i ℓ_i by central finite differences (away from the
    kinks of the max)."""
    s, X, Y = _tiny(n=10, d=3, seed=2)
    rng = np.random.default_rng(3)
    C, checked = 1.5, 0
    for _ in range(200):
        if checked == 4:
            break
        W0 = 2.0 * rng.standard_normal((8, 3))
        _, gaps = _brute(W0, X, Y)
        if gaps.min() < 1e-3:
            continue
        tr = _native.Nhsvm3Trainer(
            s._require(), s._x_many(X), Y, C=C, batch_size=len(Y), w0=W0.ravel()
        )
        tr.epoch()
        W1 = np.asarray(tr.weights(averaged=False)).reshape(8, 3)
        G = (W0 / 2.0 - W1) * 2.0 / C
        eps = 1e-6
        fd = np.zeros_like(W0)
        for k in np.ndindex(*W0.shape):
            E = np.zeros_like(W0)
            E[k] = eps
            fd[k] = (_brute(W0 + E, X, Y)[0].sum() - _brute(W0 - E, X, Y)[0].sum()) / (2 * eps)
        np.testing.assert_allclose(G, fd, atol=1e-6)
        checked += 1
    assert checked == 4


# --- against the old Python loop ---------------------------------------------------------------


@pytest.mark.parametrize(("batch_size", "C"), [(1, 1.0), (7, 20.0)])
def test_native_matches_the_python_reference_loop(small, batch_size: int, C: float) -> None:
    ds, tr, _ = small
    epochs = 3
    est = HierarchicalSVM(
        ds,
        model="nhsvm3",
        C=C,
        batch_size=batch_size,
        max_epochs=epochs,
        tol=0.0,
        random_state=4,
        scale=False,  # the reference loop runs on the raw features, without node biases
        fit_intercept=False,
    ).fit(tr.X, tr.Y)
    h = est.hierarchy_
    Yr = [np.union1d(y, [h.root]).astype(np.int64) for y in tr.Y]
    s = HierarchyStructure(
        h,
        labels="leaves",
        multilabel=False,
        loss="normalized",
        node_scale=np.sqrt(est.alpha_),
        node_loss_weight=est.alpha_,
        n_features=tr.X.shape[1],
    )
    Vbar, objectives = reference_nhsvm3(
        s,
        tr.X,
        Yr,
        est.alpha_,
        C=C,
        batch_size=batch_size,
        epochs=epochs,
        seed=4,
        order="splitmix",
        # NHSVM3's SGD infers a block of SGD's block_size instances at its starting weights
        block_size=int(Learner("sgd").params["block_size"]),
    )
    want = np.sqrt(est.alpha_)[:, None] * Vbar
    assert np.abs(want).max() > 1e-3  # something was learned
    np.testing.assert_allclose(est.coef_, want, rtol=1e-7, atol=1e-9 * np.abs(want).max())
    np.testing.assert_allclose(est.history_["objective"].to_numpy(), objectives, rtol=1e-8)
    assert est.n_epochs_ == epochs


def test_objective_decreases(small) -> None:
    ds, tr, _ = small
    est = HierarchicalSVM(ds, model="nhsvm3", C=10.0, max_epochs=1)
    est.fit(tr.X[:5], tr.Y[:5])  # only to get the label space and α
    h = est.hierarchy_
    s = HierarchyStructure(
        h,
        labels="leaves",
        multilabel=False,
        loss="normalized",
        node_scale=np.sqrt(est.alpha_),
        node_loss_weight=est.alpha_,
        n_features=tr.X.shape[1],
    )
    Yr = [np.union1d(y, [h.root]).astype(np.int64) for y in tr.Y]
    t = _native.Nhsvm3Trainer(s._require(), s._x_many(tr.X), Yr, C=10.0, batch_size=4)
    objs = [t.objective()]
    assert objs[0] == pytest.approx(10.0 * len(Yr))  # P(0) = C·n
    for _ in range(6):
        stats = t.epoch()
        assert stats["inferences"] == len(Yr) and stats["objective"] > 0
        objs.append(t.objective())
    assert t.n_epochs == 6 and t.n_steps == 6 * int(np.ceil(len(Yr) / 4))
    # Pegasos's first steps (η_1 = n·C/2) overshoot, so epoch 1 may sit above P(0); from there
    # on the exact objective of the averaged weights goes down, and ends below P(0)
    assert sum(b < a for a, b in itertools.pairwise(objs[1:])) >= 4
    assert objs[-1] < 0.8 * objs[1] and objs[-1] < objs[0]


# --- determinism, inputs, model file -------------------------------------------------------------


def test_same_model_whatever_n_jobs_and_input_format(small) -> None:
    ds, tr, te = small
    # scale=False: dense and sparse features are scaled differently (standardised / max-abs)
    kw = {
        "model": "nhsvm3",
        "C": 5.0,
        "batch_size": 16,
        "max_epochs": 3,
        "random_state": 2,
        "scale": False,
    }
    a = HierarchicalSVM(ds, n_jobs=1, **kw).fit(tr.X, tr.Y)
    b = HierarchicalSVM(ds, n_jobs=2, **kw).fit(tr.X, tr.Y)
    c = HierarchicalSVM(ds, n_jobs=2, **kw).fit(sp.csr_matrix(tr.X), tr.Y)
    assert a.coef_.tobytes() == b.coef_.tobytes() == c.coef_.tobytes()
    d = HierarchicalSVM(ds, **{**kw, "random_state": 3}).fit(tr.X, tr.Y)
    assert d.coef_.tobytes() != a.coef_.tobytes()
    # the feature-major layout trains the same model
    e = HierarchicalSVM(ds, layout="feature", **kw).fit(tr.X, tr.Y)
    np.testing.assert_allclose(e.coef_, a.coef_, rtol=1e-10, atol=1e-12)
    assert a.score(te.X, te.Y) > 0.3


def test_save_load_round_trip(small, tmp_path) -> None:
    ds, tr, te = small
    est = HierarchicalSVM(ds, model="nhsvm3", C=5.0, max_epochs=2).fit(tr.X, tr.Y)
    back = HierarchicalSVM.load(est.save(tmp_path / "nhsvm3.bicrit"))
    assert back.model == "nhsvm3" and back.coef_.tobytes() == est.coef_.tobytes()
    assert [y.tolist() for y in back.predict(te.X)] == [y.tolist() for y in est.predict(te.X)]


def test_bad_input_raises_clear_errors() -> None:
    s, X, Y = _tiny()
    T = _native.Nhsvm3Trainer
    for kw, err, match in [
        ({"C": 0.0}, InvalidParameterError, "C"),
        ({"C": float("nan")}, InvalidParameterError, "C"),
        ({"batch_size": 0}, InvalidParameterError, "batch_size"),
        ({"t0": 0.0}, InvalidParameterError, "t0"),
        ({"random_state": -1}, InvalidParameterError, "random_state"),
        ({"n_jobs": 0}, InvalidParameterError, "n_jobs"),
        ({"w0": np.zeros(5)}, InvalidInputError, "w0"),
        ({"w0": np.full(24, np.nan)}, InvalidInputError, "w0"),
    ]:
        with pytest.raises(err, match=match):
            T(s._require(), s._x_many(X), Y, **kw)
    with pytest.raises(InvalidInputError, match="labels"):
        T(s._require(), s._x_many(X), Y[:-1])
    bad = list(Y)
    bad[3] = np.array([0, 1])  # ends at an internal node
    with pytest.raises(InvalidInputError, match=r"Y\[3\]"):
        T(s._require(), s._x_many(X), bad)
    with pytest.raises(InvalidInputError, match="features"):
        T(s._require(), as_csr_tuple(X[:, :2]), Y)
    multi = HierarchyStructure(
        Hierarchy([f"n{i}" for i in range(8)], _PARENTS), multilabel=True, n_features=3
    )
    with pytest.raises(IncompatibleError, match="multilabel=False"):
        T(multi._require(), multi._x_many(X), Y)


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_ctrl_c_during_an_epoch_rolls_it_back(ctrl_c, n_jobs: int) -> None:
    """Ctrl-C (``_thread.interrupt_main``) while epochs run with the GIL released (at
    ``n_jobs=2`` on a thread of the pool, the calling thread checking for signals): the trainer
    raises KeyboardInterrupt and holds exactly the state of its last finished epoch (equal to a
    one-thread trainer that ran that many epochs uninterrupted), so training can go on. The
    interrupt may land inside an epoch or between two; either way no partial epoch may remain."""
    import _thread
    import threading
    import time

    s, X, Y = _tiny(n=60_000, d=3, seed=4)
    t = _native.Nhsvm3Trainer(s._require(), s._x_many(X), Y, C=1.0, n_jobs=n_jobs)
    t.epoch()
    timer = threading.Timer(0.05, _thread.interrupt_main)
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            deadline = time.monotonic() + 120.0  # a lost interrupt fails, it does not hang
            while time.monotonic() < deadline:
                t.epoch()
    finally:
        timer.cancel()
    done = t.n_epochs
    assert done >= 1 and t.n_steps == 60_000 * done
    ref = _native.Nhsvm3Trainer(s._require(), s._x_many(X), Y, C=1.0)
    for _ in range(done):
        ref.epoch()
    assert np.array_equal(np.asarray(t.weights()), np.asarray(ref.weights()))
    assert t.epoch()["epoch"] == done + 1
