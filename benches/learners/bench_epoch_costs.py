"""What one training epoch costs, per structure (issue 16): slack against margin rescaling with
the default search (``search="auto"``: ``bicrit.learners.auto.auto_search``; BCFW, the same
epochs, one run), calls per inference early and late,
``n_jobs`` 1 → 2, and the epoch as a multiple of a measured lower bound — one pass over the
data with one plain decode per instance (Viterbi, tree DP, enumeration: the structure's
``batch_predict`` at the trained weights, ``n_jobs=1``).

Data are prepared by each estimator's defaults (``MultiLabelSVM``: scaling, ``edges="auto"``;
``SequenceSVM``: its featurizer) and trained by the native ``Trainer`` epoch by epoch (BCFW,
C = the estimator's default, ``tol = 0``: no early stop). Configurations run one after the
other; on a shared machine compare the CPU column and the ratios. ``--ratio-only`` measures
margin and slack alone (no ``n_jobs`` or lower-bound runs), ``--rounds`` times each,
interleaved, and reports the median per-epoch CPU of each configuration; ``--slack-searches``
adds other searches for slack beside the default (e.g. ``convex-hull``), in the same rounds.

    python benches/learners/bench_epoch_costs.py [--sets yeast,conll2002/esp] [--epochs 6]
    python benches/learners/bench_epoch_costs.py --sets yeast --ratio-only --rounds 3 \
        --slack-searches convex-hull
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

SETS = ["yeast", "conll2002/esp", "corel5k", "delicious"]


def prepared(name: str) -> tuple[Any, Any, Any, float]:
    """(structure, X, Y, C) of the training split, prepared as the default estimator does."""
    from bicrit import MultiLabelSVM, SequenceSVM, datasets

    data = datasets.load(name, "train")
    est = SequenceSVM() if name.startswith("conll") else MultiLabelSVM()
    structure, X, Y = est._prepared(data, None, False)
    return structure, X, Y, float(est.C)


def run(
    structure: Any,
    X: Any,
    Y: Any,
    C: float,
    surrogate: str,
    n_jobs: int,
    epochs: int,
    block_size: int | None = None,
    search: str | None = None,
):
    from bicrit.learners import Learner
    from bicrit.learners.fit import Training

    Xn, Yn = structure.native_inputs(X, Y)
    params: dict[str, Any] = {"C": C, "random_state": 0, "n_jobs": n_jobs, "tol": 0.0}
    if block_size is not None:  # else BCFW's default ("auto" mini-batches)
        params["block_size"] = block_size
    trainer = Training(structure, Xn, Yn, Learner("bcfw", **params)).runner(
        surrogate, search or default_search(structure, surrogate)
    )
    rows = []
    for _ in range(epochs):
        c0 = time.process_time()
        st = trainer.epoch()
        rows.append(
            {
                "time": st["time"],
                "cpu": time.process_time() - c0,
                "cpi": st["calls"] / max(1, st["inferences"]),
            }
        )
    return rows, trainer.weights(True)


def default_search(structure: Any, surrogate: str) -> str:
    """What ``search="auto"`` runs for ``surrogate`` on ``structure``."""
    from bicrit import surrogate as make
    from bicrit.learners.auto import auto_search

    return auto_search(make(surrogate), structure)


def ratio_only(name: str, structure: Any, X: Any, Y: Any, C: float, a: Any) -> dict[str, Any]:
    """Margin and slack (default search, plus ``--slack-searches``), ``--rounds`` interleaved
    runs of ``--epochs`` epochs each; per configuration the median over rounds of the mean
    per-epoch CPU (all epochs, and the ``--late`` last ones), and the calls per inference
    (identical across rounds: deterministic)."""
    import statistics

    extra = [x for x in (a.slack_searches or "").split(",") if x]
    confs = [("margin", None), ("slack", None)] + [("slack", x) for x in extra]
    cpu: dict[str, list[float]] = {}
    late_cpu: dict[str, list[float]] = {}
    out: dict[str, Any] = {"data": name, "C": C, "epochs": a.epochs, "rounds": a.rounds}
    for _ in range(a.rounds):
        for surrogate, search in confs:
            key = f"{surrogate}:{search or 'default'}"
            rows, _ = run(structure, X, Y, C, surrogate, 1, a.epochs, search=search)
            cpu.setdefault(key, []).append(sum(r["cpu"] for r in rows) / a.epochs)
            late_cpu.setdefault(key, []).append(sum(r["cpu"] for r in rows[-a.late :]) / a.late)
            out[key] = {
                "search": search or default_search(structure, surrogate),
                "cpi": [round(r["cpi"], 4) for r in rows],
                "late_cpi": sum(r["cpi"] for r in rows[-a.late :]) / a.late,
            }
    for key, v in cpu.items():
        out[key]["cpu_per_epoch"] = statistics.median(v)
        out[key]["cpu_rounds"] = v
        out[key]["late_cpu_per_epoch"] = statistics.median(late_cpu[key])
    m = out["margin:default"]["cpu_per_epoch"]
    ml = out["margin:default"]["late_cpu_per_epoch"]
    out["summary"] = {k: round(out[k]["cpu_per_epoch"] / m, 3) for k in cpu}
    out["summary_late"] = {k: round(out[k]["late_cpu_per_epoch"] / ml, 3) for k in cpu}
    return out


def lower_bound(structure: Any, X: Any, w: Any, repeats: int = 3) -> float:
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        structure.batch_predict(w, X, n_jobs=1)
        best = min(best, time.perf_counter() - t0)
    return best


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sets", default=",".join(SETS))
    p.add_argument("--epochs", type=int, default=6)
    p.add_argument("--late", type=int, default=2, help="the last epochs counted as 'late'")
    p.add_argument(
        "--block-size",
        type=int,
        default=16,
        help="BCFW with this mini-batch (block_size) also measured at n_jobs 1 and 2 (margin); "
        "the other runs use the default ('auto'). n_jobs per structure and learner: bench_njobs.py",
    )
    p.add_argument("--ratio-only", action="store_true", help="margin and slack only, n_jobs=1")
    p.add_argument("--rounds", type=int, default=1, help="interleaved rounds (--ratio-only)")
    p.add_argument("--slack-searches", default="", help="more searches for slack (--ratio-only)")
    a = p.parse_args()
    for name in a.sets.split(","):
        structure, X, Y, C = prepared(name)
        if a.ratio_only:
            print(json.dumps(ratio_only(name, structure, X, Y, C, a)), flush=True)
            continue
        out: dict[str, Any] = {"data": name, "C": C, "epochs": a.epochs}
        for surrogate in ("margin", "slack"):
            for n_jobs in (1, 2):
                rows, w = run(structure, X, Y, C, surrogate, n_jobs, a.epochs)
                key = f"{surrogate}_j{n_jobs}"
                out[key] = rows
                if surrogate == "margin" and n_jobs == 1:
                    out["lower_bound"] = lower_bound(structure, X, w)
        for n_jobs in (1, 2):
            rows, _ = run(structure, X, Y, C, "margin", n_jobs, a.epochs, a.block_size)
            out[f"margin_b_j{n_jobs}"] = rows
        out["summary"] = summary(out, a.epochs, a.late)
        print(json.dumps(out), flush=True)
    return 0


def summary(out: dict[str, Any], epochs: int, n_late: int) -> dict[str, float]:
    """Per-epoch means, ratios, late calls per inference and the epoch ÷ the lower bound."""

    def ep(k: str, f: str) -> float:
        return sum(r[f] for r in out[k]) / epochs

    def late(k: str) -> float:
        return sum(r["cpi"] for r in out[k][-n_late:]) / n_late

    return {
        "epoch_margin_s": ep("margin_j1", "time"),
        "epoch_slack_s": ep("slack_j1", "time"),
        "slack_over_margin_wall": ep("slack_j1", "time") / ep("margin_j1", "time"),
        "slack_over_margin_cpu": ep("slack_j1", "cpu") / ep("margin_j1", "cpu"),
        "late_cpi_margin": late("margin_j1"),
        "late_cpi_slack": late("slack_j1"),
        "speedup_j2_margin": ep("margin_j1", "time") / ep("margin_j2", "time"),
        "speedup_j2_slack": ep("slack_j1", "time") / ep("slack_j2", "time"),
        "speedup_j2_margin_block": ep("margin_b_j1", "time") / ep("margin_b_j2", "time"),
        "block_j2_over_exact_j1": ep("margin_b_j2", "time") / ep("margin_j1", "time"),
        "lower_bound_s": out["lower_bound"],
        "epoch_over_bound_margin": ep("margin_j1", "time") / out["lower_bound"],
        "epoch_over_bound_slack": ep("slack_j1", "time") / out["lower_bound"],
    }


if __name__ == "__main__":
    raise SystemExit(main())
