"""synthetic_lshtc generated partition by partition on the workers
(:func:`bicrit.datasets.synthetic_lshtc_parts`): the client holds only the calls, a partition
generated on either worker is the same, the partitions are the one-shot set, and a distributed
fit on them is the local fit on the whole set — also when a worker dies and its partition is
generated again elsewhere."""

from __future__ import annotations

import contextlib
import os
import pickle

import numpy as np
import pytest
import scipy.sparse as sp

import bicrit.dask
from bicrit import HierarchicalSVM
from bicrit.datasets import synthetic_lshtc, synthetic_lshtc_part, synthetic_lshtc_parts

dask = pytest.importorskip("dask")

#: Three partitions of 1,200 documents; partition 1 crosses no block, the set is one block.
KW = dict(n_nodes=60, n=1_200, d=3_000, words_per_doc=20.0, seed=7)

#: 1-slack fits compared round by round with the local one.
CP = dict(
    model="nhsvm",
    learner="cutting-plane",
    C=1.0,
    max_epochs=6,
    tol=None,
    n_iter_no_change=None,
    n_hashed_features=128,
    random_state=0,
)


def _rel(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.linalg.norm(a - b) / np.linalg.norm(b))


def test_the_client_holds_only_the_calls(client):
    parts = synthetic_lshtc_parts(3, **KW)
    sizes = [len(pickle.dumps(dict(p.__dask_graph__()))) for p in parts]
    data = synthetic_lshtc_part(0, 3, **KW)
    held = data.X.data.nbytes + data.X.indices.nbytes
    assert held > 50_000 and max(sizes) < 2_000  # a few hundred bytes of parameters each
    # pure calls: the same partition has the same key (the scheduler can compute it again)
    assert [p.key for p in parts] == [p.key for p in synthetic_lshtc_parts(3, **KW)]
    assert len({p.key for p in parts}) == 3


def test_partitions_generated_on_either_worker_are_the_one_shot_set(client):
    workers = sorted(client.scheduler_info()["workers"])
    whole = synthetic_lshtc(**KW)
    start = 0
    for i in range(3):
        got = [
            client.submit(
                synthetic_lshtc_part,
                i,
                3,
                **KW,
                workers=[w],
                allow_other_workers=False,
                pure=False,
            ).result()
            for w in workers
        ]
        a, b = got
        assert (a.X != b.X).nnz == 0 and np.array_equal(a.X.indptr, b.X.indptr)
        assert np.array_equal(a.leaf, b.leaf)
        stop = start + a.n_samples
        want = whole.X[start:stop]
        assert np.array_equal(a.X.indptr, want.indptr)
        assert np.array_equal(a.X.indices, want.indices)
        assert np.array_equal(a.X.data, want.data)
        assert np.array_equal(a.leaf, whole.leaf[start:stop])
        assert a.hierarchy.get_config() == whole.hierarchy.get_config()
        assert a.n_features == whole.n_features
        start = stop
    assert start == KW["n"]


def test_a_fit_on_generated_partitions_is_the_local_fit(client):
    local = HierarchicalSVM(**CP).fit(synthetic_lshtc(**KW))
    model = bicrit.dask.fit(HierarchicalSVM(**CP), synthetic_lshtc_parts(3, **KW), client=client)
    assert model.n_epochs_ == local.n_epochs_ == 6
    assert model.history_["partitions"][-1] == 3
    assert _rel(model.coef_, local.coef_) <= 1e-9
    X = sp.csr_array(synthetic_lshtc(**{**KW, "seed": 8}).X)
    assert all(
        np.array_equal(p, q) for p, q in zip(model.predict(X), local.predict(X), strict=True)
    )


def test_a_partition_lost_with_its_worker_is_generated_again(wait_running, client, monkeypatch):
    """The worker of partition 0 dies after the third round: the partition is generated again
    on a live worker from its call, and the fit ends at the local fit's weights."""
    from bicrit.dask import runners

    local = HierarchicalSVM(**CP).fit(synthetic_lshtc(**KW))
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
    model = bicrit.dask.fit(HierarchicalSVM(**CP), synthetic_lshtc_parts(3, **KW), client=client)
    assert model.history_["rebuilt"].sum() >= 1
    assert model.n_epochs_ == 6
    assert _rel(model.coef_, local.coef_) <= 1e-9
    wait_running(client, 2)  # the nanny restarts it for the next tests
