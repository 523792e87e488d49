"""Hierarchy oracle benchmarks.

* ``hierarchy-oracle-tree-M<size>``: loss-augmented oracle throughput (instances per second,
  ``extra_info``) of ``batch_oracle`` on a random tree with ~1,000 and ~10,000 nodes and sparse
  features, for 1 and 2 threads, per label space, and the two weight layouts.
* ``hierarchy-dag-mincut-vs-lp``: the max-closure min-cut oracle (ancestor-closed sets of a DAG)
  against solving the same, integral, closure LP with clarabel.
* ``hierarchy-dag-leaves-lp-ip``: the thesis's leaf-terminated DAG space (LP, then the integer
  program when fractional).

Run: ``pytest benches/structures/bench_hierarchy.py --benchmark-enable``.
"""

from __future__ import annotations

import time

import numpy as np
import pytest
import scipy.sparse as sp

import bicrit

N_INSTANCES = 200
NNZ = 50


def random_tree(rng: np.random.Generator, n: int, max_depth: int = 6) -> list[list[int]]:
    """A random tree of bounded depth (LSHTC/DMOZ-like: wide, shallow)."""
    depth = [0]
    parents: list[list[int]] = [[]]
    open_nodes = [0]
    for _ in range(1, n):
        p = open_nodes[int(rng.integers(len(open_nodes)))]
        parents.append([p])
        depth.append(depth[p] + 1)
        if depth[-1] < max_depth:
            open_nodes.append(len(parents) - 1)
    return parents


def random_dag(rng: np.random.Generator, n: int, extra: float = 0.3) -> list[list[int]]:
    """A tree plus extra parents for a fraction of the nodes (earlier nodes only: acyclic)."""
    parents = random_tree(rng, n)
    for v in range(2, n):
        if rng.random() < extra:
            q = int(rng.integers(1, v))
            if q not in parents[v] and q != v:
                parents[v] = sorted({*parents[v], q})
    return parents


def sparse_rows(rng: np.random.Generator, n: int, d: int, nnz: int) -> sp.csr_array:
    """Non-negative (tf-idf-like) sparse rows."""
    rows = np.repeat(np.arange(n), nnz)
    cols = rng.integers(0, d, size=n * nnz)
    return sp.csr_array((np.abs(rng.normal(size=n * nnz)), (rows, cols)), shape=(n, d))


def closure(parents: list[list[int]], nodes) -> np.ndarray:
    out, stack = set(), [0, *map(int, nodes)]
    while stack:
        v = stack.pop()
        if v not in out:
            out.add(v)
            stack.extend(parents[v])
    return np.array(sorted(out))


def setup(n_nodes: int, d: int, labels: str, multilabel: bool, layout: str, dag: bool = False):
    rng = np.random.default_rng(n_nodes)
    parents = random_dag(rng, n_nodes) if dag else random_tree(rng, n_nodes)
    s = bicrit.structure(
        "hierarchy",
        hierarchy=parents,
        root=0,
        labels=labels,
        multilabel=multilabel,
        n_features=d,
        layout=layout,
    )
    leaves = s.leaves
    X = sparse_rows(rng, N_INSTANCES, d, NNZ)
    Y = [
        closure(parents, rng.choice(leaves, size=1 if not multilabel else 3))
        for _ in range(N_INSTANCES)
    ]
    # trained-model-like scores: most nodes clearly negative (σ_n ≈ −2 ± 0.9), so that
    # loss-augmented labels stay small as in training, not half the hierarchy
    w = rng.normal(-0.05, 0.1, size=s.size_joint_feature)
    return s, X, Y, w


TREE_CASES = [
    # (nodes, features)
    (1_000, 5_000),
    (10_000, 1_000),
]
SPACES = [("any", True), ("leaves", True), ("leaves", False)]


@pytest.mark.parametrize("n_jobs", [1, 2])
@pytest.mark.parametrize("layout", ["node", "feature"])
@pytest.mark.parametrize(("labels", "multilabel"), SPACES)
@pytest.mark.parametrize(("n_nodes", "d"), TREE_CASES)
def test_tree_oracle_throughput(benchmark, n_nodes, d, labels, multilabel, layout, n_jobs) -> None:
    benchmark.group = f"hierarchy-oracle-tree-M{n_nodes}"
    s, X, Y, w = setup(n_nodes, d, labels, multilabel, layout)
    Xc = s._x_many(X)  # normalise once: time the oracle, not scipy's conversion
    result = benchmark(lambda: s._require().batch_oracle(w, Xc, Y, {"loss": 1.0}, n_jobs=n_jobs))
    assert len(result) == N_INSTANCES
    benchmark.extra_info["mean_label_size"] = float(np.mean([len(r[0][0]) for r in result]))
    t = benchmark.stats.stats.mean if benchmark.stats else None
    if t:
        benchmark.extra_info["instances_per_s"] = N_INSTANCES / t
    benchmark.extra_info.update(
        nodes=n_nodes, features=d, nnz=NNZ, labels=labels, multilabel=multilabel
    )


@pytest.mark.parametrize("n_nodes", [300, 1_000])
@pytest.mark.parametrize("method", ["min_cut", "clarabel_lp"])
def test_dag_mincut_vs_lp(benchmark, n_nodes, method) -> None:
    benchmark.group = f"hierarchy-dag-mincut-vs-lp-M{n_nodes}"
    s, X, Y, w = setup(n_nodes, 200, "any", True, "node", dag=True)
    assert s.oracle_kind == "min_cut"
    xs = [X[[i]] for i in range(20)]
    if method == "min_cut":

        def run():
            return [s.oracle(w, x, y, {"loss": 1.0})[0] for x, y in zip(xs, Y, strict=False)]
    else:

        def run():
            return [s.relaxation(w, x, y, {"loss": 1.0}) for x, y in zip(xs, Y, strict=False)]

    benchmark.pedantic(run, rounds=3, iterations=1, warmup_rounds=1)
    # the two agree on the value (the closure polytope is integral)
    a = s.oracle(w, xs[0], Y[0], {"loss": 1.0})[0]
    value, _ = s.relaxation(w, xs[0], Y[0], {"loss": 1.0})
    m0 = s.oracle(w, xs[0], Y[0], {"loss": 1.0}, ban=[a.label])  # exercise Lawler once
    assert m0
    benchmark.extra_info.update(nodes=n_nodes, calls=len(xs), lp_value=value)


def set_cover_dag(rng: np.random.Generator, k: int, n_leaves: int) -> list[list[int]]:
    """root → k categories → leaves with 3 category parents each (ImageNet/SWIKI-like DAG whose
    leaf-terminated LP is often fractional: a set-cover structure, thesis §"Calculating the most
    violating label")."""
    cats = np.arange(1, k + 1)
    return (
        [[]]
        + [[0] for _ in range(k)]
        + [sorted(int(c) for c in rng.choice(cats, size=3, replace=False)) for _ in range(n_leaves)]
    )


@pytest.mark.parametrize("graph", ["tree+30%", "set-cover"])
@pytest.mark.parametrize("n_nodes", [100, 300])
def test_dag_leaves_lp_ip(benchmark, n_nodes, graph) -> None:
    """``tree+30%``: a tree with extra parents and trained-like weights (the LP is integral);
    ``set-cover``: categories worth more than their leaves cost, where the LP is often
    fractional and the integer program runs."""
    benchmark.group = "hierarchy-dag-leaves-lp-ip"
    rng = np.random.default_rng(n_nodes)
    if graph == "tree+30%":
        s, X, Y, w = setup(n_nodes, 200, "leaves", True, "node", dag=True)
        xs = [X[[i]] for i in range(10)]
    else:
        k = n_nodes // 5
        parents = set_cover_dag(rng, k, n_nodes - 1 - k)
        s = bicrit.structure("hierarchy", hierarchy=parents, labels="leaves", n_features=1)
        xs = [np.ones(1)] * 10
        w = np.concatenate([[0.0], rng.normal(0.5, 0.5, k), rng.normal(-1.2, 0.5, n_nodes - 1 - k)])
        Y = [closure(parents, [int(rng.integers(k + 1, n_nodes))]) for _ in range(10)]
    assert s.oracle_kind == "lp_ip"
    t0 = time.perf_counter()
    benchmark.pedantic(
        lambda: [s.oracle(w, x, y, {"loss": 1.0}) for x, y in zip(xs, Y, strict=False)],
        rounds=3,
        iterations=1,
    )
    fractional = 0
    for x, y in zip(xs, Y, strict=False):
        _, z = s.relaxation(w, x, y, {"loss": 1.0})
        fractional += bool(np.any((z > 1e-6) & (z < 1 - 1e-6)))
    benchmark.extra_info.update(
        nodes=n_nodes,
        calls=len(xs),
        wall=time.perf_counter() - t0,
        fractional_lp_share=fractional / len(xs),
        graph=graph,
    )
