"""Both cores, same model (issue 16, item 6): on real data every learner gives bit-identical
weights and epoch statistics at ``n_jobs=1`` and ``n_jobs=2`` — BCFW with its default parallel
mini-batches, SGD with its parallel blocks, both cutting planes — and at ``n_jobs=2`` the
expensive pass runs on the learner's pool (its threads do work)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from bicrit import MultiLabelSVM, SequenceSVM, datasets
from bicrit.learners import Learner
from bicrit.learners.fit import Training

LEARNERS = ["bcfw", "sgd", "cutting-plane", "cutting-plane-n"]
#: statistics that measure time (they differ between runs by nature)
TIMES = {"time", "cpu"}


def _yeast(root: Path) -> Any:
    return datasets.load("yeast", "train", root=root)


def _esp(root: Path, n: int = 300) -> Any:
    d = datasets.load("conll2002/esp", "train", root=root)
    return d.subset(range(n))


def _fit(est: Any, data: Any) -> tuple[np.ndarray, list[dict[str, Any]]]:
    est.fit(data)
    rows = [{k: v for k, v in r.items() if k not in TIMES} for r in est.history_.to_dicts()]
    return np.asarray(est.coef_, dtype=np.float64), rows


@pytest.mark.parametrize("learner", LEARNERS)
def test_yeast_fit_is_the_same_at_one_and_two_threads(data_dir: Path, learner: str) -> None:
    data = _yeast(data_dir)
    if learner == "cutting-plane-n":
        data = data.subset(range(300))  # one dense QP in up to n constraints per pass
    fits = [
        _fit(MultiLabelSVM(learner=learner, max_epochs=3, tol=None, n_jobs=n, random_state=5), data)
        for n in (1, 2)
    ]
    (w1, h1), (w2, h2) = fits
    assert np.any(w1 != 0)
    assert np.array_equal(w1, w2)
    assert h1 == h2


@pytest.mark.parametrize("learner", LEARNERS)
def test_conll_fit_is_the_same_at_one_and_two_threads(data_dir: Path, learner: str) -> None:
    data = _esp(data_dir)
    fits = [
        _fit(SequenceSVM(learner=learner, max_epochs=3, tol=None, n_jobs=n, random_state=5), data)
        for n in (1, 2)
    ]
    (w1, h1), (w2, h2) = fits
    assert np.any(w1 != 0)
    assert np.array_equal(w1, w2)
    assert h1 == h2


def test_bcfw_mini_batch_is_the_default_and_sequential_bcfw_stays_available(data_dir: Path) -> None:
    """The default mini-batch is 'auto' (2 for 300 instances: 2^⌊log2(√300/8)⌋), ``block_size=1``
    sequential BCFW; the two are different runs of the same seed, each the same at one and two
    threads."""
    data = _esp(data_dir, 300)

    def fit(b: Any, n_jobs: int) -> np.ndarray:
        params = {} if b is None else {"block_size": b}
        est = SequenceSVM(
            learner="bcfw",
            learner_params=params,
            max_epochs=2,
            tol=None,
            n_jobs=n_jobs,
            random_state=2,
        )
        return _fit(est, data)[0]

    w = {(b, n): fit(b, n) for b in (None, 1, 2) for n in (1, 2)}
    for b in (None, 1, 2):
        assert np.array_equal(w[b, 1], w[b, 2])
    assert np.array_equal(w[None, 1], w[2, 1])
    assert not np.array_equal(w[1, 1], w[2, 1])
    assert Learner("bcfw").params["block_size"] == "auto"


def _pool_cpu() -> float:
    """CPU seconds of this process's learner pool threads (named ``bicrit-learner-*``)."""
    total = 0.0
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/comm") as fh:
                if not fh.read().startswith("bicrit-learner"):
                    continue
            with open(f"/proc/self/task/{tid}/schedstat") as fh:
                total += int(fh.read().split()[0]) / 1e9
        except OSError:
            continue
    return total


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="needs /proc (Linux)")
@pytest.mark.parametrize("learner", LEARNERS)
def test_every_learner_runs_its_epoch_on_the_pool(data_dir: Path, learner: str) -> None:
    """At ``n_jobs=2`` an epoch runs on the learner's pool (item 2: the epoch on one of its
    threads, which shares each parallel pass with the other). 300 sentences: BCFW's mini-batches
    ('auto') hold 2."""
    est = SequenceSVM(learner=learner)
    structure, X, Y = est._prepared(_esp(data_dir, 300), None, False)
    Xn, Yn = structure.native_inputs(X, Y)
    run = Training(structure, Xn, Yn, Learner(learner, n_jobs=2)).runner("margin", "convex-hull")
    run.epoch()  # the pool's thread starts
    before = _pool_cpu()
    run.epoch()
    assert _pool_cpu() > before


def test_ctrl_c_at_two_threads_rolls_the_epoch_back(ctrl_c) -> None:
    """Ctrl-C (``_thread.interrupt_main``) while epochs run at ``n_jobs=2``: the epoch runs on a
    thread of the pool and the calling (main) thread, where Python runs signal handlers, checks
    for signals while it waits. The trainer raises KeyboardInterrupt and holds exactly the state
    of its last finished epoch (equal to a one-thread trainer that ran that many epochs), so
    training can go on."""
    import _thread
    import threading
    import time

    from bicrit import StructuredSVM

    rng = np.random.default_rng(0)
    X, y = rng.standard_normal((40_000, 20)), rng.integers(0, 10, 40_000)
    structure, Xp, Yp = StructuredSVM(structure="multiclass")._prepared(X, y, False)
    Xn, Yn = structure.native_inputs(Xp, Yp)

    def run(n_jobs: int) -> Any:
        learner = Learner("bcfw", n_jobs=n_jobs, random_state=0)
        return Training(structure, Xn, Yn, learner).runner("margin", "convex-hull")

    t = run(2)
    t.epoch()
    timer = threading.Timer(0.05, _thread.interrupt_main)
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            deadline = time.monotonic() + 120.0  # a lost interrupt fails, it does not hang
            while time.monotonic() < deadline:
                t.epoch()
    finally:
        timer.cancel()
    done = t.n_epochs
    ref = run(1)
    for _ in range(done):
        ref.epoch()
    assert done >= 1
    assert np.array_equal(np.asarray(t.weights(True)), np.asarray(ref.weights(True)))
    assert t.epoch()["epoch"] == done + 1
