"""The learners against independent references: the Crammer–Singer primal of scikit-learn's
LinearSVC (multiclass + margin rescaling), SGD's independence of ``n_jobs``, and the
compatibility table of docs/architecture.md (refusals at construction)."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.svm import LinearSVC

import bicrit
from bicrit.errors import IncompatibleError
from bicrit.learners import LEARNERS, make_trainer, train


def _multiclass_data(seed: int = 0, n: int = 60, d: int = 5, k: int = 3):
    rng = np.random.default_rng(seed)
    centers = rng.normal(scale=1.5, size=(k, d))
    y = rng.integers(0, k, size=n)
    X = centers[y] + rng.normal(size=(n, d))
    return X, y.astype(np.int64)


def crammer_singer_primal(W: np.ndarray, X: np.ndarray, y: np.ndarray, C: float) -> float:
    """½‖W‖² + C Σ_i max_y (Δ(y, y_i) + w_y·x_i − w_{y_i}·x_i), Δ the 0-1 loss; W is (k, d)."""
    S = X @ W.T
    margins = S - S[np.arange(len(y)), y][:, None] + 1.0
    margins[np.arange(len(y)), y] = 0.0
    return 0.5 * float(np.sum(W * W)) + C * float(np.sum(margins.max(axis=1)))


def _sklearn_objective(X, y, C):
    svc = LinearSVC(
        multi_class="crammer_singer", fit_intercept=False, C=C, tol=1e-8, max_iter=100000
    ).fit(X, y)
    return crammer_singer_primal(svc.coef_, X, y, C)


@pytest.mark.parametrize("learner", ["bcfw", "cutting-plane"])
@pytest.mark.parametrize("C", [0.1, 1.0])
def test_margin_multiclass_reaches_crammer_singer_objective(learner: str, C: float) -> None:
    X, y = _multiclass_data()
    ref = _sklearn_objective(X, y, C)
    s = bicrit.structure("multiclass")
    s.initialize(X, y)
    params = {"tol": 1e-6, "objective": "exact"} if learner == "bcfw" else {"eps": 1e-6}
    w, history = train(
        s,
        X,
        y,
        surrogate="margin",
        search="convex-hull",
        learner=learner,
        max_epochs=3000 if learner == "bcfw" else 500,
        C=C,
        **params,
    )
    k = s.n_classes
    ours = crammer_singer_primal(np.asarray(w).reshape(k, -1), X, y, C)
    # Our objective recomputed independently; LinearSVC's is an upper bound of the optimum.
    assert ours <= ref * (1 + 1e-3), (ours, ref, len(history))
    assert ours >= ref * (1 - 1e-3), (ours, ref)


def test_objective_formula_matches_trainer() -> None:
    """The reference formula equals the trainer's exact primal at the same weights."""
    X, y = _multiclass_data(seed=1)
    s = bicrit.structure("multiclass")
    s.initialize(X, y)
    tr = make_trainer(s, X, y, "margin", "convex-hull", "bcfw", {"C": 0.5})
    for _ in range(3):
        tr.epoch()
    w = tr.weights(False)
    ev = tr.evaluate(False)
    ours = crammer_singer_primal(np.asarray(w).reshape(s.n_classes, -1), X, y, 0.5)
    assert ev["objective"] == pytest.approx(ours, rel=1e-9, abs=1e-9)


@pytest.mark.parametrize("surrogate", ["margin", "slack"])
def test_sgd_n_jobs_bit_identical(surrogate: str) -> None:
    rng = np.random.default_rng(3)
    X = rng.normal(size=(80, 6))
    Y = (rng.random(size=(80, 4)) < 0.4).astype(np.int64)
    weights = []
    for n_jobs in (1, 2):
        s = bicrit.structure("multilabel", edges="full")
        s.initialize(X, Y)
        w, _ = train(
            s,
            X,
            Y,
            surrogate=surrogate,
            search="convex-hull",
            learner="sgd",
            max_epochs=4,
            C=0.5,
            random_state=7,
            n_jobs=n_jobs,
            block_size=8,
        )
        weights.append(np.asarray(w))
    assert weights[0].tobytes() == weights[1].tobytes()


def test_learner_param_names() -> None:
    assert set(LEARNERS) == {"sgd", "bcfw", "cutting-plane", "cutting-plane-n"}
    for info in LEARNERS.values():
        assert {"C", "n_jobs", "random_state"} <= set(info.params)


@pytest.mark.parametrize(
    ("learner", "surrogate", "search", "names"),
    [
        ("bcfw", "probloss", "convex-hull", ("bcfw", "probloss")),
        ("cutting-plane", "log", "convex-hull", ("cutting-plane", "log")),
        ("sgd", "slack", "sarawagi", ("sgd", "sarawagi")),
        ("bcfw", "slack", "sarawagi", ("bcfw", "sarawagi")),
    ],
)
def test_incompatible_refused_at_construction(learner, surrogate, search, names) -> None:
    X, y = _multiclass_data(n=10)
    s = bicrit.structure("multiclass")
    s.initialize(X, y)
    with pytest.raises(IncompatibleError) as exc:
        make_trainer(s, X, y, surrogate, search, learner, {"C": 1.0})
    msg = str(exc.value).lower()
    for name in names:
        assert name in msg, (name, msg)
