"""ProbLoss inference on NER: the exact one-call ``frontier`` search against the convex hull +
ban-list loop (capped at 20 calls, as in production, and uncapped) and the fractional
``convex-hull`` search (``benches/RESULTS-sequence.md``, section "ProbLoss on chains:
the frontier search").

Data: CoNLL-2002 Spanish, the first ``BICRIT_BENCH_N`` training sentences (default 500) of a 10 %
subsample (seed 0; the hashed features of :mod:`bicrit.reproduce.ner`); weights from
``BICRIT_BENCH_WARM`` (default 3) SGD epochs of margin rescaling (untimed). From those weights:

* one SGD ProbLoss epoch per search (same seed, order and step), timed: the Trainer's epoch time
  and calls per inference, as ratios to the ``frontier`` epoch; and one margin-rescaling epoch
  from the same weights, the reference of exact ProbLoss's cost (the thesis's 2.3× on NER);
* per sentence at the margin weights, ``bicrit.search`` with each search: how often the capped
  ban-list answer is not the exact optimum (its ψ below frontier's), how often it ends without a
  certificate (budget exhausted), the hull's fractional share and its gap above the optimum;
* the uncapped ban-list loop on the first ``BICRIT_BENCH_UNCAPPED`` sentences (default 25) with a
  time budget of ``BICRIT_BENCH_BUDGET`` seconds (default 120), stopped early when it runs out;
* ProbLoss from w = 0 on the first 25 sentences, two epochs per search, the second reported
  (``BICRIT_BENCH_SCRATCH=0`` skips it): where the uncapped loop is pathological.

Run ``pytest benches/learners/bench_frontier.py --benchmark-enable`` (groups
``probloss-epoch-{frontier,ban20,hull,margin}``) or ``python benches/learners/bench_frontier.py``
for the markdown tables.
"""

from __future__ import annotations

import os
import time
from typing import Any

import numpy as np
import pytest

import bicrit
from bicrit.reproduce import ner

N = int(os.environ.get("BICRIT_BENCH_N", "500"))
WARM = int(os.environ.get("BICRIT_BENCH_WARM", "3"))
N_UNCAPPED = int(os.environ.get("BICRIT_BENCH_UNCAPPED", "25"))
BUDGET = float(os.environ.get("BICRIT_BENCH_BUDGET", "120"))
DATASET = "conll2002/esp"

#: name → search; ``frontier`` first (the reference of the ratios).
SEARCHES: dict[str, Any] = {
    "frontier": "frontier",
    "ban20": ner.BAN,  # ("convex-hull-ban", {"max_calls": 20})
    "hull": "convex-hull",
}


class Setup:
    """The corpus slice, the chain and the margin weights every configuration starts from."""

    def __init__(self) -> None:
        from bicrit.datasets import data_root
        from bicrit.learners import make_trainer

        c = ner.prepare(DATASET, 0.1, 0, root=data_root())
        M, offsets = c.X_train
        n = min(N, c.n_train)
        self.X = (M[: offsets[n]], offsets[: n + 1])
        self.Y = c.Y_train[:n]
        self.n = n
        self.structure = bicrit.structure("chain", tag_names=c.tag_names).initialize(self.X, self.Y)
        self.params = {"C": ner.sklearn_c(ner.LAM, n), **ner.SGD, "n_jobs": 1, "random_state": 0}
        warm = make_trainer(
            self.structure, self.X, self.Y, "margin", "convex-hull", "sgd", self.params
        )
        for _ in range(WARM):
            warm.epoch()
        self.w0 = np.asarray(warm.weights(True), dtype=np.float64)

    def sentence(self, i: int) -> tuple[Any, np.ndarray]:
        M, offsets = self.X
        return M[offsets[i] : offsets[i + 1]], self.Y[i]

    def epoch(self, search: Any, surrogate: str = "probloss") -> dict[str, Any]:
        """One timed SGD epoch of ``surrogate`` (default ProbLoss) from the margin weights."""
        from bicrit.learners import make_trainer

        t = make_trainer(
            self.structure, self.X, self.Y, surrogate, search, "sgd", self.params, self.w0
        )
        cpu0 = time.process_time()
        st = dict(t.epoch())
        st["cpu"] = time.process_time() - cpu0
        return st


def per_sentence(
    s: Setup, name: str, search: Any, idx: range, budget: float = np.inf, w: Any = None
):
    """``bicrit.search`` per sentence at weights ``w`` (default: the margin weights): (values,
    calls, certified, fractional, seconds), stopping when ``budget`` seconds are spent."""
    psi = bicrit.surrogate("probloss")
    sname, opts = (search, {}) if isinstance(search, str) else search
    out: dict[str, list] = {"value": [], "calls": [], "certified": [], "fractional": [], "time": []}
    start = time.perf_counter()
    for i in idx:
        if time.perf_counter() - start > budget:
            break
        x, y = s.sentence(i)
        oracle = s.structure.instance_oracle(s.w0 if w is None else w, x, y)
        t0 = time.perf_counter()
        r = bicrit.search(sname, oracle, psi, **opts)
        out["time"].append(time.perf_counter() - t0)
        out["value"].append(r.value)
        out["calls"].append(r.calls["total"])
        out["certified"].append(r.upper_bound is not None)
        out["fractional"].append(r.fractional)
    return {k: np.array(v) for k, v in out.items()}


def compare(s: Setup, n: int | None = None, w: Any = None) -> dict[str, Any]:
    """Per-sentence answers of every search against frontier's exact values (first ``n``
    sentences, weights ``w``; default: all, the margin weights)."""
    idx = range(s.n if n is None else n)
    ref = per_sentence(s, "frontier", "frontier", idx, w=w)
    rows: dict[str, Any] = {"frontier": ref}
    for name, search in [("ban20", ner.BAN), ("hull", "convex-hull")]:
        rows[name] = per_sentence(s, name, search, idx, w=w)
    rows["ban-uncapped"] = per_sentence(
        s, "ban-uncapped", "convex-hull-ban", range(min(N_UNCAPPED, len(idx))), BUDGET, w=w
    )
    return rows


def summary(rows: dict[str, Any]) -> list[str]:
    ref = rows["frontier"]
    lines = [
        "| search | sentences | calls / inference | time / inference (ratio to frontier) | "
        "not optimal (ψ below frontier's) | no certificate | fractional | value − exact (mean) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, r in rows.items():
        k = len(r["value"])
        exact = ref["value"][:k]
        tol = 1e-9 * np.maximum(1.0, np.abs(exact))
        below = r["value"] < exact - tol
        gap = float(np.mean(r["value"] - exact)) if k else float("nan")
        ratio = float(np.sum(r["time"]) / np.sum(ref["time"][:k])) if k else float("nan")
        lines.append(
            f"| {name} | {k} | {np.mean(r['calls']):.2f} | {ratio:.2f}× | "
            f"{np.mean(below):.3f} ({int(np.sum(below))}) | {1 - np.mean(r['certified']):.3f} | "
            f"{np.mean(r['fractional']):.3f} | {gap:+.2e} |"
        )
    return lines


def epoch_table(stats: dict[str, dict[str, Any]]) -> list[str]:
    """Ratios to the ``frontier`` epoch; a ``margin`` row (margin rescaling's own epoch, its
    λ = 1 Viterbi search) also gets frontier's ratio to it: exact ProbLoss's cost over margin
    rescaling's, the thesis's "2.3× with ban lists" on NER."""
    ref = stats["frontier"]
    lines = [
        "| search | epoch time ratio | CPU ratio | calls / inference | fractional | mean loss |",
        "|---|---|---|---|---|---|",
    ]
    if "margin" in stats:
        m = stats["margin"]
        lines.insert(
            0,
            f"ProbLoss with `frontier` / margin rescaling, one epoch from the same weights: "
            f"{ref['time'] / m['time']:.2f}× time, {ref['cpu'] / m['cpu']:.2f}× CPU\n",
        )
    for name, st in stats.items():
        lines.append(
            f"| {name} | {st['time'] / ref['time']:.2f}× | {st['cpu'] / ref['cpu']:.2f}× | "
            f"{st['calls_per_inference']:.2f} | {st['fractional'] / st['inferences']:.3f} | "
            f"{st['loss']:.4f} |"
        )
    return lines


def from_scratch(s: Setup, n: int = 25, epochs: int = 2) -> tuple[dict[str, Any], Any]:
    """ProbLoss from w = 0 on the first ``n`` sentences, ``epochs`` epochs per search, the last one
    reported: the regime where the uncapped ban-list loop walks through hundreds of labels
    (``RESULTS-sequence.md``: 367 calls per inference in a second epoch). Also returns the
    frontier run's weights before its last epoch (for :func:`compare`)."""
    from bicrit.learners import make_trainer

    M, offsets = s.X
    X, Y = (M[: offsets[n]], offsets[: n + 1]), s.Y[:n]
    params = {**s.params, "C": ner.sklearn_c(ner.LAM, n)}
    out = {}
    w_before = None
    for name, search in [
        ("frontier", "frontier"),
        ("ban20", ner.BAN),
        ("ban-uncapped", "convex-hull-ban"),
        ("hull", "convex-hull"),
    ]:
        t = make_trainer(s.structure, X, Y, "probloss", search, "sgd", params)
        for _ in range(epochs - 1):
            t.epoch()
        if name == "frontier":
            w_before = np.asarray(t.weights(False), dtype=np.float64)
        cpu0 = time.process_time()
        st = dict(t.epoch())
        st["cpu"] = time.process_time() - cpu0
        out[name] = st
    return out, w_before


@pytest.fixture(scope="module")
def setup() -> Setup:
    try:
        return Setup()
    except FileNotFoundError as exc:  # pragma: no cover - depends on the machine
        pytest.skip(f"no CoNLL data: {exc}")


@pytest.mark.parametrize("name", [*SEARCHES, "margin"])
def test_probloss_epoch(benchmark, setup, name: str) -> None:
    benchmark.group = f"probloss-epoch-{name}"
    if name == "margin":  # the reference: margin rescaling's own epoch from the same weights
        st = benchmark.pedantic(
            lambda: setup.epoch("convex-hull", "margin"), rounds=1, iterations=1
        )
    else:
        st = benchmark.pedantic(lambda: setup.epoch(SEARCHES[name]), rounds=1, iterations=1)
    benchmark.extra_info.update({k: v for k, v in st.items() if isinstance(v, int | float)})
    if name == "frontier":
        assert st["calls"] == st["inferences"] and st["fractional"] == 0


def test_capped_ban_never_beats_the_exact_frontier(setup) -> None:
    idx = range(min(100, setup.n))
    ref = per_sentence(setup, "frontier", "frontier", idx)
    ban = per_sentence(setup, "ban20", ner.BAN, idx)
    hull = per_sentence(setup, "hull", "convex-hull", idx)
    tol = 1e-9 * np.maximum(1.0, np.abs(ref["value"]))
    assert np.all(ban["value"] <= ref["value"] + tol)  # frontier is the exact optimum
    assert np.all(hull["value"] >= ref["value"] - tol)  # the hull bounds it from above


if __name__ == "__main__":
    s = Setup()
    print(f"{DATASET}: {s.n} training sentences, margin weights after {WARM} SGD epochs")
    stats = {name: s.epoch(search) for name, search in SEARCHES.items()}
    stats["margin"] = s.epoch("convex-hull", "margin")
    print("\n".join(epoch_table(stats)))
    print()
    print("\n".join(summary(compare(s))))
    if os.environ.get("BICRIT_BENCH_SCRATCH", "1") == "1":
        print()
        print("From w = 0, first 25 sentences, second epoch:")
        stats, w1 = from_scratch(s)
        print("\n".join(epoch_table(stats)))
        print()
        print("Per sentence at the weights the frontier run's second epoch starts from:")
        print("\n".join(summary(compare(s, 25, w1))))
