"""The fit driver (bicrit.learners.fit): phases, stopping, callbacks, divergence, Ctrl-C and
history, with scripted runners; and the schedule hand-over against native trainers driven by
hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

import bicrit
from bicrit.learners import Learner, Trainer
from bicrit.learners.fit import (
    FeatureScaleWarning,
    Fit,
    FitInterruptedWarning,
    Fixed,
    Phase,
    Training,
    continued,
)


class Scripted:
    """A runner whose epochs report the scripted objectives (an entry may be an exception)."""

    def __init__(self, objectives, converged=(), w=0.0):
        self.objectives = list(objectives)
        self.converged = set(converged)
        self.w = w
        self.n_epochs = 0

    def epoch(self):
        obj = self.objectives[self.n_epochs]
        if isinstance(obj, BaseException):
            raise obj
        self.n_epochs += 1
        self.w += 1.0
        return {"objective": obj, "converged": self.n_epochs in self.converged}

    def weights(self, averaged=True):
        return np.array([self.w])


def test_epochs_are_numbered_over_the_phases_and_labelled() -> None:
    seen = []

    def second(previous):
        seen.append(previous)
        return Scripted([5.0, 4.0], w=float(previous.weights()[0]))

    first = Scripted([9.0, 8.0, 7.0])
    plan = [
        Phase("warmup", lambda _: first, 3, {"surrogate": "margin"}),
        Phase("main", second, 2, {"surrogate": "slack"}),
    ]
    result = Fit(plan).run()
    assert [r["epoch"] for r in result.rows] == [1, 2, 3, 4, 5]
    assert [r["phase"] for r in result.rows] == ["warmup"] * 3 + ["main"] * 2
    assert [r["surrogate"] for r in result.rows] == ["margin"] * 3 + ["slack"] * 2
    assert seen == [first]  # the main phase starts from the warm-up's runner
    assert result.runner.weights()[0] == 5.0 and result.epochs == 5
    assert all(r["cpu"] >= 0 for r in result.rows)


def test_tol_ends_a_phase_on_a_small_relative_change() -> None:
    runner = Scripted([10.0, 5.0, 4.99, 4.98, 1.0])
    result = Fit([Phase("main", lambda _: runner, 5)], tol=1e-2).run()
    # |4.99 − 5| ≤ 0.01·4.99 at epoch 3
    assert len(result.rows) == 3 and result.converged
    result = Fit([Phase("main", lambda _: Scripted([10.0, 5.0, 4.99]), 3)], tol=None).run()
    assert len(result.rows) == 3 and not result.converged


def test_a_certificate_ends_a_phase_only_when_certified() -> None:
    result = Fit([Phase("main", lambda _: Scripted([3, 2, 1], converged={2}), 3)]).run()
    assert len(result.rows) == 2 and result.converged
    result = Fit(
        [Phase("main", lambda _: Scripted([3, 2, 1], converged={2}), 3)], certified=False
    ).run()
    assert len(result.rows) == 3 and not result.converged


def test_a_warm_up_that_converges_hands_over_and_each_phase_compares_its_own_epochs() -> None:
    # the main phase's first objective equals the warm-up's last: no stop, phases start afresh
    plan = [
        Phase("warmup", lambda _: Scripted([4.0, 4.0, 9.0]), 3),
        Phase("main", lambda _: Scripted([4.0, 3.0, 2.0]), 3),
    ]
    result = Fit(plan, tol=1e-9).run()
    assert [r["phase"] for r in result.rows] == ["warmup"] * 2 + ["main"] * 3
    assert not result.converged  # the last phase ran out of epochs


def test_callbacks_add_to_the_row_and_can_stop() -> None:
    def score(event):
        event.row["dev"] = float(event.runner.weights()[0]) * 10
        event.stop = event.row["epoch"] == 2

    result = Fit([Phase("main", lambda _: Scripted([5, 4, 3, 2]), 4)], callbacks=[score]).run()
    assert [r["dev"] for r in result.rows] == [10.0, 20.0]
    assert result.stopped and not result.converged


def test_divergence_stops_with_a_warning() -> None:
    with pytest.warns(FeatureScaleWarning, match="diverged"):
        result = Fit([Phase("main", lambda _: Scripted([5, math.inf, 1]), 3)]).run()
    assert result.diverged and len(result.rows) == 2


def test_ctrl_c_keeps_finished_epochs_and_needs_one() -> None:
    plan = [Phase("main", lambda _: Scripted([5, 4, KeyboardInterrupt()]), 3)]
    with pytest.warns(FitInterruptedWarning, match="2 finished"):
        result = Fit(plan).run()
    assert result.interrupted and len(result.rows) == 2
    with pytest.raises(KeyboardInterrupt):
        Fit([Phase("main", lambda _: Scripted([KeyboardInterrupt()]), 3)]).run()


def test_a_plan_can_step_between_phases() -> None:
    def plan(state):
        yield Phase("v", lambda _: Scripted([3, 2]), 2, {"round": 0})
        state.record({"phase": "alpha", "objective": 1.5})
        state.runner = Fixed(np.array([42.0]), like=state.runner)
        yield Phase("v", lambda prev: Scripted([1], w=float(prev.weights()[0])), 1, {"round": 1})

    result = Fit(plan).run()
    assert [(r["phase"], r["epoch"]) for r in result.rows] == [
        ("v", 1),
        ("v", 2),
        ("alpha", 2),
        ("v", 3),
    ]
    assert result.runner.weights()[0] == 43.0


def test_history_is_continued() -> None:
    rows = [{"epoch": 1, "objective": 5.0}, {"epoch": 2, "objective": 4.0}]
    result = Fit([Phase("main", lambda _: Scripted([4.0, 3.0]), 2)], tol=1e-6, history=rows).run()
    # the first new epoch compares with the last one of the continued fit: equal, so it stops
    assert [r["epoch"] for r in result.rows] == [1, 2, 3] and result.converged


@pytest.fixture(scope="module")
def problem():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((60, 5))
    Y = (X[:, :3] + 0.3 * rng.standard_normal((60, 3)) > 0).astype(np.int64)
    s = bicrit.structure("multilabel").initialize(X, Y)
    return s, X, Y


def test_the_schedule_continues_across_the_warm_up(problem) -> None:
    # reference by hand with native trainers: margin for 2 epochs, then ProbLoss from the
    # averaged weights with t0 moved on by the steps taken
    s, X, Y = problem
    learner = Learner("sgd", C=0.5, random_state=3, batch_size=7)
    Xn, Yn = s.native_inputs(X, Y)
    first = Trainer(s._native, Xn, Yn, bicrit.surrogate("margin"), "convex-hull", learner)
    for _ in range(2):
        first.epoch()
    t0 = 1.0 + 2 * math.ceil(60 / 7)
    second = Trainer(
        s._native,
        Xn,
        Yn,
        bicrit.surrogate("probloss"),
        "convex-hull",
        Learner("sgd", C=0.5, random_state=3, batch_size=7, t0=t0),
        None,
        first.weights(True),
    )
    for _ in range(3):
        second.epoch()
    training = Training(s, Xn, Yn, learner)
    result = Fit(training.phases("probloss", "convex-hull", 5, warmup=2)).run()
    assert continued(first, learner).params["t0"] == t0
    np.testing.assert_array_equal(result.runner.weights(True), second.weights(True))


def test_the_main_combination_is_refused_before_the_warm_up(problem) -> None:
    s, X, Y = problem
    training = Training(s, *s.native_inputs(X, Y), Learner("bcfw"))
    with pytest.raises(bicrit.errors.IncompatibleError, match="affine"):
        training.phases("probloss", "convex-hull", 4, warmup=2)


def test_validation_and_early_stopping_callbacks() -> None:
    from bicrit.learners.fit import early_stopping, evaluate

    scores = iter([0.5, 0.7, 0.6, 0.65, 0.69, 0.9])
    result = Fit(
        [Phase("main", lambda _: Scripted([9, 8, 7, 6, 5, 4]), 6)],
        callbacks=[
            evaluate(lambda w: {"f1": next(scores)}, prefix="dev_"),
            early_stopping("dev_f1", patience=3),
        ],
    ).run()
    # best .7 at epoch 2, no improvement for three epochs: stop after epoch 5
    assert [r["dev_f1"] for r in result.rows] == [0.5, 0.7, 0.6, 0.65, 0.69]
    assert result.stopped


def test_stable_predictions_stop_once_the_probe_settles() -> None:
    from bicrit.learners.fit import stable_predictions

    # 100 probe predictions per epoch; epoch k changes the listed number of them
    changes = [0, 0, 5, 30, 1, 0, 1, 0]  # by the runner's weight (its epoch number)
    state = {"k": 0, "labels": np.zeros(100, dtype=int)}

    def predict(w):
        n = changes[int(w[0]) - 1]
        state["labels"] = state["labels"].copy()
        state["labels"][:n] += 1
        return [np.array([v, 1]) for v in state["labels"]]  # items compared as arrays

    phases = [
        Phase("warmup", lambda _: Scripted([9.0, 8.9]), 2),
        Phase("main", lambda prev: Scripted([8, 7, 6, 5, 4, 3], w=prev.w), 6),
    ]
    result = Fit(phases, callbacks=[stable_predictions(predict, share=0.01, patience=3)]).run()
    # the warm-up is never ended by it and starts no comparison; in the main phase epoch 4 is
    # compared with 3 (30 % changed), then 1 %, 0 %, 1 %: three calm epochs end the fit at 7
    assert [r.get("changed") for r in result.rows] == [None, None, None, 0.3, 0.01, 0.0, 0.01]
    assert result.stopped and len(result.rows) == 7
    # predictions that never move (a model still predicting nothing) have not settled
    frozen = Fit(
        [Phase("main", lambda _: Scripted([5, 4, 3, 2, 1, 0]), 6)],
        callbacks=[stable_predictions(lambda w: [np.zeros(3)] * 10, patience=2)],
    ).run()
    assert not frozen.stopped and len(frozen.rows) == 6


def test_estimators_stop_when_predictions_settle_unless_told_not_to() -> None:
    from sklearn.datasets import load_iris

    X, y = load_iris(return_X_y=True)
    X = (X - X.mean(0)) / X.std(0)
    kw = {"structure": "multiclass", "C": 1.0, "max_epochs": 60, "tol": None, "random_state": 0}
    settled = bicrit.StructuredSVM(**kw).fit(X, y)
    full = bicrit.StructuredSVM(n_iter_no_change=None, **kw).fit(X, y)
    assert full.n_epochs_ == 60 and "changed" not in full.history_.columns
    assert settled.n_epochs_ < 60
    assert all(c <= 0.01 for c in settled.history_["changed"].to_list()[-3:])
    with pytest.raises(bicrit.errors.InvalidParameterError, match="n_iter_no_change"):
        bicrit.StructuredSVM(n_iter_no_change=0).fit(X, y)


def test_default_fits_report_the_task_loss_of_the_stability_probe() -> None:
    """With the default stopping the training task loss comes from the probe the rule decodes
    anyway, and the learner's own pass over the whole training set is off; on a set smaller than
    the probe both are the mean over every training instance, epoch by epoch."""
    from sklearn.datasets import load_iris

    X, y = load_iris(return_X_y=True)
    X = (X - X.mean(0)) / X.std(0)
    kw = {"structure": "multiclass", "learner": "bcfw", "C": 1.0, "random_state": 0}
    probe = bicrit.StructuredSVM(**kw).fit(X, y)
    assert probe._trainer.params["task_loss"] is False
    full = bicrit.StructuredSVM(learner_params={"task_loss": True}, **kw).fit(X, y)
    assert full._trainer.params["task_loss"] is True
    assert probe.n_epochs_ == full.n_epochs_
    np.testing.assert_allclose(
        probe.history_["task_loss"].to_numpy(), full.history_["task_loss"].to_numpy(), atol=1e-12
    )
