"""Per-call overhead of a structure written in Python (a plugin) against the same oracle built in.

Run: ``pytest benches/plugins/bench_plugin_overhead.py --benchmark-enable``; or
``python benches/plugins/bench_plugin_overhead.py`` for a table of CPU times per call and the
ratios. Without ``--benchmark-enable`` each benchmark runs once (a correctness check) and the
ratios in ``extra_info`` still come from the interleaved CPU-time measurement below.

The same oracle twice: the multiclass structure (K = 10 classes, d = 50 dense features, 0-1
loss, λ-oracle by enumeration of the classes with exact lexicographic tie-breaks, k-best, ban
lists) — bicrit's native ``multiclass`` and ``PyMulticlass`` below, a pure-Python (numpy)
version of the same algorithm written as a plugin would be (``bicrit.structures.base.Structure``).
Both are driven through the same native entry points: ``batch_oracle`` (λ = 1, k = 1) over
N = 500 instances, and a loop of ``bicrit.search("convex-hull-kbest", …, "slack")`` on
``instance_oracle`` over 200 instances (the search runs in Rust either way; for the plugin each
oracle call is a callback into Python under the GIL).

Groups (``extra_info``: ``us_per_call`` — per oracle call or per inference — and, for the
plugin, ``ratio_vs_native`` = plugin CPU time / native CPU time, best of interleaved repeats):

* ``plugin-overhead-batch-oracle-K10-d50``: native vs plugin (through the adapter, 1 and 2
  threads: the plugin's callbacks are serialised by the GIL, so 2 threads do not help), and the
  plugin's ``oracle`` called directly from a Python loop (its own cost, without the adapter).
* ``plugin-overhead-search-loop-K10-d50``: native vs plugin structure under the same search.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

import numpy as np
import pytest

import bicrit
from bicrit.structures.base import Answer, Cone, Structure, as_native

K, D, N, N_SEARCH = 10, 50, 500, 200


class PyMulticlass(Structure):
    """Multiclass in Python + numpy: φ(x, y) = x in block y, 0-1 loss, enumeration oracle."""

    name = "py-multiclass"
    capabilities: ClassVar[dict[str, bool]] = {
        "ban": True,
        "kbest": True,
        "cone": False,
        "relaxed": False,
    }

    def __init__(self, n_classes: int, n_features: int) -> None:
        self.K, self.d = n_classes, n_features

    @property
    def size_joint_feature(self) -> int:
        return self.K * self.d

    def initialize(self, X: Any, Y: Any) -> PyMulticlass:
        return self

    def joint_feature(self, x: Any, y: Any) -> np.ndarray:
        out = np.zeros(self.K * self.d)
        out[y * self.d : (y + 1) * self.d] = x
        return out

    def joint_feature_sparse(self, x: Any, y: Any) -> tuple[list[int], list[float]]:
        return list(range(y * self.d, (y + 1) * self.d)), list(map(float, x))

    def terms(self, y: Any, y_true: Any) -> dict[str, float]:
        wrong = float(y != y_true)
        return {"loss": wrong, "size": 1.0, "hamming": 2.0 * wrong}

    def predict_one(self, w: np.ndarray, x: Any) -> int:
        return int(np.argmax(w.reshape(self.K, self.d) @ x))

    def oracle(
        self,
        w: np.ndarray,
        x: Any,
        y_true: Any,
        coef: Mapping[str, float] | None = None,
        *,
        margin_coef: float = 1.0,
        tiebreak: tuple[float, Mapping[str, float]] | None = None,
        ban: Sequence[Any] | None = None,
        k: int = 1,
        cone: Cone | None = None,
    ) -> list[Answer]:
        coef = coef or {}
        scores = w.reshape(self.K, self.d) @ x
        margin = scores - scores[y_true]
        wrong = np.ones(self.K)
        wrong[y_true] = 0.0
        per_wrong = coef.get("loss", 0.0) + 2.0 * coef.get("hamming", 0.0)
        primary = margin_coef * margin + per_wrong * wrong
        if tiebreak is None:
            order = np.argsort(-primary, kind="stable")
        else:
            tb = tiebreak[1].get("loss", 0.0) + 2.0 * tiebreak[1].get("hamming", 0.0)
            order = np.lexsort((-(tiebreak[0] * margin + tb * wrong), -primary))
        out = []
        for y in order:
            if ban and int(y) in ban:
                continue
            t = {"loss": wrong[y], "size": 1.0, "hamming": 2.0 * wrong[y]}
            out.append(Answer(int(y), float(margin[y]), t))
            if len(out) == k:
                break
        return out


def _data() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    X = rng.normal(size=(N, D))
    Y = rng.integers(0, K, size=N)
    w = rng.normal(scale=0.3, size=K * D)
    return X, Y, w


def prepare() -> dict[str, Any]:
    """Data, the two structures, and their native handles (``as_native``) with inputs
    normalised once, as a learner does — so that both sides time the native entry point and
    the oracle, not Python-side input conversion."""
    X, Y, w = _data()
    native = bicrit.structure("multiclass", n_classes=K, n_features=D)
    plugin = PyMulticlass(K, D)
    return {
        "w": w,
        "plugin": plugin,
        "Xlist": list(X),
        "Ylist": [int(v) for v in Y],
        "native_handle": as_native(native),
        "X_native": native._x_many(X),
        "Y_native": native._y_many(Y),
        "x_native": [native._x_one(x) for x in X[:N_SEARCH]],
        "adapter": as_native(plugin),
    }


@pytest.fixture(scope="module")
def setup() -> dict[str, Any]:
    return prepare()


def _cpu_best(f: Callable[[], Any], reps: int = 3) -> float:
    f()
    best = math.inf
    for _ in range(reps):
        t0 = time.process_time()
        f()
        best = min(best, time.process_time() - t0)
    return best


def runners(d: dict[str, Any]) -> dict[str, Callable[[], Any]]:
    """What the benchmarks time, by name."""
    w, Xl, Yl, plugin = d["w"], d["Xlist"], d["Ylist"], d["plugin"]
    nat, adapter = d["native_handle"], d["adapter"]
    psi = bicrit.surrogate("slack")

    def search_loop(handle: Any, xs: Sequence[Any]) -> Callable[[], list[float]]:
        def run() -> list[float]:
            oracles = (handle.instance_oracle(w, xs[i], Yl[i]) for i in range(N_SEARCH))
            return [bicrit.search("convex-hull-kbest", o, psi).value for o in oracles]

        return run

    Xn, Yn = d["X_native"], d["Y_native"]
    return {
        "batch-native": lambda: nat.batch_oracle(w, Xn, Yn, {"loss": 1.0}, n_jobs=1),
        "batch-plugin": lambda: adapter.batch_oracle(w, Xl, Yl, {"loss": 1.0}, n_jobs=1),
        "batch-plugin-2-threads": lambda: adapter.batch_oracle(w, Xl, Yl, {"loss": 1.0}, n_jobs=2),
        "batch-plugin-direct": lambda: [
            plugin.oracle(w, x, y, {"loss": 1.0}) for x, y in zip(Xl, Yl, strict=True)
        ],
        "search-native": search_loop(nat, d["x_native"]),
        "search-plugin": search_loop(adapter, Xl),
    }


def _native_reference(name: str) -> str:
    return "batch-native" if name.startswith("batch") else "search-native"


def _record(benchmark: Any, d: dict[str, Any], name: str) -> None:
    run = runners(d)
    per = N if name.startswith("batch") else N_SEARCH
    mine = _cpu_best(run[name])
    benchmark.extra_info["us_per_call"] = 1e6 * mine / per
    if name != _native_reference(name):
        benchmark.extra_info["ratio_vs_native"] = mine / _cpu_best(run[_native_reference(name)])


@pytest.mark.benchmark(group="plugin-overhead-batch-oracle-K10-d50")
@pytest.mark.parametrize(
    "name", ["batch-native", "batch-plugin", "batch-plugin-2-threads", "batch-plugin-direct"]
)
def test_batch_oracle(benchmark: Any, setup: dict[str, Any], name: str) -> None:
    out = benchmark(runners(setup)[name])
    assert len(out) == N
    _record(benchmark, setup, name)


@pytest.mark.benchmark(group="plugin-overhead-search-loop-K10-d50")
@pytest.mark.parametrize("name", ["search-native", "search-plugin"])
def test_search_loop(benchmark: Any, setup: dict[str, Any], name: str) -> None:
    values = benchmark(runners(setup)[name])
    assert len(values) == N_SEARCH
    _record(benchmark, setup, name)


def test_both_structures_give_the_same_answers(setup: dict[str, Any]) -> None:
    """The comparison is between equal oracles: same labels, same search values."""
    run = runners(setup)
    native = [[a[0] for a in per] for per in run["batch-native"]()]
    plugin = [[a[0] for a in per] for per in run["batch-plugin"]()]
    assert native == plugin
    assert run["search-native"]() == pytest.approx(run["search-plugin"](), rel=1e-12)


def main() -> None:
    run = runners(prepare())
    times = {name: _cpu_best(f, reps=5) for name, f in run.items()}
    print(f"K = {K} classes, d = {D} features; CPU time, best of 5")
    for name, t in times.items():
        per = N if name.startswith("batch") else N_SEARCH
        ratio = t / times[_native_reference(name)]
        unit = "oracle call" if name.startswith("batch") else "inference"
        print(f"  {name:24s} {1e6 * t / per:9.2f} µs per {unit:11s}  × {ratio:6.1f} native")


if __name__ == "__main__":
    main()
