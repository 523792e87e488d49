"""How far BCFW gets on yeast per epoch (the evidence behind the yeast protocol's epoch budget,
benches/RESULTS.md "yeast"): one fit on the seed-0 75 % part of train, validated on the other
25 % of train (never on test), printing the relative duality gap and the validation metrics at
fixed epochs.

    python benches/learners/yeast_convergence.py METHOD C_T [INFERENCE [CPU_LIMIT_S]]

METHOD: a key of ``bicrit.reproduce.multilabel.METHODS`` (an SSVM); C_T the thesis-scale
regularisation (C = 1/(n·C_t)); INFERENCE ``auto`` (exact enumeration for yeast) or ``relaxed``
(the LP relaxation); the fit stops after CPU_LIMIT_S process seconds (default 120) or 300 epochs.
"""

from __future__ import annotations

import sys
import time

import numpy as np

import bicrit
from bicrit.learners import make_trainer
from bicrit.reproduce import multilabel as ml

CHECKPOINTS = (5, 10, 15, 20, 30, 50, 75, 100, 150, 200, 300)


def main(argv: list[str]) -> None:
    method, ct = argv[0], float(argv[1])
    inference = argv[2] if len(argv) > 2 else "auto"
    limit = float(argv[3]) if len(argv) > 3 else 120.0
    X_tr, Y_tr, _, _ = ml._load("yeast")
    fit_idx, val_idx = ml.validation_split(len(Y_tr), 0)
    Xf, (Xv,) = ml.prepare(X_tr[fit_idx], [X_tr[val_idx]])
    s = bicrit.structure("multilabel", edges="full", inference=inference)
    s.initialize(Xf, Y_tr[fit_idx])
    trainer = make_trainer(
        s,
        Xf,
        Y_tr[fit_idx],
        surrogate=ml._surrogate(method),
        search="convex-hull",
        learner="bcfw",
        params={"C": 1.0 / (len(fit_idx) * ct), "random_state": 0, "tol": 0.0},
    )
    t0 = time.process_time()
    for e in range(1, max(CHECKPOINTS) + 1):
        st = trainer.epoch()
        if e in CHECKPOINTS:
            P = np.asarray(s.batch_predict(trainer.weights(True), Xv))
            m = ml.evaluate(Y_tr[val_idx], P)
            print(
                f"{method} {inference} ct={ct} ep={e} cpu={time.process_time() - t0:.1f} "
                f"gap/obj={st['gap'] / abs(st['objective']):.4f} acc={m['acc']:.4f} "
                f"ham={m['hamming']:.4f} mif1={m['micro_f1']:.4f} "
                f"cpi={st['calls_per_inference']:.2f}",
                flush=True,
            )
        if time.process_time() - t0 > limit:
            print("stop at", e, time.process_time() - t0)
            break


if __name__ == "__main__":
    main(sys.argv[1:])
