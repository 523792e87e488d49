"""α solver benchmarks (``rust/bicrit-hierarchy`` through ``bicrit.hierarchy``).

Groups name what they compare, so the tables read side by side:

* ``alpha-power-tree-M<size>``: the power problem (ρ = 2 and ρ = 1.01) on a random tree of ~1,000
  and ~10,000 nodes — closed form (O(M)) against the conic program (clarabel).
* ``alpha-maxmin-tree-M<size>``: ρ = 1, the max-min LP value in closed form plus the min-norm
  tie-break QP.
* ``alpha-shared-tree-M<size>``: Shared SVM's α step — ArgminAlphaTree (O(M)) against the
  second-order-cone program.
* ``alpha-dag-M<size>``: the power problem (ρ = 2, QP; ρ = 1.5, power cones) and the Shared SVM
  step on a random DAG.

Run: ``pytest benches/hierarchy/bench_alpha.py --benchmark-enable`` (without the flag each case
runs once, as a smoke test). ``python benches/hierarchy/bench_alpha.py`` prints one table.
"""

from __future__ import annotations

import time

import numpy as np
import pytest

from bicrit.hierarchy import maxmin_alpha, power_alpha, shared_alpha


def random_tree(rng: np.random.Generator, n: int, max_depth: int = 8) -> list[list[int]]:
    """A random tree of bounded depth (wide, shallow, LSHTC/DMOZ-like)."""
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


def random_dag(rng: np.random.Generator, n: int, extra: float = 0.2) -> list[list[int]]:
    """A tree plus a second parent (an earlier node) for a fraction of the nodes."""
    parents = random_tree(rng, n)
    for v in range(2, n):
        if rng.random() < extra:
            q = int(rng.integers(1, v))
            if q not in parents[v]:
                parents[v] = sorted({*parents[v], q})
    return parents


TREES = {m: random_tree(np.random.default_rng(m), m) for m in (1_000, 10_000)}
DAGS = {m: random_dag(np.random.default_rng(m + 1), m) for m in (1_000,)}


NORMS = {m: np.random.default_rng(m).exponential(size=m) for m in (1_000, 10_000)}


CASES = []
for m, tree in TREES.items():
    for rho in (2.0, 1.01):
        for method in ("closed_form", "conic"):
            CASES.append(
                (
                    f"alpha-power-tree-M{m}",
                    f"rho{rho}-{method}",
                    lambda t=tree, r=rho, me=method: power_alpha(t, r, method=me),
                )
            )
    CASES.append((f"alpha-maxmin-tree-M{m}", "lp-closed+qp", lambda t=tree: maxmin_alpha(t)))
    for method in ("closed_form", "conic"):
        CASES.append(
            (
                f"alpha-shared-tree-M{m}",
                method,
                lambda t=tree, n=NORMS[m], me=method: shared_alpha(t, n, method=me),
            )
        )
for m, dag in DAGS.items():
    CASES.append((f"alpha-dag-M{m}", "power-rho2-qp", lambda d=dag: power_alpha(d, 2.0)))
    CASES.append((f"alpha-dag-M{m}", "power-rho1.5-cones", lambda d=dag: power_alpha(d, 1.5)))
    CASES.append((f"alpha-dag-M{m}", "maxmin", lambda d=dag: maxmin_alpha(d)))
    CASES.append((f"alpha-dag-M{m}", "shared-soc", lambda d=dag, n=NORMS[m]: shared_alpha(d, n)))


@pytest.mark.parametrize(("group", "name", "fn"), CASES, ids=[f"{g}-{n}" for g, n, _ in CASES])
def test_alpha_solvers(benchmark, group: str, name: str, fn) -> None:
    benchmark.group = group
    alpha = benchmark.pedantic(fn, rounds=3, iterations=1, warmup_rounds=0)
    assert np.all(alpha >= 0)


if __name__ == "__main__":
    print(f"{'group':<26} {'case':<24} {'seconds':>9}")
    for group, name, fn in CASES:
        t0 = time.perf_counter()
        fn()
        print(f"{group:<26} {name:<24} {time.perf_counter() - t0:9.4f}")
