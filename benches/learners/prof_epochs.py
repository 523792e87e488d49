"""BCFW epochs of ``bench_epoch_costs.py`` (the same preparation, learner and seed) with
callgrind's instrumentation on for a window of late epochs only: instruction counts are
repeatable under load, unlike CPU time. Run under valgrind with instrumentation off at start:

    valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file=cg.out \\
        python benches/learners/prof_epochs.py --set conll2002/esp --surrogate slack \\
        --skip 10 --measure 3 --callgrind

(epochs 11–13 measured; ``callgrind_control -i on/off`` switches the instrumentation). Prints
the CPU seconds and oracle calls per inference of every epoch and the sha256 of the averaged
weights (to check that a change keeps the fit bit for bit).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import time

from bench_epoch_costs import default_search, prepared


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--set", default="conll2002/esp")
    p.add_argument("--surrogate", default="slack")
    p.add_argument("--search", default=None, help="default: what search='auto' runs")
    p.add_argument("--skip", type=int, default=10, help="epochs before the measured window")
    p.add_argument("--measure", type=int, default=3, help="epochs measured")
    p.add_argument("--callgrind", action="store_true", help="switch callgrind on for the window")
    a = p.parse_args()

    from bicrit.learners import Learner
    from bicrit.learners.fit import Training

    structure, X, Y, C = prepared(a.set)
    Xn, Yn = structure.native_inputs(X, Y)
    search = a.search or default_search(structure, a.surrogate)
    learner = Learner("bcfw", C=C, random_state=0, n_jobs=1, tol=0.0)
    trainer = Training(structure, Xn, Yn, learner).runner(a.surrogate, search)

    def instrument(on: bool) -> None:
        if a.callgrind:
            cmd = ["callgrind_control", "-i", "on" if on else "off", str(os.getpid())]
            subprocess.run(cmd, check=True, capture_output=True)

    rows = []
    for e in range(a.skip + a.measure):
        if e == a.skip:
            instrument(True)
        c0 = time.process_time()
        st = trainer.epoch()
        cpi = st["calls"] / max(1, st["inferences"])
        rows.append({"cpu": round(time.process_time() - c0, 4), "cpi": round(cpi, 4)})
    instrument(False)
    digest = hashlib.sha256(trainer.weights(True).tobytes()).hexdigest()[:16]
    out = {"set": a.set, "surrogate": a.surrogate, "search": search, "rows": rows, "hash": digest}
    print(json.dumps(out), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
