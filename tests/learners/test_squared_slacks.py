"""Squared slacks (``slack_norm=2``): ½‖w‖² + C·Σ_i max(0, ℓ_i(w))², trained by BCFW, against
independent references — scikit-learn's LinearSVC with the squared hinge on a binary problem, and
the primal with every label enumerated as a constraint solved by scipy — with the certificate
(primal − dual ≥ 0, → 0) checked at every epoch."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.optimize import minimize
from sklearn.svm import LinearSVC

import bicrit
from bicrit import MultiLabelSVM
from bicrit.errors import InvalidParameterError
from bicrit.learners import slack_norms, train


def _binary(seed: int, n: int = 40, d: int = 4) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, size=n)
    X = rng.normal(size=(n, d)) + np.where(y[:, None] == 1, 0.7, -0.7)
    return X, y.astype(np.int64)


def _check_certificate(history: list[dict], optimum: float, final: float) -> None:
    for row in history:
        assert row["gap"] >= -1e-9 * max(1.0, optimum), row
        assert row["dual"] <= optimum * (1 + 1e-6) + 1e-9, (row["dual"], optimum)
        assert row["objective"] >= optimum * (1 - 1e-6) - 1e-9, (row["objective"], optimum)
        assert row["objective"] - row["dual"] == pytest.approx(row["gap"], rel=1e-6, abs=1e-9)
    assert history[-1]["gap"] <= final * optimum, (history[-1]["gap"], optimum)


@pytest.mark.parametrize("C", [0.05, 1.0])
def test_binary_margin_is_linearsvc_squared_hinge(C: float) -> None:
    """Two classes, margin rescaling, 0-1 loss: with v = w_1 − w_0 (and w_0 = −w_1 at the
    optimum) ½(‖w_0‖² + ‖w_1‖²) + C·Σ max(0, 1 − s_i·v·x_i)² is half of LinearSVC's
    ½‖v‖² + 2C·Σ max(0, 1 − s_i·v·x_i)²."""
    X, y = _binary(3)
    svc = LinearSVC(loss="squared_hinge", C=2 * C, fit_intercept=False, tol=1e-10, max_iter=10**6)
    svc.fit(X, y)
    v = svc.coef_.ravel()
    s = 2.0 * y - 1.0
    ref = 0.5 * (0.5 * v @ v + 2 * C * np.sum(np.maximum(0.0, 1 - s * (X @ v)) ** 2))
    structure = bicrit.structure("multiclass")
    structure.initialize(X, y)
    w, history = train(
        structure,
        X,
        y,
        surrogate="margin",
        learner="bcfw",
        max_epochs=2000,
        C=C,
        slack_norm=2,
        objective="exact",
        tol=1e-7,
    )
    W = np.asarray(w).reshape(2, -1)
    # the objective recomputed here from the weights, not read from the learner
    xi = np.maximum(0.0, 1 + np.einsum("ij,ij->i", X, W[1 - y] - W[y]))
    ours = 0.5 * float(np.sum(W * W)) + C * float(np.sum(xi**2))
    assert ours == pytest.approx(ref, rel=1e-4)
    assert history[-1]["objective"] == pytest.approx(ours, rel=1e-9)
    _check_certificate(history, ref, 1e-5)
    # the hinge form is another problem
    _, hinge = train(structure, X, y, surrogate="margin", learner="bcfw", max_epochs=300, C=C)
    assert abs(hinge[-1]["objective"] - ours) > 1e-3 * ours


def _enumerated_optimum(structure, X: np.ndarray, Y: np.ndarray, surrogate: str, C: float) -> float:
    """min ½‖w‖² + C·Σξ_i² s.t. ξ_i ≥ 0 and ξ_i ≥ ψ(m(y), L(y)) for every label y (affine in w:
    margin L + w·Δφ, slack L·(1 + w·Δφ)), by SLSQP on (w, ξ)."""
    n, k = Y.shape
    dim = structure.size_joint_feature
    rows, rhs = [], []
    for i in range(n):
        gold = np.asarray(structure.joint_feature(X[i], Y[i]), dtype=np.float64)
        for bits in itertools.product((0, 1), repeat=k):
            y = np.array(bits, dtype=np.int64)
            loss = float(structure.loss(y, Y[i]))
            dphi = np.asarray(structure.joint_feature(X[i], y), dtype=np.float64) - gold
            slope = dphi if surrogate == "margin" else loss * dphi
            # ξ_i − slope·w − loss ≥ 0
            row = np.zeros(dim + n)
            row[:dim] = -slope
            row[dim + i] = 1.0
            rows.append(row)
            rhs.append(loss)
    A, b = np.array(rows), np.array(rhs)

    def f(z: np.ndarray) -> float:
        return 0.5 * z[:dim] @ z[:dim] + C * z[dim:] @ z[dim:]

    def grad(z: np.ndarray) -> np.ndarray:
        return np.concatenate([z[:dim], 2 * C * z[dim:]])

    z0 = np.concatenate([np.zeros(dim), np.full(n, float(k))])
    res = minimize(
        f,
        z0,
        jac=grad,
        method="SLSQP",
        constraints=[{"type": "ineq", "fun": lambda z: A @ z - b, "jac": lambda z: A}],
        bounds=[(None, None)] * dim + [(0, None)] * n,
        options={"ftol": 1e-12, "maxiter": 2000},
    )
    assert res.success, res.message
    return float(res.fun)


@settings(
    max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True
)
@given(
    seed=st.integers(0, 10_000),
    n=st.integers(3, 8),
    k=st.integers(2, 3),
    surrogate=st.sampled_from(["margin", "slack"]),
    C=st.sampled_from([0.03, 0.3]),
)
def test_random_multilabel_models_reach_the_enumerated_optimum(
    seed: int, n: int, k: int, surrogate: str, C: float
) -> None:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    Y = (rng.random((n, k)) < 0.5).astype(np.int64)
    structure = bicrit.structure("multilabel")
    structure.initialize(X, Y)
    opt = _enumerated_optimum(structure, X, Y, surrogate, C)
    _, history = train(
        structure,
        X,
        Y,
        surrogate=surrogate,
        search="frontier",
        learner="bcfw",
        max_epochs=600,
        C=C,
        slack_norm=2,
        objective="exact",
        tol=1e-6,
    )
    # Frank–Wolfe's sublinear rate: within 0.2 % after 600 epochs on these sets (at most 0.17 %
    # over 24 such models, most far closer); the certificate holds at every epoch
    assert history[-1]["objective"] == pytest.approx(opt, rel=3e-3, abs=1e-6)
    _check_certificate(history, opt, 5e-3)


def test_the_catalog_decides_and_the_estimators_check() -> None:
    assert slack_norms("bcfw") == (1, 2)
    assert all(slack_norms(name) == (1,) for name in ("sgd", "cutting-plane", "cutting-plane-n"))
    rng = np.random.default_rng(0)
    X, Y = rng.normal(size=(30, 3)), (rng.random((30, 3)) < 0.4).astype(np.int64)
    with pytest.raises(InvalidParameterError, match=r"slack_norm=2 .* learner 'sgd'"):
        MultiLabelSVM(slack_norm=2, learner="sgd").fit(X, Y)
    with pytest.raises(InvalidParameterError, match="slack_norm must be 1 or 2"):
        MultiLabelSVM(slack_norm=3).fit(X, Y)
    with pytest.raises(InvalidParameterError, match="learner_params must not set"):
        MultiLabelSVM(learner_params={"slack_norm": 2}).fit(X, Y)
    one = MultiLabelSVM(slack_norm=1, random_state=0, max_epochs=5).fit(X, Y)
    two = MultiLabelSVM(slack_norm=2, random_state=0, max_epochs=5).fit(X, Y)
    assert not np.allclose(one.coef_, two.coef_)
    # the history's objective is the squared one: ½‖w‖² + C·n·loss with loss = mean ξ_i²
    row = two.history_.row(-1, named=True)
    assert row["objective"] == pytest.approx(0.5 * row["norm_sq"] + 30 * row["loss"], rel=1e-9)


def test_cli_takes_slack_norm(capsys: pytest.CaptureFixture[str], tmp_path, monkeypatch) -> None:
    from bicrit.cli import main

    monkeypatch.setenv("BICRIT_DATA", str(tmp_path / "none"))  # the bundled emotions
    model = tmp_path / "m.bicrit"
    args = ["train", "--surrogate", "slack", "--epochs", "2", "--slack-norm", "2"]
    assert main([*args, "--save", str(model)]) == 0
    assert bicrit.load(model).get_params()["slack_norm"] == 2
    capsys.readouterr()
    assert main([*args, "--learner", "sgd"]) != 0
    err = capsys.readouterr().err
    assert "slack_norm=2" in err and len(err.strip().splitlines()) == 1
