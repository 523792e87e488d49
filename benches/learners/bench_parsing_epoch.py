"""Cost of one epoch of the UD English EWT parsing reproduction (issue 5, 4(c)), to size a
full-scale run: process CPU time of one margin-rescaling epoch and of one ProbLoss epoch (capped
k-best recovery, warm-started from that margin epoch) on a ``scale`` fraction of the training
sentences, and their linear extrapolation to the 12,544 sentences of the full training set.

Usage: ``python benches/learners/bench_parsing_epoch.py [scale]`` (default 0.05).
"""

from __future__ import annotations

import sys
import time

from bicrit.reproduce import parsing


def main(scale: float) -> None:
    tb = parsing.prepare(scale, 0, test_scale=0.1)
    full = 12544
    print(f"{tb.n_train} training sentences (scale {scale}); full training set {full}\n")
    print("| method | epochs | CPU (s) | CPU per epoch (s) | extrapolated CPU per full epoch (s) |")
    print("|---|---|---|---|---|")
    for method, epochs, warmup in (("margin", 1, 0), ("probloss", 2, 1)):
        t0 = time.process_time()
        result, _ = parsing.train_method(tb, method, epochs=epochs, warmup=warmup, track=False)
        cpu = time.process_time() - t0
        # the ProbLoss run's own epoch: subtract its margin warm-up epoch's share of the time
        own = result.history[-1]["time"] / max(sum(h["time"] for h in result.history), 1e-12)
        per = cpu * own if method == "probloss" else cpu / epochs
        print(f"| {method} | {epochs} | {cpu:.1f} | {per:.1f} | {per * full / tb.n_train:.0f} |")


if __name__ == "__main__":
    main(float(sys.argv[1]) if len(sys.argv) > 1 else 0.05)
