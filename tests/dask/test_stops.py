"""How a distributed fit ends other than by its rounds: a partition lost for good
(:class:`ClusterLostError`, the finished rounds kept), Ctrl-C on the client (a real SIGINT to
a process running a fit), and the stability stop (``n_iter_no_change``), the local fits'
default."""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import bicrit
import bicrit.dask

dask = pytest.importorskip("dask")
distributed = pytest.importorskip("distributed")


def _data(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 6))
    W = np.random.default_rng(99).normal(size=(6, 4))
    return X, np.argmax(X @ W + 0.5 * rng.normal(size=(n, 4)), axis=1)


CP = dict(structure="multiclass", learner="cutting-plane", C=0.1, tol=None, n_iter_no_change=None)


def test_a_partition_lost_for_good_keeps_the_last_finished_round(wait_running, client, monkeypatch):
    """Partition 1 is a future scattered to one worker (no graph to recompute it from); that
    worker is killed after the third round: the partition cannot be rebuilt, the fit raises
    ClusterLostError naming it, and the estimator is left fitted with the three finished rounds
    — the local fit's weights after three epochs."""
    from bicrit.dask import runners

    X, Y = _data(300, 0)
    workers = sorted(client.scheduler_info()["workers"])
    kept = dask.delayed((X[:150], Y[:150]))
    lost = client.scatter((X[150:], Y[150:]), workers=[workers[1]])
    epoch = runners.CutRunner.epoch
    calls = {"n": 0}

    def killing(self):
        calls["n"] += 1
        if calls["n"] == 4:
            holder = next(s.address for s in self.shards.live if s.index == 1)
            with contextlib.suppress(Exception):  # the worker dies before it answers
                client.run(os._exit, 1, workers=[holder])
        return epoch(self)

    monkeypatch.setattr(runners.CutRunner, "epoch", killing)
    est = bicrit.StructuredSVM(**CP, max_epochs=10)
    lost_error = r"partition 1.*could not be rebuilt"
    with pytest.raises(bicrit.dask.ClusterLostError, match=lost_error) as e:
        bicrit.dask.fit(est, [kept, lost], client=client)
    assert "keeps the model of the last finished round (3 rounds)" in str(e.value)
    assert e.value.estimator is est
    assert est.n_epochs_ == 3 and len(est.history_) == 3
    assert not est.converged_
    local = bicrit.StructuredSVM(**CP, max_epochs=3).fit(X, Y)
    np.testing.assert_allclose(est.coef_, local.coef_, rtol=1e-9, atol=1e-12)
    np.testing.assert_array_equal(est.predict(X), local.predict(X))
    wait_running(client, 2)  # the nanny restarts it for the next tests


def test_a_loss_before_any_round_leaves_nothing(client):
    """A future whose data is gone before the fit starts: the fit fails before any round and the
    estimator stays unfitted."""
    X, Y = _data(100, 0)
    gone = client.scatter((X, Y))
    client.cancel(gone)
    est = bicrit.StructuredSVM(**CP, max_epochs=3)
    with pytest.raises(bicrit.dask.PartitionError, match=r"partition 0: its source is gone"):
        bicrit.dask.fit(est, [gone], client=client)
    assert not hasattr(est, "coef_")


SCRIPT = textwrap.dedent(
    """
    import json, sys, warnings
    import numpy as np, dask
    from distributed import Client, LocalCluster
    import bicrit, bicrit.dask

    if __name__ == "__main__":
        rng = np.random.default_rng(0)
        X = rng.normal(size=(2000, 20))
        Y = np.argmax(X @ np.random.default_rng(99).normal(size=(20, 12)), axis=1)
        params = dict(structure="multiclass", learner="cutting-plane", C=10.0, tol=None,
                      n_iter_no_change=None, max_epochs=100000)
        with LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=None) as cluster, \\
                Client(cluster) as client:
            parts = [dask.delayed((X[:1000], Y[:1000])), dask.delayed((X[1000:], Y[1000:]))]
            def said(row):
                print("round", row["epoch"], flush=True)
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                model = bicrit.dask.fit(bicrit.StructuredSVM(**params), parts, callback=said)
            local = bicrit.StructuredSVM(**{**params, "max_epochs": model.n_epochs_}).fit(X, Y)
            rel = float(np.linalg.norm(model._w - local._w) / np.linalg.norm(local._w))
            print(json.dumps({
                "interrupted": model.interrupted_, "epochs": model.n_epochs_,
                "rows": len(model.history_), "rel": rel,
                "warnings": [type(w.message).__name__ for w in caught],
            }), flush=True)
    """
)


def test_ctrl_c_on_the_client_keeps_the_finished_rounds(tmp_path):
    """A real SIGINT to a process running a distributed fit (its own LocalCluster): the fit
    stops, keeps its finished rounds (the local fit's weights after as many epochs) and says
    so, and the process goes on to use the model."""
    script = tmp_path / "fit.py"
    script.write_text(SCRIPT)
    proc = subprocess.Popen(
        [sys.executable, str(script)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # Ctrl-C as a terminal delivers it, even when the tests run in a background job
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    assert proc.stdout is not None
    try:
        for line in proc.stdout:
            if line.startswith("round 3"):
                break
        else:
            pytest.fail(f"the fit printed no third round: {proc.stderr.read()}")  # type: ignore[union-attr]
        proc.send_signal(signal.SIGINT)  # the client process only, as a terminal's Ctrl-C would
        out, err = proc.communicate(timeout=240)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    result = json.loads(out.strip().splitlines()[-1])
    assert result["interrupted"] is True
    assert result["epochs"] >= 3 and result["rows"] == result["epochs"]
    assert result["epochs"] < 1000
    assert result["rel"] <= 1e-9
    assert "FitInterruptedWarning" in result["warnings"]
    assert "Traceback" not in err


def test_the_stability_stop_applies_to_distributed_fits(client):
    """The default n_iter_no_change=3 ends a distributed fit once a probe of training instances
    (drawn from the partitions) stops changing, as it ends the local fit; the history has the
    share that changed."""
    X, Y = _data(600, 0)
    params = dict(structure="multiclass", learner="sgd", C=0.1, tol=None, max_epochs=200)
    parts = [dask.delayed((X[a:b], Y[a:b])) for a, b in itertools.pairwise([0, 250, 600])]
    model = bicrit.dask.fit(bicrit.StructuredSVM(**params, random_state=0), parts, client=client)
    local = bicrit.StructuredSVM(**params, random_state=0).fit(X, Y)
    assert local.n_epochs_ < 200  # the premise: the rule ends the local fit early
    assert model.n_epochs_ < 200
    # the probe's mean task loss is every round's training task loss, as in local fits
    assert model.history_["task_loss"].null_count() == 0
    changed = model.history_["changed"].drop_nulls().to_numpy()
    assert len(changed) == model.n_epochs_ - 1
    assert np.all(changed[-3:] <= 0.01)
    off = bicrit.dask.fit(
        bicrit.StructuredSVM(**{**params, "max_epochs": 20}, n_iter_no_change=None, random_state=0),
        parts,
        client=client,
    )
    assert off.n_epochs_ == 20 and "changed" not in off.history_.columns


def test_ctrl_c_is_recorded_during_a_round_and_raised_at_its_wait():
    """A SIGINT while a distributed fit runs is recorded, not raised inside distributed's own
    calls (whose cancel callback then logs a NameError traceback); the previous handler is
    back afterwards."""
    from bicrit.dask.cluster import deferred_sigint

    before = signal.getsignal(signal.SIGINT)
    with deferred_sigint() as pressed:
        assert not pressed()
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.05)  # the handler runs here, and raises nothing
        assert pressed()
    assert signal.getsignal(signal.SIGINT) is before
