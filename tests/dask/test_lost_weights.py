"""A worker killed after a round's weights were sent to it and before its round ran: on a
one-worker cluster the weights die with their only holder, so the round's tasks are cancelled
(their input is gone), not failed. The round sends the weights again to the restarted worker,
rebuilds the partitions there and the fit goes on to the local fit's weights — for the round's
weights (1-slack, BCFW) and for the exact pass's (``evaluate``). The same on the two-worker cluster
with the weights on the killed worker only. (Before the fix the round raised
``FuturesCancelledError``.)"""

from __future__ import annotations

import contextlib
import itertools
import os

import numpy as np
import pytest

import bicrit
import bicrit.dask

dask = pytest.importorskip("dask")
distributed = pytest.importorskip("distributed")


@pytest.fixture(scope="module")
def lone():
    """A one-worker LocalCluster whose nanny restarts the worker when it dies."""
    cluster = distributed.LocalCluster(
        n_workers=1,
        threads_per_worker=1,
        processes=True,
        dashboard_address=None,
        worker_dashboard_address=None,
    )
    client = distributed.Client(cluster)
    yield client
    client.close()
    with contextlib.suppress(Exception):  # a worker still restarting must not hang the suite
        cluster.close(timeout=60)


def _data(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 6))
    W = np.random.default_rng(99).normal(size=(6, 4))
    return X, np.argmax(X @ W + 0.5 * rng.normal(size=(n, 4)), axis=1)


def _parts(X, Y, bounds):
    return [dask.delayed((X[a:b], Y[a:b])) for a, b in itertools.pairwise(bounds)]


CP = dict(structure="multiclass", learner="cutting-plane", C=0.1, tol=None, n_iter_no_change=None)


def _kill_after_broadcast(monkeypatch, client, at: int) -> dict[str, int]:
    """Kills the only worker right after the ``at``-th broadcast of weights has reached it."""
    from bicrit.dask import cluster

    broadcast = cluster.Shards.broadcast
    calls = {"n": 0}

    def killing(self, w):
        wf = broadcast(self, w)
        calls["n"] += 1
        if calls["n"] == at:
            with contextlib.suppress(Exception):  # the worker dies before it answers
                client.run(os._exit, 1)
        return wf

    monkeypatch.setattr(cluster.Shards, "broadcast", killing)
    return calls


def _scatter_to_the_victim(monkeypatch, client, at: int) -> dict[str, int]:
    """The ``at``-th round's weights are sent to the first worker only (as when a worker
    joined after the broadcast, or the others lost their copy), and that worker is killed."""
    from bicrit.dask import cluster

    broadcast = cluster.Shards.broadcast
    calls = {"n": 0}

    def only_one(self, w):
        calls["n"] += 1
        if calls["n"] != at:
            return broadcast(self, w)
        victim = sorted(client.scheduler_info()["workers"])[0]
        wf = client.scatter(w, workers=[victim], hash=False)
        with contextlib.suppress(Exception):  # the worker dies before it answers
            client.run(os._exit, 1, workers=[victim])
        return wf

    monkeypatch.setattr(cluster.Shards, "broadcast", only_one)
    return calls


@pytest.mark.parametrize("repeat", range(3))
def test_weights_lost_on_a_two_worker_cluster_are_sent_again(
    wait_running, client, monkeypatch, repeat
):
    """Two workers, the round's weights on the first only, which dies: the tasks of the
    partitions on the survivor are cancelled (their input is gone) while their worker lives —
    they run again with the weights sent again; the dead worker's partition is rebuilt on the
    survivor. The fit ends at the local fit's weights."""
    X, Y = _data(300, 10 + repeat)
    local = bicrit.StructuredSVM(**CP, max_epochs=8).fit(X, Y)
    calls = _scatter_to_the_victim(monkeypatch, client, at=4)
    model = bicrit.dask.fit(
        bicrit.StructuredSVM(**CP, max_epochs=8), _parts(X, Y, [0, 100, 200, 300]), client=client
    )
    assert calls["n"] >= 9  # the fourth round's weights were sent again
    assert model.n_epochs_ == 8
    assert model.history_["rebuilt"].sum() >= 1
    rel = np.linalg.norm(model.coef_ - local.coef_) / np.linalg.norm(local.coef_)
    assert rel <= 1e-9
    wait_running(client, 2)


def test_weights_lost_with_their_only_holder_are_sent_again(wait_running, lone, monkeypatch):
    """One worker, killed after the weights reached it: the round waits for the nanny's new
    worker, rebuilds both partitions there and sends the weights again."""
    X, Y = _data(300, 0)
    local = bicrit.StructuredSVM(**CP, max_epochs=8).fit(X, Y)
    calls = _kill_after_broadcast(monkeypatch, lone, at=4)
    model = bicrit.dask.fit(
        bicrit.StructuredSVM(**CP, max_epochs=8), _parts(X, Y, [0, 150, 300]), client=lone
    )
    assert calls["n"] >= 9  # the fourth round's weights were sent twice
    assert model.n_epochs_ == 8
    assert model.history_["rebuilt"].sum() >= 1
    rel = np.linalg.norm(model.coef_ - local.coef_) / np.linalg.norm(local.coef_)
    assert rel <= 1e-9
    wait_running(lone, 1)


def test_lost_weights_of_the_exact_pass_are_sent_again(wait_running, client, monkeypatch):
    """BCFW's certificate (an exact pass at the round's start weights) with those weights on
    the killed worker only: the fit still ends with every round."""
    X, Y = _data(300, 5)
    params = dict(structure="multiclass", learner="bcfw", C=0.1, tol=None, n_iter_no_change=None)
    _scatter_to_the_victim(monkeypatch, client, at=3)
    model = bicrit.dask.fit(
        bicrit.StructuredSVM(**params, max_epochs=5),
        _parts(X, Y, [0, 100, 200, 300]),
        client=client,
    )
    assert model.n_epochs_ == 5
    assert model.history_["rebuilt"].sum() >= 1
    wait_running(client, 2)
