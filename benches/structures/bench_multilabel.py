"""Benchmarks of the multilabel structure.

Run: ``pytest benches/structures/bench_multilabel.py --benchmark-enable -p no:randomly``
(add ``--benchmark-disable-gc --benchmark-warmup=on`` on the shared machine).

Groups:
* ``multilabel-oracle-<mode>-K<K>`` — oracle throughput, ``batch_oracle`` with 1 and 2 threads
  (``extra_info["instances_per_s"]``): exact enumeration at K = 6 and 14, QPBO at 14/53/159.
* ``multilabel-qpbo-vs-lp-K<K>-<coupling>`` — one λ-oracle call (λ = 1) on a full-graph MRF with
  14, 53 and 159 labels (yeast/enron/bibtex-sized), by QPBO (max-flow) and by the clarabel LP, with
  weak and strong edge couplings; the LP row's ``extra_info["lp_over_qpbo"]`` is the ratio of mean
  times, and both rows record the objective value (they must agree) and the number of fractional
  node marginals.

Data: synthetic at a realistic scale — standardised features (d = 50), weights N(0, 0.1²) for the
unary blocks and N(0, 0.1²) (strong) or N(0, 0.01²) (weak) for the 4 weights of each edge (mixed
signs: non-submodular energies).
"""

from __future__ import annotations

import time

import numpy as np
import pytest

import bicrit

D = 50


def make(
    K: int, n: int, inference: str, solver: str = "qpbo", seed: int = 0, edge_scale: float = 0.1
):
    rng = np.random.default_rng(seed)
    s = bicrit.structure(
        "multilabel",
        edges="full",
        inference=inference,
        relaxed_solver=solver,
        n_labels=K,
        n_features=D,
    )
    X = rng.normal(size=(n, D))
    Y = (rng.random(size=(n, K)) < 0.3).astype(np.int64)
    w = rng.normal(scale=0.1, size=s.size_joint_feature)
    w[K * D :] *= edge_scale / 0.1
    return s, w, X, Y


THROUGHPUT = [
    ("exact", 6, 2000),
    ("exact", 14, 200),
    ("relaxed", 14, 500),
    ("relaxed", 53, 100),
    ("relaxed", 159, 20),
]


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize(("mode", "K", "n"), THROUGHPUT)
def test_oracle_throughput(benchmark, mode: str, K: int, n: int, threads: int) -> None:
    benchmark.group = f"multilabel-oracle-{mode}-K{K}"
    s, w, X, Y = make(K, n, mode)
    out = benchmark(s.batch_oracle, w, X, Y, {"loss": 1.0}, n_jobs=threads)
    assert len(out) == n
    if benchmark.stats is not None:
        benchmark.extra_info["instances_per_s"] = n / benchmark.stats.stats.mean
    benchmark.extra_info["threads"] = threads
    benchmark.extra_info["instances"] = n


_QPBO_MEAN: dict[tuple[int, str], float] = {}

#: Edge-weight scales: "strong" couplings (N(0, 0.1²), like the unary weights) make the random
#: full-graph LP almost entirely fractional; "weak" ones (N(0, 0.01²)) leave it mostly integral.
COUPLING = {"weak": 0.01, "strong": 0.1}


@pytest.mark.parametrize("solver", ["qpbo", "lp"])
@pytest.mark.parametrize("coupling", sorted(COUPLING))
@pytest.mark.parametrize("K", [14, 53, 159])
def test_qpbo_vs_lp(benchmark, K: int, coupling: str, solver: str) -> None:
    benchmark.group = f"multilabel-qpbo-vs-lp-K{K}-{coupling}"
    s, w, X, Y = make(K, 1, "relaxed", solver, edge_scale=COUPLING[coupling])

    def call():
        return s.oracle(w, X[0], Y[0], {"loss": 1.0})[0]

    rounds = 20 if solver == "qpbo" else (5 if K < 159 else 2)
    a = benchmark.pedantic(call, rounds=rounds, iterations=1, warmup_rounds=1)
    v = a.margin + a.terms["loss"]
    benchmark.extra_info["objective"] = v
    benchmark.extra_info["fractional_labels"] = (
        int(np.sum((a.label[0] > 0) & (a.label[0] < 1))) if isinstance(a.label, tuple) else 0
    )
    if benchmark.stats is not None:
        mean = benchmark.stats.stats.mean
    else:  # --benchmark-disable: time one call
        t0 = time.perf_counter()
        call()
        mean = time.perf_counter() - t0
    if solver == "qpbo":
        _QPBO_MEAN[K, coupling] = mean
    elif (K, coupling) in _QPBO_MEAN:
        benchmark.extra_info["lp_over_qpbo"] = mean / _QPBO_MEAN[K, coupling]
