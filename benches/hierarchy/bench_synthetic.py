"""Generator benchmarks: the thesis's synthetic sets and the LSHTC-like generator.

``python benches/hierarchy/bench_synthetic.py`` builds each case in a fresh subprocess and prints
the wall time, nnz, peak RSS, and the peak RSS above the interpreter's baseline per stored
non-zero (to show memory proportional to nnz: the CSR itself is 8 bytes per non-zero,
float32 value + int32 index). ``pytest benches/hierarchy/bench_synthetic.py --benchmark-enable``
times the thesis's sets (group ``synthetic-thesis-sets``) and a 1/10-size LSHTC-like problem.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from bicrit.datasets import synthetic_hierarchy, synthetic_lshtc

CHILD = r"""
import json, resource, sys, time
import numpy as np
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
from bicrit.datasets import synthetic_hierarchy, synthetic_lshtc
import scipy.sparse
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
kind, kw = sys.argv[1], json.loads(sys.argv[2])
t0 = time.perf_counter()
ds = synthetic_lshtc(**kw) if kind == "lshtc" else synthetic_hierarchy(kind, **kw)
dt = time.perf_counter() - t0
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
X = ds.X
nnz = int(X.nnz) if scipy.sparse.issparse(X) else int(X.size)
print(json.dumps({"seconds": dt, "nnz": nnz, "peak_mib": peak / 1024,
                  "base_mib": base / 1024, "n_nodes": ds.hierarchy.n_nodes,
                  "n": ds.n_samples, "d": ds.n_features}))
"""

RUNS = [
    ("balanced", {}),
    ("unbalanced", {}),
    ("lshtc", {"n": 25_000}),
    ("lshtc", {"n": 50_000}),
    ("lshtc", {}),
    ("lshtc", {"n": 200_000}),
]


def run(kind: str, kw: dict) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", CHILD, kind, json.dumps(kw)],
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(out.stdout)


@pytest.mark.parametrize("kind", ["balanced", "unbalanced"])
def test_thesis_sets(benchmark, kind: str) -> None:
    benchmark.group = "synthetic-thesis-sets"
    ds = benchmark.pedantic(lambda: synthetic_hierarchy(kind), rounds=2, iterations=1)
    assert ds.n_samples in (8000, 10000)


def test_lshtc_tenth(benchmark) -> None:
    benchmark.group = "synthetic-lshtc-like"
    ds = benchmark.pedantic(lambda: synthetic_lshtc(n=10_000), rounds=2, iterations=1)
    assert ds.X.nnz > 0


if __name__ == "__main__":
    print(
        f"{'case':<28} {'M':>6} {'n':>8} {'d':>8} {'nnz':>10} {'s':>7} {'peak MiB':>9} {'B/nnz':>6}"
    )
    for kind, kw in RUNS:
        r = run(kind, kw)
        extra = (r["peak_mib"] - r["base_mib"]) * 2**20 / max(r["nnz"], 1)
        label = kind + ("" if not kw else f" n={kw.get('n')}")
        print(
            f"{label:<28} {r['n_nodes']:>6} {r['n']:>8} {r['d']:>8} {r['nnz']:>10} "
            f"{r['seconds']:>7.2f} {r['peak_mib']:>9.0f} {extra:>6.1f}"
        )
