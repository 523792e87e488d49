"""Margin rescaling makes exactly one oracle call per inference on every structure (issue 16):
ψ = h + g is linear, so the λ = 1 answer is exact and the convex hull search makes no
certificate call (``Surrogate::exact_lambda``). Slack rescaling, whose ψ is not linear, needs
more than one with the convex hull search on the same fits — the count is the search's, not a
constant; where the default search is the one-pass frontier (exact multi-label enumeration,
multiclass) slack makes exactly one frontier call too."""

from __future__ import annotations

import numpy as np
import pytest

from bicrit import DependencySVM, HierarchicalSVM, MultiLabelSVM, SequenceSVM, StructuredSVM
from bicrit.datasets import SequenceFeaturizer, synthetic_hierarchy


def _calls(est) -> np.ndarray:
    h = est.history_
    return (h["calls"] / h["inferences"]).to_numpy()


def _check(est_margin, est_slack=None) -> None:
    got = _calls(est_margin)
    assert got.size > 0 and np.all(got == 1.0), got
    assert np.all(est_margin.history_["calls_per_inference"].to_numpy() == 1.0)
    if est_slack is not None:
        h = est_slack.history_
        if np.all(h["calls_frontier"].to_numpy() == h["calls"].to_numpy()):
            assert np.all(_calls(est_slack) == 1.0)
        else:
            assert _calls(est_slack).max() > 1.0


LEARNERS = ["sgd", "bcfw", "cutting-plane"]


@pytest.mark.parametrize("learner", LEARNERS)
@pytest.mark.parametrize("inference", ["exact", "relaxed", "tree"])
def test_multilabel(emotions, learner, inference):
    tr, _ = emotions
    kw = {"learner": learner, "inference": inference, "max_epochs": 2, "random_state": 0}
    if inference == "tree":
        kw["edges"] = "tree"
    slack = MultiLabelSVM(surrogate="slack", **kw).fit(tr)
    _check(MultiLabelSVM(surrogate="margin", **kw).fit(tr), slack)
    # the default search is the frontier exactly where enumeration gives it in one pass
    assert (slack.history_["calls_frontier"].to_numpy() > 0).all() == (inference == "exact")
    if inference == "exact":
        _check(slack, MultiLabelSVM(surrogate="slack", search="convex-hull", **kw).fit(tr))


@pytest.mark.parametrize("learner", LEARNERS)
def test_multiclass(iris_scaled, learner):
    X, y = iris_scaled
    kw = {"structure": "multiclass", "learner": learner, "max_epochs": 2, "random_state": 0}
    _check(
        StructuredSVM(surrogate="margin", **kw).fit(X, y),
        StructuredSVM(surrogate="slack", search="convex-hull", **kw).fit(X, y),
    )
    slack = StructuredSVM(surrogate="slack", **kw).fit(X, y)
    h = slack.history_
    assert np.all(h["calls_frontier"].to_numpy() == h["inferences"].to_numpy())


@pytest.mark.parametrize("learner", LEARNERS)
def test_chain(conll_slice, learner):
    tr, _ = conll_slice
    kw = {"featurizer": SequenceFeaturizer(2**14), "learner": learner, "max_epochs": 2}
    _check(
        SequenceSVM(surrogate="margin", random_state=0, **kw).fit(tr),
        SequenceSVM(surrogate="slack", random_state=0, **kw).fit(tr),
    )


@pytest.mark.parametrize("projective", [True, False])
def test_dependency(ud_slice, projective):
    tr, _ = ud_slice
    kw = {"n_features": 2**14, "projective": projective, "max_epochs": 2, "random_state": 0}
    _check(
        DependencySVM(surrogate="margin", **kw).fit(tr),
        DependencySVM(surrogate="slack", **kw).fit(tr),
    )


@pytest.mark.parametrize("model", ["flat", "hsvm", "nhsvm"])
def test_hierarchy(model):
    data = synthetic_hierarchy("unbalanced", n=120, d=10, seed=3)
    tr = data.splits["train"]
    est = HierarchicalSVM(hierarchy=data, model=model, max_epochs=2, random_state=0)
    _check(est.fit(data.X[tr], [data.Y[i] for i in tr]))


@pytest.mark.parametrize("params", [{"beta": 0.0}, {"alpha": 1.0, "beta": 0.0}])
def test_linear_members_of_the_scaling_families(emotions, params):
    """β-scaling with β = 0 and generalized scaling with α = 1, β = 0 are margin rescaling."""
    tr, _ = emotions
    name = "beta" if len(params) == 1 else "generalized"
    est = MultiLabelSVM(surrogate=name, surrogate_params=params, max_epochs=2, random_state=0).fit(
        tr
    )
    ref = MultiLabelSVM(surrogate="margin", max_epochs=2, random_state=0).fit(tr)
    _check(est)
    np.testing.assert_array_equal(est.coef_, ref.coef_)
