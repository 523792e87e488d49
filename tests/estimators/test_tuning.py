"""C="auto": the regularisation path on held-out data, on every estimator."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.base import clone

from bicrit import (
    DependencySVM,
    HierarchicalSVM,
    MultiLabelSVM,
    SequenceSVM,
    StructuredSVM,
    datasets,
)
from bicrit.errors import InvalidParameterError
from bicrit.estimators.tuning import GRID, regularization_path


def _tune_rows(est):
    h = est.history_
    return h.filter(h["phase"] == "tune")


def _check_choice(est, grid=GRID) -> None:
    rows = _tune_rows(est)
    assert sorted(set(rows["C"].to_list())) == sorted(grid)
    curve = dict(est.validation_curve_)
    best = max(curve.values())
    # the chosen C has the best held-out score; ties go to the smallest C
    assert curve[est.C_] == best
    assert min(c for c, v in curve.items() if v == best) == est.C_
    # the final fit follows the path in the history and is what the model predicts with
    final = est.history_.filter(~est.history_["phase"].is_in(["tune", "alpha"]))
    assert final.height == est.n_epochs_ >= 1
    assert est.training_summary()["C"] == est.C_


def test_multilabel_auto_chooses_on_held_out_data(emotions) -> None:
    tr, te = emotions
    est = MultiLabelSVM(surrogate="slack", C="auto", max_epochs=15, random_state=0).fit(tr)
    _check_choice(est)
    assert est.C == "auto"  # the parameter is left as given (scikit-learn's contract)
    assert clone(est).C == "auto"
    assert 0.0 <= est.score(te) <= 1.0


def test_the_held_out_score_is_the_score_of_a_fit_on_the_rest(emotions) -> None:
    # the first C of the path starts from zero weights: refit it by hand on the same split
    # and score it on the held-out part with the metric the path uses
    from bicrit.estimators.tuning import _folds
    from bicrit.metrics import multilabel_report

    tr, _ = emotions
    est = MultiLabelSVM(C="auto", max_epochs=10, random_state=3).fit(tr)
    (train_idx, val_idx) = _folds(len(tr), 1, 3)[0]
    manual = MultiLabelSVM(C=GRID[0], max_epochs=10, random_state=3)
    # the path scales features on the whole training set: do the same
    manual.fit(tr.X, tr.Y)
    mean, std = manual.scale_mean_, manual.scale_std_
    manual = MultiLabelSVM(C=GRID[0], max_epochs=10, random_state=3, scale=False)
    manual.fit((tr.X[train_idx] - mean) / std, tr.Y[train_idx])
    P = manual.predict((tr.X[val_idx] - mean) / std)
    want = multilabel_report(tr.Y[val_idx], P)["jaccard_accuracy"]
    assert dict(est.validation_curve_)[GRID[0]] == pytest.approx(want)


def test_grid_and_folds(emotions) -> None:
    tr, _ = emotions
    grid = (0.01, 1.0)
    est = regularization_path(MultiLabelSVM(max_epochs=5, random_state=0), tr, grid=grid, folds=3)
    assert len(_tune_rows(est)) == 2 * 3
    assert sorted(set(_tune_rows(est)["fold"].to_list())) == [0, 1, 2]
    _check_choice(est, grid)
    with pytest.raises(InvalidParameterError, match="grid"):
        regularization_path(MultiLabelSVM(), tr, grid=(0.0, 1.0))
    with pytest.raises(InvalidParameterError, match="folds"):
        regularization_path(MultiLabelSVM(), tr, folds=0)


def test_structured_multiclass_auto(iris_scaled) -> None:
    X, y = iris_scaled
    est = StructuredSVM(structure="multiclass", C="auto", max_epochs=10, random_state=0)
    est.fit(X, np.asarray(["a", "b", "c"])[y])
    _check_choice(est)
    assert set(est.predict(X)) <= {"a", "b", "c"}


def test_sequence_auto(conll_slice) -> None:
    tr, te = conll_slice
    est = SequenceSVM(C="auto", max_epochs=3, random_state=0).fit(tr)
    _check_choice(est)
    assert 0.0 <= est.score(te) <= 1.0


def test_dependency_auto(ud_slice) -> None:
    tr, te = ud_slice
    est = DependencySVM(n_features=2**14, C="auto", max_epochs=2, random_state=0).fit(tr[:40])
    _check_choice(est)
    assert 0.0 <= est.score(te) <= 1.0


@pytest.mark.parametrize("model", ["flat", "hsvm", "nhsvm", "nhsvm3", "ssvm"])
def test_hierarchical_auto(model: str) -> None:
    ds = datasets.synthetic_hierarchy("unbalanced", n=200, d=10, seed=1, depth=3)
    tr = ds.split("train")
    est = HierarchicalSVM(
        model=model, C="auto", max_epochs=3, alpha_every=1, max_alternations=2, random_state=0
    ).fit(tr)
    _check_choice(est)
    assert est.alpha_.shape == (est.n_nodes_,)


def test_warm_start_keeps_the_chosen_c(emotions) -> None:
    tr, _ = emotions
    est = MultiLabelSVM(C="auto", max_epochs=5, random_state=0, warm_start=True).fit(tr)
    chosen = est.C_
    est.fit(tr)
    assert chosen == est.C_


def test_the_path_and_the_refit_stop_by_the_default_rule(emotions) -> None:
    """C="auto"'s fits stop as every fit does (the training-probe stability rule): the refit's
    history has the rule's ``changed`` column and ends on it (three calm epochs) or on the
    objective, before ``max_epochs``; the path's fits end before it too."""
    tr, _ = emotions
    est = MultiLabelSVM(surrogate="margin", C="auto", max_epochs=60, random_state=0).fit(tr)
    final = est.history_.filter(est.history_["phase"] != "tune")
    assert "changed" in final.columns and est.n_epochs_ < 60
    assert (_tune_rows(est)["tune_epochs"] < 60).all()
    off = MultiLabelSVM(
        surrogate="margin", C="auto", max_epochs=8, tol=None, n_iter_no_change=None, random_state=0
    ).fit(tr)
    assert off.n_epochs_ == 8 and (_tune_rows(off)["tune_epochs"] == 8).all()
    assert "changed" not in off.history_.columns


def test_ctrl_c_in_a_fit_of_the_path_stops_the_path(emotions, monkeypatch) -> None:
    """Ctrl-C during one of C="auto"'s fits stops the whole fit: the path goes no further (no
    later C, no refit) and the model is the fit it cut short, marked interrupted, so the
    command line exits 130 instead of tuning on."""
    from bicrit.learners.fit import FitInterruptedWarning

    tr, _ = emotions
    est = MultiLabelSVM(C="auto", max_epochs=10, tol=None, random_state=0)
    calls: list[float] = []
    train = type(est)._train

    def _train(self, structure, X, Y, callback, continuing, **kw):
        calls.append(self._tuned_C)

        def ctrl_c_at_epoch_2(row):
            if len(calls) == 2 and row["epoch"] == 2:
                raise KeyboardInterrupt  # what Python's SIGINT handler raises

        return train(self, structure, X, Y, ctrl_c_at_epoch_2, continuing, **kw)

    monkeypatch.setattr(type(est), "_train", _train)
    with pytest.warns(FitInterruptedWarning):
        est.fit(tr)
    assert calls == list(GRID[:2])  # the third C and the refit never started
    assert est.interrupted_
    assert est.n_epochs_ == 2
    chosen = est.C_
    assert chosen == calls[-1]
    assert [c for c, _ in est.validation_curve_] == [GRID[0]]
