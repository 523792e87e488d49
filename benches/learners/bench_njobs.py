"""Both cores for every learner (issue 16, items 6 and 7): per structure and learner, one
training epoch at ``n_jobs=1`` and ``n_jobs=2``, the speed-up, whether the results are unchanged,
and the epoch as a multiple of a measured lower bound.

* **Epochs.** Data are prepared by each estimator's defaults (``SequenceSVM``: its featurizer;
  ``MultiLabelSVM``: scaling, ``edges="auto"``; ``DependencySVM``; ``StructuredSVM`` with the
  multiclass structure) and trained by the native ``Trainer`` with the learner's default
  parameters (C = the estimator's default, ``random_state=0``; BCFW ``tol=0``), margin
  rescaling with the convex hull search. The ``n_jobs=1`` and ``n_jobs=2`` runs are built side by
  side and their epochs **interleaved** (1, 2, 1, 2 …), so load from other jobs hits both alike;
  the first epoch of each is not timed (pool start-up, first warm starts).
* **Unchanged.** After the last epoch both runs' averaged weights are compared bit for bit, and
  so are their epoch objectives (determinism: the work split never depends on ``n_jobs``).
* **Where the time goes at n_jobs = 2.** The CPU seconds of each of the pool's two threads
  (``/proc/self/task/*/schedstat``): the epoch runs on one of them (what the learner does in
  sequence — weight updates, line searches, bookkeeping — and its share of each parallel pass),
  the other takes the rest of each pass (and spins while it waits for the next one); the calling
  thread only waits. Measured even when the machine is loaded and the wall clock is not.
* **Lower bound** (item 7): one pass over the training data with one plain decode per instance
  (Viterbi, tree DP, maximum spanning tree, enumeration: the structure's ``batch_predict`` at the
  trained weights), best of 3, at ``n_jobs=1`` and ``n_jobs=2``; the epoch at each ``n_jobs``
  is reported as a multiple of the bound at the same ``n_jobs``.

Run (the table of ``benches/RESULTS.md``, issue 16, between its ``bench_njobs`` markers)::

    python benches/learners/bench_njobs.py --write benches/RESULTS.md

Options: ``--sets`` (``SETS``'s names), ``--learners``, ``--epochs`` (timed epochs, default 3),
``--limit N`` (the first N training instances: a quick check), ``--out`` (JSON rows, appended).
pytest form (small slices): ``pytest benches/learners/bench_njobs.py --benchmark-enable``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

#: set name → (structure, data set, estimator)
SETS: dict[str, tuple[str, str, str]] = {
    "conll2002/esp": ("chain", "conll2002/esp", "sequence"),
    "yeast": ("multilabel (14 labels, full graph)", "yeast", "multilabel"),
    "corel5k": ("multilabel (374 labels, tree)", "corel5k", "multilabel"),
    "delicious": ("multilabel (983 labels, tree)", "delicious", "multilabel"),
    "ud_english_ewt": ("dependency tree", "ud_english_ewt", "dependency"),
    "yeast-multiclass": ("multiclass (14 classes)", "yeast", "multiclass"),
}
LEARNERS = ["bcfw", "sgd", "cutting-plane", "cutting-plane-n"]
#: n-slack cutting plane solves a dense QP in up to 5000 constraints (sequential, and the bulk
#: of its epoch): it runs on the first SMALL training instances only
SMALL = 300
BEGIN, END = "<!-- bench_njobs:begin -->", "<!-- bench_njobs:end -->"


@dataclass
class Prepared:
    structure: Any
    X: Any
    Y: Any
    C: float
    n: int


def prepared(name: str, limit: int | None = None) -> Prepared:
    """The training split of ``name`` (its first ``limit`` instances), prepared as the default
    estimator prepares it."""
    from bicrit import DependencySVM, MultiLabelSVM, SequenceSVM, StructuredSVM, datasets

    _, source, kind = SETS[name]
    data = datasets.load(source, "train")
    if limit is not None:
        size = data.n_samples if hasattr(data, "n_samples") else len(data)
        data = data.subset(range(min(limit, size)))
    if kind == "multiclass":
        from sklearn.preprocessing import StandardScaler

        # a real multiclass target: the first label each yeast gene has (as tests/golden does)
        Y = np.argmax(
            np.asarray(data.Y.toarray() if hasattr(data.Y, "toarray") else data.Y), axis=1
        )
        X = StandardScaler().fit_transform(np.asarray(data.X, dtype=np.float64))
        est: Any = StructuredSVM(structure="multiclass")
        structure, Xp, Yp = est._prepared(X, Y, False)
    else:
        est = {"sequence": SequenceSVM, "multilabel": MultiLabelSVM, "dependency": DependencySVM}[
            kind
        ]()
        structure, Xp, Yp = est._prepared(data, None, False)
    return Prepared(structure, Xp, Yp, float(est.C), len(Yp))


def _thread_cpu() -> dict[int, tuple[str, float]]:
    """CPU seconds of every thread of this process: tid → (name, seconds)."""
    out = {}
    for tid in os.listdir("/proc/self/task"):
        try:
            base = f"/proc/self/task/{tid}"
            with open(f"{base}/comm") as fh:
                comm = fh.read().strip()
            with open(f"{base}/schedstat") as fh:
                ns = int(fh.read().split()[0])
        except OSError:
            continue
        out[int(tid)] = (comm, ns / 1e9)
    return out


def _split_cpu(before: dict, after: dict) -> tuple[float, list[float]]:
    """CPU seconds of the calling thread and of each pool thread (busiest first) between two
    ``_thread_cpu`` snapshots."""
    main = threading.get_native_id()
    me = after.get(main, ("", 0.0))[1] - before.get(main, ("", 0.0))[1]
    pool = [
        sec - before.get(tid, (comm, 0.0))[1]
        for tid, (comm, sec) in after.items()
        if comm.startswith("bicrit-learner")
    ]
    return me, sorted(pool, reverse=True)


def runner(p: Prepared, learner: str, n_jobs: int, surrogate: str = "margin") -> Any:
    from bicrit.learners import Learner
    from bicrit.learners.fit import Training

    Xn, Yn = p.structure.native_inputs(p.X, p.Y)
    params: dict[str, Any] = {"C": p.C, "random_state": 0, "n_jobs": n_jobs}
    if learner == "bcfw":
        params["tol"] = 0.0
    return Training(p.structure, Xn, Yn, Learner(learner, **params)).runner(
        surrogate, "convex-hull"
    )


def lower_bound(structure: Any, X: Any, w: Any, n_jobs: int, repeats: int = 3) -> float:
    """Best wall seconds of one plain decode per training instance (item 7)."""
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        structure.batch_predict(w, X, n_jobs=n_jobs)
        best = min(best, time.perf_counter() - t0)
    return best


def measure(
    name: str, p: Prepared, learner: str, epochs: int, surrogate: str = "margin"
) -> dict[str, Any]:
    """Interleaved epochs at n_jobs 1 and 2 (the first untimed), the check, the lower bounds."""
    runs = {j: runner(p, learner, j, surrogate) for j in (1, 2)}
    for j in (1, 2):
        runs[j].epoch()
    rows: dict[int, list[dict[str, float]]] = {1: [], 2: []}
    for _ in range(epochs):
        for j in (1, 2):
            snap, c0 = _thread_cpu(), time.process_time()
            st = runs[j].epoch()
            cpu = time.process_time() - c0
            me, pool = _split_cpu(snap, _thread_cpu())
            rows[j].append(
                {
                    "wall": st["time"],
                    "cpu": cpu,
                    "main_cpu": me,
                    "pool_cpu": sum(pool),
                    "busiest_cpu": pool[0] if pool else me,
                    "other_cpu": sum(pool[1:]),
                    "objective": st["objective"],
                }
            )
    w1, w2 = (np.asarray(runs[j].weights(True), dtype=np.float64) for j in (1, 2))
    same = bool(np.array_equal(w1, w2)) and [r["objective"] for r in rows[1]] == [
        r["objective"] for r in rows[2]
    ]
    bound = {j: lower_bound(p.structure, p.X, w1, j) for j in (1, 2)}

    def med(j: int, k: str) -> float:
        return statistics.median(r[k] for r in rows[j])

    return {
        "set": name,
        "structure": SETS[name][0],
        "n": p.n,
        "learner": learner,
        "surrogate": surrogate,
        "epochs": epochs,
        "rows": rows,
        "epoch_j1": med(1, "wall"),
        "epoch_j2": med(2, "wall"),
        "cpu_j1": med(1, "cpu"),
        "cpu_j2": med(2, "cpu"),
        "speedup": med(1, "wall") / med(2, "wall"),
        "main_cpu_j2": med(2, "main_cpu"),
        "busiest_cpu_j2": med(2, "busiest_cpu"),
        "other_cpu_j2": med(2, "other_cpu"),
        "unchanged": same,
        "bound_j1": bound[1],
        "bound_j2": bound[2],
        "over_bound_j1": med(1, "wall") / bound[1],
        "over_bound_j2": med(2, "wall") / bound[2],
        "load": os.getloadavg()[0],
        "commit": _commit(),
    }


def _commit() -> str:
    try:
        return subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            cwd=Path(__file__).parent,
        ).stdout.strip()
    except OSError:
        return "?"


def table(results: list[dict[str, Any]]) -> str:
    head = (
        "| structure | data (n) | learner | epoch n_jobs=1 (s) | epoch n_jobs=2 (s) | "
        "**speed-up** | CPU 1 → 2 (s) | threads' CPU at 2 (s) | unchanged | "
        "lower bound 1 / 2 (s) | "
        "**epoch ÷ bound** at 1 / 2 | load |"
    )
    lines = [head, "|" + "---|" * 12]
    for r in results:
        lines.append(
            f"| {r['structure']} | {r['set']} ({r['n']}) | {r['learner']} | {r['epoch_j1']:.3f} | "
            f"{r['epoch_j2']:.3f} | **{r['speedup']:.2f}×** | "
            f"{r['cpu_j1']:.3f} → {r['cpu_j2']:.3f} | "
            f"{r['busiest_cpu_j2']:.3f} / {r['other_cpu_j2']:.3f} | "
            f"{'yes' if r['unchanged'] else '**NO**'} | "
            f"{r['bound_j1']:.3f} / {r['bound_j2']:.3f} | "
            f"**{r['over_bound_j1']:.1f}×** / {r['over_bound_j2']:.1f}× | {r['load']:.1f} |"
        )
    return "\n".join(lines)


def write_section(path: Path, text: str) -> None:
    """Replaces the text between the ``bench_njobs`` markers of ``path`` (atomically)."""
    from bicrit._atomic import write_text

    doc = path.read_text()
    if BEGIN not in doc or END not in doc:
        raise SystemExit(f"{path} has no {BEGIN} … {END} section to write the table into")
    a, rest = doc.split(BEGIN, 1)
    _, b = rest.split(END, 1)
    write_text(path, f"{a}{BEGIN}\n{text}\n{END}{b}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sets", default=",".join(SETS))
    ap.add_argument("--learners", default=",".join(LEARNERS))
    ap.add_argument(
        "--epochs", type=int, default=3, help="timed epochs per run (after one untimed)"
    )
    ap.add_argument("--limit", type=int, default=None, help="the first N training instances only")
    ap.add_argument("--out", default=None, help="append the JSON rows to this file")
    ap.add_argument("--write", default=None, help="write the table into this RESULTS file")
    a = ap.parse_args()
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    results = []
    for name in a.sets.split(","):
        p = prepared(name, a.limit)
        for learner in a.learners.split(","):
            if learner == "cutting-plane-n" and p.n > SMALL:
                r = measure(name, prepared(name, SMALL), learner, a.epochs)
            else:
                r = measure(name, p, learner, a.epochs)
            results.append(r)
            print(json.dumps(r), flush=True)
            if a.out:
                with open(a.out, "a") as fh:
                    fh.write(json.dumps(r) + "\n")
        print(table(results), flush=True)
    loads = [r["load"] for r in results]
    note = (
        f"`python benches/learners/bench_njobs.py --write benches/RESULTS.md"
        f"{' --limit ' + str(a.limit) if a.limit else ''}"
        f"{' --sets ' + a.sets if a.sets != ','.join(SETS) else ''}"
        f"{' --learners ' + a.learners if a.learners != ','.join(LEARNERS) else ''}"
        f"{' --epochs ' + str(a.epochs) if a.epochs != 3 else ''}` — run {started}, commit "
        f"{results[0]['commit'] if results else '?'}, {os.cpu_count()} cores, load average "
        f"{min(loads, default=0):.1f}–{max(loads, default=0):.1f} during the run. Median of "
        f"{a.epochs} interleaved epochs per run (wall seconds, the Trainer's own clock); CPU = "
        f"process CPU seconds per epoch (all threads); threads' CPU = CPU seconds per epoch of "
        f"the pool's busiest thread / its other thread at n_jobs = 2 (the epoch runs on one of "
        f"them; the calling thread waits); unchanged = "
        f"bit-identical averaged weights and objectives; lower bound = one `batch_predict` "
        f"pass (best of 3) at the same n_jobs."
    )
    text = note + "\n\n" + table(results)
    if a.write:
        write_section(Path(a.write), text)
    return 0


# ------------------------------------------------------------------------------ pytest form

_BENCH = [("conll2002/esp", 400), ("yeast", 300), ("corel5k", 300), ("ud_english_ewt", 200)]


@pytest.mark.parametrize("learner", ["bcfw", "sgd"])
@pytest.mark.parametrize("name,limit", _BENCH)
@pytest.mark.parametrize("n_jobs", [1, 2])
def test_epoch_njobs(benchmark, name: str, limit: int, learner: str, n_jobs: int) -> None:
    from _data import data_root

    if not (data_root() / SETS[name][1]).exists():
        pytest.skip(f"{SETS[name][1]} not found under {data_root()} (set BICRIT_DATA)")
    p = prepared(name, limit)
    run = runner(p, learner, n_jobs)
    run.epoch()
    benchmark.group = f"learners-njobs-{name}-{learner}"
    stats = benchmark.pedantic(run.epoch, rounds=3, iterations=1)
    benchmark.extra_info["n_jobs"] = n_jobs
    assert np.isfinite(stats["objective"])


if __name__ == "__main__":
    raise SystemExit(main())
