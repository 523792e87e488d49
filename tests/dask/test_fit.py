"""bicrit.dask on a two-worker LocalCluster: the distributed learners against the local ones on
the same data, the estimator contract of the result, bad partitions and a worker killed mid-fit."""

from __future__ import annotations

import contextlib
import itertools
import os
import pickle

import numpy as np
import pytest
from sklearn.base import clone

import bicrit
import bicrit.dask
from bicrit.errors import IncompatibleError, InvalidInputError

dask = pytest.importorskip("dask")


def _data(n: int, seed: int, noise: float = 0.5) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 6))
    W = np.random.default_rng(99).normal(size=(6, 4))
    Y = np.argmax(X @ W + noise * rng.normal(size=(n, 4)), axis=1)
    return X, Y


def _parts(X: np.ndarray, Y: np.ndarray, bounds: list[int]) -> list:
    return [dask.delayed((X[a:b], Y[a:b])) for a, b in itertools.pairwise(bounds)]


#: Local fits compared epoch by epoch with distributed ones stop by max_epochs only (the
#: stability rule, n_iter_no_change, decodes a training probe a distributed fit does not have).
CP = dict(
    structure="multiclass",
    learner="cutting-plane",
    max_epochs=15,
    tol=None,
    n_iter_no_change=None,
    C=0.1,
)


def _rel(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.linalg.norm(a - b) / np.linalg.norm(b))


@pytest.mark.parametrize("bounds", [[0, 300], [0, 140, 300], [0, 90, 200, 300], [0, 0, 150, 300]])
def test_one_slack_weights_equal_local(client, bounds):
    """The 1-slack rounds are the local epochs: same weights (sums reordered) for 1, 2, 3
    partitions and with an empty partition."""
    X, Y = _data(300, 0)
    local = bicrit.StructuredSVM(**CP).fit(X, Y)
    model = bicrit.dask.fit(bicrit.StructuredSVM(**CP), _parts(X, Y, bounds), client=client)
    assert model.n_epochs_ == local.n_epochs_ == 15
    assert _rel(model.coef_, local.coef_) <= 1e-9
    h = model.history_
    assert h["partitions"][-1] == sum(1 for a, b in itertools.pairwise(bounds) if b > a)
    # only weights go out: O(d) bytes per worker whatever the partition size
    assert h["bytes_sent"][-1] == model._w.nbytes * h["partitions"][-1]
    # every round has its partitions' CPU seconds, measured on the workers (through the tree of
    # sums for 3 partitions)
    assert (h["worker_cpu"].to_numpy() > 0).all()
    if h["partitions"][-1] > 1:  # the sum of the partitions' CPU seconds exceeds the largest
        assert (h["worker_cpu_total"] > h["worker_cpu"]).all()
    else:
        assert (h["worker_cpu_total"] == h["worker_cpu"]).all()
    np.testing.assert_allclose(h["objective"].to_numpy(), local.history_["objective"].to_numpy())


def test_bcfw_reaches_the_same_certified_gap(client):
    """CoCoA-style BCFW certifies the gap the local BCFW certifies and predicts like it."""
    X, Y = _data(400, 0, noise=0.2)
    Xt, _ = _data(400, 1, noise=0.2)
    params = dict(
        structure="multiclass",
        learner="bcfw",
        C=0.1,
        max_epochs=300,
        tol=1e-12,  # no stopping on the objective: only the certificate ends the fit
        n_iter_no_change=None,
        random_state=0,
        learner_params={"objective": "exact", "tol": 2e-3},
    )
    local = bicrit.StructuredSVM(**params).fit(X, Y)
    model = bicrit.dask.fit(bicrit.StructuredSVM(**params), _parts(X, Y, [0, 200, 400]))
    for m in (local, model):
        assert m.converged_
        h = m.history_
        assert h["gap"][-1] <= 2e-3 * abs(h["objective"][-1])
    agree = np.mean(model.predict(Xt) == local.predict(Xt))
    assert agree >= 0.99, agree


def test_sgd_parameter_mixing_trains(client):
    """Parameter mixing lowers the objective like local SGD and predicts like it."""
    X, Y = _data(400, 0, noise=0.2)
    Xt, Yt = _data(400, 1, noise=0.2)
    params = dict(
        structure="multiclass", learner="sgd", C=0.1, max_epochs=15, tol=None, n_iter_no_change=None
    )
    local = bicrit.StructuredSVM(**params, random_state=0).fit(X, Y)
    model = bicrit.dask.fit(
        bicrit.StructuredSVM(**params, random_state=0), _parts(X, Y, [0, 200, 400])
    )
    h = model.history_["objective"].to_numpy()
    assert h[-1] < 0.5 * h[0]
    assert model.score(Xt, Yt) >= local.score(Xt, Yt) - 0.03


def _conll_slice(path: str, start: int, stop: int):
    from bicrit.datasets import read_conll

    return read_conll(path).to_iob2().subset(range(start, stop))


def test_sequences_from_files_read_on_the_workers(client):
    """SequenceSVM on CoNLL-2002 partitions read on the workers: the local 1-slack weights."""
    from bicrit.datasets import find_data_root, read_conll

    root = find_data_root()
    if root is None or not (root / "conll2002" / "esp.train").is_file():
        pytest.skip("CoNLL-2002 not found under BICRIT_DATA")
    path = str(root / "conll2002" / "esp.train")
    params = dict(learner="cutting-plane", max_epochs=4, tol=None, C=0.1)
    local = bicrit.SequenceSVM(**params).fit(read_conll(path).to_iob2().subset(range(300)))
    parts = [dask.delayed(_conll_slice)(path, a, b) for a, b in ((0, 170), (170, 300))]
    model = bicrit.dask.fit(bicrit.SequenceSVM(**params), parts)
    assert model.tags_ == local.tags_
    assert _rel(model._w, local._w) <= 1e-9


def test_model_is_an_ordinary_estimator(client, tmp_path):
    X, Y = _data(200, 0)
    model = bicrit.dask.fit(bicrit.StructuredSVM(**CP), _parts(X, Y, [0, 100, 200]))
    path = model.save(tmp_path / "m.bicrit")
    back = bicrit.load(path)
    np.testing.assert_array_equal(back.coef_, model.coef_)
    np.testing.assert_array_equal(back.predict(X), model.predict(X))
    again = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(again.predict(X), model.predict(X))
    fresh = clone(model)
    assert not hasattr(fresh, "coef_") and fresh.get_params() == model.get_params()
    preds = bicrit.dask.predict(model, _parts(X, Y, [0, 100, 200])).compute()
    np.testing.assert_array_equal(np.asarray(preds), model.predict(X))


def test_label_spaces_that_disagree_are_refused(client):
    X, Y = _data(200, 0)
    Y2 = Y.copy()
    Y2[100:][Y2[100:] == 3] = 2  # the second partition has no class 3
    with pytest.raises(InvalidInputError, match=r"partition 0 .*partition 1.* label spaces"):
        bicrit.dask.fit(bicrit.StructuredSVM(**CP), _parts(X, Y2, [0, 100, 200]))


def test_malformed_partition_is_named(client, tmp_path):
    good = tmp_path / "good.conll"
    good.write_text("Juan B-PER\nvive O\n\nen O\nMadrid B-LOC\n")
    bad = tmp_path / "bad.conll"
    bad.write_text("Juan B-PER\nvive O\n\nlonely\n")
    with pytest.raises(bicrit.dask.PartitionError, match=r"partition 1 \(.*bad.conll\).*line 4"):
        bicrit.dask.fit(bicrit.SequenceSVM(learner="cutting-plane"), [str(good), str(bad)])


def test_worker_killed_mid_fit_does_not_lose_the_fit(client, monkeypatch):
    """A worker dies after the third round: its partition is rebuilt from its delayed object on
    a live worker and the fit continues to the same weights."""
    from bicrit.dask import runners

    X, Y = _data(300, 0)
    local = bicrit.StructuredSVM(**CP).fit(X, Y)
    epoch = runners.CutRunner.epoch
    calls = {"n": 0}

    def killing(self):
        calls["n"] += 1
        if calls["n"] == 4:
            victim = self.shards.live[0].address
            with contextlib.suppress(Exception):  # the worker dies before it answers
                client.run(os._exit, 1, workers=[victim])
        return epoch(self)

    monkeypatch.setattr(runners.CutRunner, "epoch", killing)
    model = bicrit.dask.fit(bicrit.StructuredSVM(**CP), _parts(X, Y, [0, 150, 300]))
    assert model.history_["rebuilt"].sum() >= 1
    assert model.n_epochs_ == 15
    assert _rel(model.coef_, local.coef_) <= 1e-9


def test_many_labels_learn_one_graph_and_one_scaling_from_every_partition(client, data_dir):
    """birds (19 labels > 16: edges='auto' learns a Chow–Liu tree; dense features: scale=True
    standardises them): each partition's label counts and feature moments are merged, so the
    distributed fit learns the tree and the scaling of the whole training set — and, with the
    1-slack learner, the local weights."""
    d = bicrit.datasets.load("birds", "train", root=data_dir)
    X, Y = np.asarray(d.X.toarray() if hasattr(d.X, "toarray") else d.X), np.asarray(d.Y)
    params = dict(learner="cutting-plane", max_epochs=6, tol=None, n_iter_no_change=None, C=0.1)
    local = bicrit.MultiLabelSVM(**params).fit(X, Y)
    assert local.edges_kind_ == "tree"
    parts = _parts(X, Y, [0, 100, 210, len(Y)])
    model = bicrit.dask.fit(bicrit.MultiLabelSVM(**params), parts, client=client)
    np.testing.assert_array_equal(model.structure_.edges_, local.structure_.edges_)
    assert model.edges_kind_ == local.edges_kind_ == "tree"
    assert model.history_["edges"][-1] == local.history_["edges"][-1]
    np.testing.assert_allclose(model.scale_mean_, local.scale_mean_, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(model.scale_std_, local.scale_std_, rtol=1e-12)
    assert _rel(model.coef_, local.coef_) <= 1e-6
    # one partition alone learns its own tree, which differs: the merge is what makes them agree
    alone = bicrit.MultiLabelSVM(**params).fit(X[:100], Y[:100])
    assert not np.array_equal(alone.structure_.edges_, local.structure_.edges_)


def test_warm_start_continues_from_the_fitted_weights(client):
    """warm_start=True continues a fitted model on the partitions from its weights, as a local
    fit continues on other data (a new 1-slack learner from the previous weights): the same
    weights, the history going on; BCFW, which cannot start from given weights, says so."""
    X, Y = _data(300, 0)
    params = dict(CP, max_epochs=4, warm_start=True)
    local = bicrit.StructuredSVM(**params).fit(X[:150], Y[:150])
    local.fit(X, Y)  # other data: starts from the previous weights
    model = bicrit.dask.fit(bicrit.StructuredSVM(**params), _parts(X, Y, [0, 150]))
    first = model.coef_.copy()
    bicrit.dask.fit(model, _parts(X, Y, [0, 100, 300]))
    assert model.n_epochs_ == 8 and len(model.history_) == 8
    assert model.history_["epoch"].to_list() == list(range(1, 9))
    assert not np.allclose(model.coef_, first)
    assert _rel(model.coef_, local.coef_) <= 1e-9
    bcfw = bicrit.StructuredSVM(**{**params, "learner": "bcfw"})
    bicrit.dask.fit(bcfw, _parts(X, Y, [0, 150, 300]))
    with pytest.raises(IncompatibleError, match="starts from w = 0"):
        bicrit.dask.fit(bcfw, _parts(X, Y, [0, 150, 300]))
    assert bcfw.n_epochs_ == 4  # the fitted model is kept


@pytest.mark.parametrize("aggregation", ["add", "average"])
def test_both_cocoa_aggregations_are_safe(client, aggregation):
    """Adding with σ' = K (CoCoA+) and averaging (CoCoA) never decrease the dual (the
    certificate's lower bound: objective − gap), round after round, and both certify the gap."""
    X, Y = _data(400, 0, noise=0.2)
    params = dict(
        structure="multiclass",
        learner="bcfw",
        C=0.1,
        max_epochs=100,
        tol=1e-12,
        n_iter_no_change=None,
        random_state=0,
        learner_params={"tol": 1e-2},
    )
    model = bicrit.dask.fit(
        bicrit.StructuredSVM(**params),
        _parts(X, Y, [0, 100, 250, 400]),
        aggregation=aggregation,
    )
    assert model.converged_
    dual = model.history_["dual"].drop_nulls().to_numpy()
    assert len(dual) == model.n_epochs_ and dual[0] == 0.0  # every round certifies; α = 0 first
    assert np.all(np.diff(dual) >= -1e-9 * np.abs(dual[1:]))
    with pytest.raises(bicrit.errors.InvalidParameterError, match="aggregation"):
        bicrit.dask.fit(bicrit.StructuredSVM(**params), _parts(X, Y, [0, 400]), aggregation="sum")


def test_what_does_not_run_on_a_cluster_says_why(client):
    """C='auto' (its validation key does not add up over partitions; refused before any
    partition is read) and the cutting-plane-n learner (before the first round) say why."""
    from bicrit.errors import InvalidParameterError

    X, Y = _data(100, 0)
    with pytest.raises(InvalidParameterError, match=r"C=\"auto\" does not run on a cluster.*C_"):
        bicrit.dask.fit(bicrit.StructuredSVM(**{**CP, "C": "auto"}), _parts(X, Y, [0, 100]))
    est = bicrit.StructuredSVM(**{**CP, "learner": "cutting-plane-n"})
    with pytest.raises(IncompatibleError, match=r"cutting-plane-n.*does not train on partitions"):
        bicrit.dask.fit(est, _parts(X, Y, [0, 100]))
    assert not hasattr(est, "coef_")
    est = bicrit.StructuredSVM(**{**CP, "learner": "bcfw", "slack_norm": 2})
    with pytest.raises(IncompatibleError, match=r"slack_norm=2.*does not train on partitions"):
        bicrit.dask.fit(est, _parts(X, Y, [0, 100]))
    assert not hasattr(est, "coef_")


def test_a_finished_fit_leaves_no_partition_on_the_cluster(client):
    """After the fit the data computed from the delayed sources is released at once (not when
    the garbage collector finds the cycle that holds the fit's objects) and no worker keeps a
    partition."""
    import gc

    from bicrit.dask import worker

    X, Y = _data(300, 0)
    parts = _parts(X, Y, [0, 100, 200, 300])
    gc.disable()  # what the fit releases itself, not what a collection would
    try:
        bicrit.dask.fit(bicrit.StructuredSVM(**CP), parts, client=client)
        assert not {p.key for p in parts} & set(client.futures)
    finally:
        gc.enable()
    assert set(client.run(lambda: len(worker._REGISTRY)).values()) == {0}
