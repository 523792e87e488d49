"""NHSVM3 training loop: the old numpy mini-batch loop (``tests/hierarchy/nhsvm3_reference.py``,
dense M × d updates around the native ratio oracle) against the native learner
(``rust/bicrit-hierarchy/src/nhsvm3.rs``: lazy scaling and averaging, sparse updates, GIL
released), same α, C, batch size and number of epochs, one thread each.

Cases (group ``nhsvm3-loop-<case>-b<batch>``):

* ``unbalanced``: the thesis's unbalanced synthetic set (depth 10, 21 nodes, d = 1,000, dense),
  train split of n = 2,000;
* ``lshtc``: a small LSHTC-like problem (200 nodes, d = 5,000 sparse, 2,000 documents).

Both loops get ``X`` as ``HierarchicalSVM.fit`` hands it over (CSR); the native time includes
converting it to the native CSR tuple and building the trainer.
``python benches/hierarchy/bench_nhsvm3.py`` prints CPU seconds (``time.process_time``, so that
other jobs on the machine do not count), the ratio reference / native, and the test accuracy of
both models (the orders differ — numpy's permutation against SplitMix64 — so the models are
comparable, not identical). ``pytest benches/hierarchy/bench_nhsvm3.py --benchmark-enable``
times the same runs.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bicrit import _native
from bicrit.datasets import synthetic_hierarchy, synthetic_lshtc
from bicrit.hierarchy.estimator import HierarchicalSVM
from tests.hierarchy.nhsvm3_reference import reference_nhsvm3

EPOCHS = 2
C = 10.0


def _data(case: str):
    if case == "unbalanced":
        ds = synthetic_hierarchy("unbalanced", seed=0, n=2500, d=1000)
    else:
        ds = synthetic_lshtc(n_nodes=200, n=2500, d=5000, seed=0)
    return ds, ds.split("train"), ds.split("test")


class Problem:
    """α, structure and labels as ``HierarchicalSVM(model="nhsvm3")`` builds them."""

    def __init__(self, case: str, batch_size: int) -> None:
        ds, tr, te = _data(case)
        self.est = HierarchicalSVM(ds, model="nhsvm3", C=C, batch_size=batch_size, max_epochs=1)
        self.est.fit(tr.X[:50], tr.Y[:50])  # label space and α only
        h = self.est.hierarchy_
        self.alpha = self.est.alpha_
        self.s = self.est._structure(self.alpha, "normalized", self.est.node_loss_weight_)
        # X as the estimator hands it to the training loop (CSR, as _check_x converts it)
        self.X, self.te = self.est._check_x(tr.X, fitting=True), te
        self.Yr = [np.union1d(y, [h.root]).astype(np.int64) for y in tr.Y]
        self.batch_size = batch_size

    def reference(self) -> np.ndarray:
        V, _ = reference_nhsvm3(
            self.s,
            self.X,
            self.Yr,
            self.alpha,
            C=C,
            batch_size=self.batch_size,
            epochs=EPOCHS,
            n_jobs=1,
        )
        return V

    def native(self) -> np.ndarray:
        t = _native.Nhsvm3Trainer(
            self.s._require(),
            self.s._x_many(self.X),
            self.Yr,
            C=C,
            batch_size=self.batch_size,
            n_jobs=1,
        )
        for _ in range(EPOCHS):
            t.epoch()
        return self.est._rows(np.asarray(t.weights(True)))

    def accuracy(self, V: np.ndarray) -> float:
        self.est.coef_ = np.sqrt(self.alpha)[:, None] * V
        return float(self.est.score(self.te.X, self.te.Y))


CASES = [(c, b) for c in ("unbalanced", "lshtc") for b in (1, 16)]


@pytest.mark.parametrize(("case", "batch_size"), CASES, ids=[f"{c}-b{b}" for c, b in CASES])
@pytest.mark.parametrize("impl", ["reference", "native"])
def test_nhsvm3_loop(benchmark, case: str, batch_size: int, impl: str) -> None:
    p = Problem(case, batch_size)
    benchmark.group = f"nhsvm3-loop-{case}-b{batch_size}"
    V = benchmark.pedantic(getattr(p, impl), rounds=1, iterations=1, warmup_rounds=0)
    assert np.all(np.isfinite(V))


def main() -> None:
    print(
        f"{'case':<12} {'batch':>5} {'ref CPU s':>10} {'native CPU s':>12} {'ratio':>7} "
        f"{'ref acc':>8} {'native acc':>10}"
    )
    for case, bs in CASES:
        p = Problem(case, bs)
        t0 = time.process_time()
        Vr = p.reference()
        tr = time.process_time() - t0
        t0 = time.process_time()
        Vn = p.native()
        tn = time.process_time() - t0
        print(
            f"{case:<12} {bs:>5} {tr:>10.2f} {tn:>12.3f} {tr / tn:>7.1f} "
            f"{p.accuracy(Vr):>8.3f} {p.accuracy(Vn):>10.3f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
