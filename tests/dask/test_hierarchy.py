"""HierarchicalSVM through bicrit.dask.fit on a real hierarchy set (Clus HMC church_FUN, a
FunCat tree with multi-label data whose labels often end at internal nodes): every model that
trains on partitions gives the local model (1-slack cutting plane: the same weights), NHSVM3 is
refused with its reason, and the label statistics (virtual leaves, multi-label, node counts)
are those of the whole training set, not of one partition."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import bicrit.dask
from bicrit import HierarchicalSVM
from bicrit.errors import IncompatibleError

dask = pytest.importorskip("dask")

#: 1-slack fits compared round by round with the local ones (no objective or stability stop).
CP = dict(learner="cutting-plane", C=1.0, max_epochs=5, tol=None, n_iter_no_change=None)


@pytest.fixture(scope="module")
def church(data_dir):
    from bicrit.datasets import load

    tr = load("clus_hmc/church_FUN", "train", root=data_dir, impute="mean")
    te = load("clus_hmc/church_FUN", "test", root=data_dir, impute="mean")
    return tr.hierarchy, tr.X[:240], tr.Y[:240], te.X[:200], te.Y[:200]


def _parts(X, Y, bounds):
    return [dask.delayed((X[a:b], list(Y[a:b]))) for a, b in itertools.pairwise(bounds)]


def _rel(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.linalg.norm(a - b) / np.linalg.norm(b))


BOUNDS = [0, 70, 160, 240]


def test_partitions_do_not_share_their_label_statistics(church):
    """The premise of the merge: each partition alone ends labels at other internal nodes (its
    own virtual leaves) than the whole set does, so without the merge they would disagree."""
    from bicrit.hierarchy.shape import LabelShape

    h, _, Y, _, _ = church
    whole = LabelShape.of(h, Y)
    parts = [LabelShape.of(h, Y[a:b]) for a, b in itertools.pairwise(BOUNDS)]
    assert any(p.internal_terminals != whole.internal_terminals for p in parts)
    merged = parts[0].merge(parts[1]).merge(parts[2])
    assert merged.internal_terminals == whole.internal_terminals
    np.testing.assert_array_equal(merged.counts, whole.counts)
    assert merged.n == whole.n and merged.multi == whole.multi


@pytest.mark.parametrize(
    "params",
    [
        dict(model="flat"),
        dict(model="hsvm", multilabel_loss="weighted"),
        dict(model="nhsvm"),
        dict(model="ssvm", alpha_every=2, max_alternations=2),
    ],
    ids=["flat", "hsvm-weighted", "nhsvm", "ssvm"],
)
def test_every_model_with_the_one_slack_learner_equals_the_local_fit(client, church, params):
    h, X, Y, Xt, _ = church
    local = HierarchicalSVM(h, **CP, **params).fit(X, Y)
    model = bicrit.dask.fit(HierarchicalSVM(h, **CP, **params), _parts(X, Y, BOUNDS))
    assert model.multilabel_ is local.multilabel_ is True
    assert model.hierarchy_.n_nodes == local.hierarchy_.n_nodes > h.n_nodes  # virtual leaves
    np.testing.assert_array_equal(model.virtual_parent_, local.virtual_parent_)
    np.testing.assert_allclose(model.alpha_, local.alpha_, rtol=1e-9)  # SSVM: α from the weights
    np.testing.assert_allclose(model.node_loss_weight_, local.node_loss_weight_, rtol=1e-12)
    np.testing.assert_allclose(model.scale_std_, local.scale_std_, rtol=1e-12)
    assert model.n_epochs_ == local.n_epochs_
    assert _rel(model._w, local._w) <= 1e-9
    assert model.history_["phase"].to_list() == local.history_["phase"].to_list()
    np.testing.assert_allclose(
        model.decision_function(Xt), local.decision_function(Xt), rtol=1e-9, atol=1e-9
    )
    # the predictions are the local model's except where its best labels tie (weights equal
    # to 1e-14 may break an exact tie the other way)
    pred, want = model.predict(Xt), local.predict(Xt)
    differ = [
        i for i, (a, b) in enumerate(zip(pred, want, strict=True)) if not np.array_equal(a, b)
    ]
    if differ:
        margins = local.node_scores(Xt[differ])
        for row, i in enumerate(differ):
            flipped = np.setxor1d(pred[i], want[i])
            assert np.all(np.abs(margins[row, flipped]) <= 1e-9), (i, margins[row, flipped])


def test_bcfw_and_sgd_train_hierarchies_on_the_cluster(client, church, tmp_path):
    """NHSVM with learner='auto' (BCFW as CoCoA+ on the cluster) certifies the gap the local
    BCFW certifies, so both are that close to the one optimum: their objectives differ by at most
    the larger gap and their weights by at most √(2·gap) each (strong convexity of ½‖w‖²); HSVM
    with SGD (parameter mixing) trains; the models save and load."""
    h, X, Y, Xt, Yt = church
    params = dict(
        model="nhsvm",
        learner="auto",
        C=1.0,
        max_epochs=200,
        tol=1e-12,  # only the certificate ends the fit
        n_iter_no_change=None,
        random_state=0,
        learner_params={"objective": "exact", "tol": 1e-2},
    )
    local = HierarchicalSVM(h, **params).fit(X, Y)
    model = bicrit.dask.fit(HierarchicalSVM(h, **params), _parts(X, Y, BOUNDS))
    assert model.learner_ == local.learner_ == "bcfw"
    gaps = []
    for m in (local, model):
        assert m.converged_
        last = m.history_.tail(1).to_dicts()[0]
        assert last["gap"] <= 1e-2 * abs(last["objective"])
        gaps.append(last["gap"])
    # each last row certifies the weights the model keeps (P(w) − P* ≤ gap)
    p_local = local.history_["objective"][-1]
    p_model = model.history_["objective"][-1]
    assert abs(p_model - p_local) <= max(gaps) + 1e-9 * abs(p_local)
    bound = np.sqrt(2 * gaps[0]) + np.sqrt(2 * gaps[1])
    assert np.linalg.norm(model._w - local._w) <= bound + 1e-3
    assert model.score(Xt, Yt) >= local.score(Xt, Yt) - 0.05
    back = bicrit.load(model.save(tmp_path / "h.bicrit"))
    pred = model.predict(Xt)
    assert all(np.array_equal(a, b) for a, b in zip(back.predict(Xt), pred, strict=True))

    sgd = dict(model="hsvm", learner="sgd", C=1.0, max_epochs=8, tol=None, n_iter_no_change=None)
    mixed = bicrit.dask.fit(HierarchicalSVM(h, **sgd, random_state=0), _parts(X, Y, BOUNDS))
    alone = HierarchicalSVM(h, **sgd, random_state=0).fit(X, Y)
    obj = mixed.history_["objective"].to_numpy()
    assert obj[-1] < obj[0]
    assert mixed.score(Xt, Yt) >= alone.score(Xt, Yt) - 0.05


def test_models_that_cannot_train_on_partitions_say_why(client, church):
    h, X, Y, _, _ = church
    with pytest.raises(IncompatibleError, match=r"nhsvm3.*ratio.*no partition pass"):
        bicrit.dask.fit(HierarchicalSVM(h, model="nhsvm3"), _parts(X, Y, BOUNDS))
    with pytest.raises(IncompatibleError, match=r"ssvm.*bcfw.*α step"):
        bicrit.dask.fit(HierarchicalSVM(h, model="ssvm", learner="bcfw"), _parts(X, Y, BOUNDS))
