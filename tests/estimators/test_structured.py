"""StructuredSVM: the scikit-learn contract, model selection, the objective against
LinearSVC (Crammer–Singer), bad input, Ctrl-C, determinism, warm start, history."""

from __future__ import annotations

import threading
import warnings

import numpy as np
import polars as pl
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.model_selection import GridSearchCV, KFold, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import LinearSVC

import bicrit
from bicrit.errors import IncompatibleError, InvalidInputError, InvalidParameterError
from bicrit.estimators import FeatureScaleWarning, FitInterruptedWarning, StructuredSVM


def crammer_singer_objective(W: np.ndarray, X: np.ndarray, y: np.ndarray, C: float) -> float:
    """½‖W‖² + C Σ_i max_r (1[r ≠ y_i] + w_r·x_i − w_{y_i}·x_i), computed here from scratch."""
    S = X @ W.T
    n = len(y)
    margins = S + (np.arange(W.shape[0])[None, :] != y[:, None]) - S[np.arange(n), y][:, None]
    return 0.5 * float(np.sum(W * W)) + C * float(np.sum(margins.max(axis=1)))


# ----------------------------------------------------------------------- the contract


def test_init_stores_parameters_only():
    est = StructuredSVM(structure="multiclass", C=0.5, learner_params={"average": "none"})
    params = est.get_params()
    assert params["structure"] == "multiclass" and params["C"] == 0.5
    assert not [k for k in vars(est) if k.endswith("_") and not k.startswith("_")]
    assert est.set_params(C=2.0) is est and est.C == 2.0


def test_clone_gives_an_unfitted_equal_estimator(iris_scaled):
    X, y = iris_scaled
    est = StructuredSVM(structure="multiclass", max_epochs=3, random_state=0).fit(X, y)
    copy = clone(est)
    assert copy.get_params() == est.get_params()
    assert not hasattr(copy, "coef_")


def test_fit_returns_self_and_unfitted_predict_raises(iris_scaled):
    X, y = iris_scaled
    est = StructuredSVM(structure="multiclass", max_epochs=2, random_state=0)
    with pytest.raises(NotFittedError):
        est.predict(X)
    assert est.fit(X, y) is est


def test_multiclass_labels_map_back_to_the_classes(iris_scaled):
    X, y = iris_scaled
    names = np.array(["setosa", "versicolor", "virginica"])[y]
    est = StructuredSVM(structure="multiclass", max_epochs=5, random_state=0).fit(X, names)
    assert set(est.predict(X)) <= set(names)
    assert est.coef_.shape == (3, 4) and est.n_features_in_ == 4
    scores = est.decision_function(X)
    assert np.array_equal(est.classes_[scores.argmax(1)], est.predict(X))


@pytest.mark.parametrize(("learner", "slack"), [("bcfw", 2e-3), ("sgd", 5e-3)])
@pytest.mark.parametrize("C", [0.1, 1.0])
def test_multiclass_objective_matches_crammer_singer_linearsvc(iris_scaled, learner, slack, C):
    """Same C semantics: our weights reach LinearSVC's optimum of the same objective."""
    X, y = iris_scaled
    ref = LinearSVC(
        multi_class="crammer_singer", fit_intercept=False, C=C, tol=1e-6, max_iter=100_000
    ).fit(X, y)
    best = crammer_singer_objective(ref.coef_, X, y, C)
    est = StructuredSVM(
        structure="multiclass",
        learner=learner,
        C=C,
        max_epochs=200,
        tol=1e-7,
        n_iter_no_change=None,  # to the optimum, not only to settled predictions
        random_state=0,
    ).fit(X, y)
    ours = crammer_singer_objective(est.coef_, X, y, C)
    assert best * (1 - 1e-6) <= ours <= best * (1 + slack)


def test_grid_search_and_cross_val_score(emotions_scaled):
    X, Y, _, _ = emotions_scaled
    est = StructuredSVM(max_epochs=3, random_state=0)
    scores = cross_val_score(est, X[:150], Y[:150], cv=KFold(3))
    assert scores.shape == (3,) and np.all((scores >= 0) & (scores <= 1))
    grid = GridSearchCV(est, {"C": [0.1, 1.0], "surrogate": ["margin", "slack"]}, cv=2)
    grid.fit(X[:150], Y[:150])
    assert grid.best_params_["C"] in (0.1, 1.0)
    assert hasattr(grid.best_estimator_, "coef_")


def test_pipeline_with_standard_scaler(emotions):
    tr, te = emotions
    pipe = make_pipeline(StandardScaler(), StructuredSVM(max_epochs=5, random_state=0))
    pipe.fit(tr.X, tr.Y)
    P = pipe.predict(te.X)
    # subset accuracy of the pipeline, by hand
    assert pipe.score(te.X, te.Y) == pytest.approx(float(np.mean(np.all(P == te.Y, axis=1))))


def test_unscaled_dense_features_warn(emotions):
    tr, _ = emotions
    with pytest.warns(FeatureScaleWarning, match="standardize"):
        StructuredSVM(max_epochs=1, random_state=0).fit(tr.X, tr.Y)


# ----------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    ("X", "Y", "match"),
    [
        (np.zeros((5, 3)), np.zeros((4, 2), dtype=int), "instances|rows"),
        (np.zeros((0, 3)), np.zeros((0, 2), dtype=int), "empty"),
        (np.array([[np.nan, 1.0], [0.0, 1.0]]), np.array([[0, 1], [1, 0]]), "NaN"),
        (np.array([["a", "b"], ["c", "d"]]), np.array([[0, 1], [1, 0]]), "numeric"),
        (np.ones((2, 2)), np.array([[0, 2], [1, 0]]), "0 or 1"),
    ],
)
def test_bad_fit_input_raises_clear_errors(X, Y, match):
    with pytest.raises(InvalidInputError, match=match):
        StructuredSVM(max_epochs=1).fit(X, Y)


def test_bad_predict_input(emotions_scaled):
    X, Y, _, _ = emotions_scaled
    est = StructuredSVM(max_epochs=1, random_state=0).fit(X, Y)
    with pytest.raises(InvalidInputError, match="features"):
        est.predict(X[:, :5])
    bad = X[:3].copy()
    bad[1, 2] = np.inf
    with pytest.raises(InvalidInputError, match=r"NaN|infinit"):
        est.predict(bad)


@pytest.mark.parametrize(
    ("params", "name"),
    [
        ({"C": -1.0}, "C"),
        ({"max_epochs": 0}, "max_epochs"),
        ({"learner": "adam"}, "learner"),
        ({"tol": -1}, "tol"),
        ({"n_jobs": 0}, "n_jobs"),
        ({"random_state": -3}, "random_state"),
        ({"learner_params": {"C": 2.0}}, "learner_params"),
        ({"warmup": -1}, "warmup"),
        ({"warmup": "half"}, "warmup"),
        ({"warmup": True}, "warmup"),
        ({"warmup": 5, "max_epochs": 5}, "warmup"),
    ],
)
def test_bad_parameters_name_the_parameter(iris_scaled, params, name):
    X, y = iris_scaled
    with pytest.raises(InvalidParameterError, match=name):
        StructuredSVM(structure="multiclass", **params).fit(X, y)


def test_incompatible_pieces_refused_before_any_epoch(iris_scaled):
    X, y = iris_scaled
    calls = []
    est = StructuredSVM(structure="multiclass", surrogate="probloss", learner="bcfw")
    with pytest.raises(IncompatibleError):
        est.fit(X, y, callback=calls.append)
    assert calls == [] and not hasattr(est, "coef_")


def test_frontier_refused_on_a_structure_without_it_before_any_epoch(emotions_scaled):
    X, Y, _, _ = emotions_scaled
    calls: list = []
    # relaxed multi-label inference (the LP) has no frontier (exact enumeration has one)
    est = StructuredSVM(
        structure="multilabel",
        structure_params={"inference": "relaxed"},
        surrogate="probloss",
        search="frontier",
    )
    with pytest.raises(IncompatibleError, match="frontier"):
        est.fit(X[:20], Y[:20], callback=calls.append)
    assert calls == [] and not hasattr(est, "coef_")


def test_frontier_trains_multiclass_like_the_ban_list_search(iris_scaled):
    """Both searches return the exact integral optimum, so the fits coincide; the frontier makes
    one call per inference."""
    X, y = iris_scaled
    kw = {"structure": "multiclass", "surrogate": "slack", "max_epochs": 4, "random_state": 0}
    a = StructuredSVM(search="frontier", **kw).fit(X, y)
    b = StructuredSVM(search="convex-hull-ban", **kw).fit(X, y)
    assert np.allclose(a.coef_, b.coef_, rtol=1e-9, atol=1e-12)
    assert (a.history_["calls"] == a.history_["inferences"]).all()


# ----------------------------------------------------------------------- Ctrl-C


def test_keyboard_interrupt_keeps_the_finished_epochs(emotions_scaled):
    X, Y, Xt, _ = emotions_scaled

    def stop_after_two(stats):
        if stats["epoch"] == 2:
            raise KeyboardInterrupt

    est = StructuredSVM(max_epochs=10, random_state=0)
    with pytest.warns(FitInterruptedWarning, match="2 finished"):
        est.fit(X, Y, callback=stop_after_two)
    assert est.interrupted_ and est.history_.height == 2
    # the kept model equals a 2-epoch fit with the same seed
    ref = StructuredSVM(max_epochs=2, tol=None, random_state=0).fit(X, Y)
    assert np.array_equal(est.coef_, ref.coef_)
    assert np.array_equal(est.predict(Xt), ref.predict(Xt))


def test_keyboard_interrupt_before_any_epoch_is_re_raised(emotions_scaled, ctrl_c):
    """Ctrl-C during the first epoch: nothing learned, so KeyboardInterrupt propagates and the
    estimator stays unfitted."""
    import _thread

    X, Y, _, _ = emotions_scaled
    Xbig, Ybig = np.vstack([X] * 30), np.vstack([Y] * 30)
    est = StructuredSVM(max_epochs=5, random_state=0)
    timer = threading.Timer(0.05, _thread.interrupt_main)
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            est.fit(Xbig, Ybig)
    finally:
        timer.cancel()
    assert not hasattr(est, "coef_")


def test_sigint_during_fit_leaves_a_usable_model(emotions_scaled, ctrl_c):
    """A real SIGINT (Ctrl-C) while the native trainer runs: the running epoch is rolled back,
    the finished ones are kept (or, if none finished, KeyboardInterrupt propagates)."""
    import _thread

    X, Y, Xt, Yt = emotions_scaled
    Xbig = np.vstack([X] * 8)
    Ybig = np.vstack([Y] * 8)
    seen = []

    def interrupt_during_epoch_two(stats):
        seen.append(stats["epoch"])
        if stats["epoch"] == 1:
            threading.Timer(0.02, _thread.interrupt_main).start()

    est = StructuredSVM(max_epochs=200, tol=None, random_state=0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est.fit(Xbig, Ybig, callback=interrupt_during_epoch_two)
    assert est.interrupted_
    assert any(issubclass(w.category, FitInterruptedWarning) for w in caught)
    assert est.history_.height == len(seen) >= 1
    assert est.predict(Xt).shape == Yt.shape


# ----------------------------------------------------------------------- determinism


def test_fixed_random_state_gives_identical_models_whatever_n_jobs(emotions_scaled):
    X, Y, _, _ = emotions_scaled
    w = [
        StructuredSVM(surrogate="slack", max_epochs=3, n_jobs=n, random_state=7).fit(X, Y).coef_
        for n in (1, 2, 1)
    ]
    assert np.array_equal(w[0], w[1]) and np.array_equal(w[0], w[2])
    bcfw = [
        StructuredSVM(learner="bcfw", learner_params={"block_size": 4}, n_jobs=n, max_epochs=3)
        .set_params(random_state=3)
        .fit(X, Y)
        .coef_
        for n in (1, 2)
    ]
    assert np.array_equal(bcfw[0], bcfw[1])


def test_warm_start_continues_the_same_run(emotions_scaled):
    X, Y, _, _ = emotions_scaled
    full = StructuredSVM(max_epochs=4, tol=None, random_state=1).fit(X, Y)
    part = StructuredSVM(max_epochs=2, tol=None, random_state=1, warm_start=True).fit(X, Y)
    part.fit(X, Y)
    assert part.history_.height == 4
    assert np.array_equal(part.coef_, full.coef_)
    # other data: starts from the previous weights
    part.fit(X[:100], Y[:100])
    assert part.history_.height == 6


def test_history_is_a_polars_frame_with_epoch_stats(emotions_scaled):
    X, Y, _, _ = emotions_scaled
    est = StructuredSVM(surrogate="slack", max_epochs=3, tol=None, random_state=0).fit(X, Y)
    h = est.history_
    assert isinstance(h, pl.DataFrame) and h.height == 3
    for col in ("objective", "calls", "calls_per_inference", "fractional", "time", "task_loss"):
        assert col in h.columns
    assert h["epoch"].to_list() == [1, 2, 3]
    assert h["task_loss"].min() >= 0 and h["calls"].min() >= h["inferences"].min() > 0


def test_warmup_auto_trains_margin_first_only_for_a_non_convex_surrogate(emotions_scaled):
    """``warmup="auto"``: ProbLoss (``convex_in_h`` False) trains margin rescaling for
    ``max_epochs // 2`` epochs, then itself; margin and slack train themselves from the start."""
    X, Y, _, _ = emotions_scaled
    kw = {"max_epochs": 6, "tol": None, "random_state": 0, "learner": "sgd"}
    prob = StructuredSVM(surrogate="probloss", **kw).fit(X, Y)
    assert prob.history_["surrogate"].to_list() == ["margin"] * 3 + ["probloss"] * 3
    for name in ("margin", "slack"):
        est = StructuredSVM(surrogate=name, **kw).fit(X, Y)
        assert est.history_["surrogate"].to_list() == [name] * 6
    # an explicit count works for any surrogate, and 0 switches it off
    slack = StructuredSVM(surrogate="slack", warmup=2, **kw).fit(X, Y)
    assert slack.history_["surrogate"].to_list() == ["margin"] * 2 + ["slack"] * 4
    cold = StructuredSVM(surrogate="probloss", warmup=0, **kw).fit(X, Y)
    assert cold.history_["surrogate"].to_list() == ["probloss"] * 6


def test_warmup_hands_its_weights_and_step_schedule_to_the_surrogate(emotions_scaled):
    """After the warm-up the surrogate starts from the margin model's averaged weights (equal to
    a 3-epoch margin fit with the same seed) and SGD's Pegasos schedule continues: the first
    step size of the surrogate's phase is the one after the warm-up's steps, not η_1."""
    from bicrit.learners import make_trainer

    X, Y, _, _ = emotions_scaled
    kw = {"tol": None, "random_state": 0, "learner": "sgd", "C": 1.0}
    est = StructuredSVM(surrogate="slack", max_epochs=4, warmup=3, **kw).fit(X, Y)
    margin = StructuredSVM(surrogate="margin", max_epochs=3, **kw).fit(X, Y)
    assert np.array_equal(
        est.history_["objective"].to_numpy()[:3], margin.history_["objective"].to_numpy()
    )
    # the surrogate phase, rebuilt here: slack from the margin weights with t0 = 1 + 3n
    n = X.shape[0]
    params = {"C": 1.0, "random_state": 0, "task_loss": True, "t0": 1.0 + 3 * n}
    s = est.structure_
    t = make_trainer(s, X, Y, "slack", est.search_, "sgd", params, margin.coef_)
    t.epoch()
    assert np.array_equal(est.coef_, np.asarray(t.weights(True)))
    steps = est.history_["step_size"].to_numpy()
    assert steps[3] < steps[2]  # a restarted schedule would take η_1 = n·C/(1 + t0) ≫ η_3n


def test_tol_stops_early_and_none_runs_every_epoch(iris_scaled):
    X, y = iris_scaled
    stopped = StructuredSVM(structure="multiclass", learner="bcfw", tol=0.05, max_epochs=100)
    stopped.set_params(random_state=0).fit(X, y)
    assert stopped.converged_ and stopped.n_epochs_ < 100
    full = StructuredSVM(structure="multiclass", tol=None, max_epochs=7, random_state=0)
    assert full.fit(X, y).n_epochs_ == 7 and not full.converged_


def test_sparse_and_float32_inputs_give_the_same_model(emotions_scaled):
    X, Y, _, _ = emotions_scaled
    X = X[:100].astype(np.float32)
    Y = Y[:100]
    a = StructuredSVM(max_epochs=2, random_state=0).fit(X, Y).coef_
    b = StructuredSVM(max_epochs=2, random_state=0).fit(sp.csr_matrix(X), Y).coef_
    c = StructuredSVM(max_epochs=2, random_state=0).fit(X.astype(np.float64), Y).coef_
    assert np.array_equal(a, b) and np.array_equal(a, c)


def test_structure_object_and_plugin_names(iris_scaled):
    X, y = iris_scaled
    s = bicrit.structure("multiclass")
    est = StructuredSVM(structure=s, max_epochs=2, random_state=0).fit(X, y)
    assert est.structure_ is not s  # the parameter is not mutated
    with pytest.raises(InvalidParameterError, match="structure_params"):
        StructuredSVM(structure=s, structure_params={"n_classes": 3}).fit(X, y)


def test_fitted_estimator_pickles_for_joblib(iris_scaled):
    import pickle

    X, y = iris_scaled
    est = StructuredSVM(structure="multiclass", max_epochs=3, random_state=0).fit(X, y)
    back = pickle.loads(pickle.dumps(est))
    assert np.array_equal(back.predict(X), est.predict(X))


def test_progress_bar_is_quiet_when_not_a_terminal(iris_scaled, capsys):
    X, y = iris_scaled
    StructuredSVM(structure="multiclass", max_epochs=3, verbose=1, random_state=0).fit(X, y)
    captured = capsys.readouterr()
    assert captured.err == "" and captured.out == ""


def test_a_failed_fresh_fit_leaves_the_estimator_unfitted(iris_scaled):
    X, y = iris_scaled
    est = StructuredSVM(structure="multiclass", max_epochs=2, random_state=0).fit(X, y)
    with pytest.raises(IncompatibleError):
        est.set_params(surrogate="probloss", learner="bcfw").fit(X, y)
    with pytest.raises(NotFittedError):
        est.predict(X)


def test_clear_errors_for_inputs_users_get_wrong() -> None:
    import bicrit
    from bicrit.errors import InvalidInputError

    X = np.eye(4)
    # the default structure is multilabel: a 1-D Y says what to pass instead
    with pytest.raises(InvalidInputError, match="structure='multiclass'"):
        StructuredSVM().fit(X, [0, 1, 0, 1])
    # a single class is refused at fit (it used to fit, then fail in predict with IndexError)
    with pytest.raises(InvalidInputError, match="one class"):
        StructuredSVM(structure="multiclass").fit(X, [1, 1, 1, 1])
    # tokens that are not strings are named as such
    with pytest.raises(InvalidInputError, match="tokens must be strings"):
        bicrit.SequenceSVM(max_epochs=1).fit([[1, 2, 3], [4, 5]], [["O"] * 3, ["O", "B-X"]])
