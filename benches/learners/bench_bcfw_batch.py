"""BCFW's mini-batch size (``block_size``) against exact BCFW (``block_size=1``), per epoch
(issue 16, item 6): the certified duality gap and the dual objective after each epoch, so that
the default size is chosen where a mini-batch does not converge materially worse per epoch.

A mini-batch's oracle calls run at the same weights (in parallel on the ``n_jobs`` pool), then
its block steps are applied in order with exact line search at the current weights; its
composition does not depend on ``n_jobs``, so these curves hold for every thread count and are
measured with ``n_jobs=1``. Each epoch reports the exact primal at the averaged weights and the
dual of the averaged point (``objective="exact"``), hence a certified gap. Data are prepared by
the estimators' defaults (``MultiLabelSVM``: scaling, ``edges="auto"``; ``SequenceSVM``: its
featurizer), C = the estimator's default, ``tol = 0``.

    python benches/learners/bench_bcfw_batch.py [--sets yeast,conll2002/esp] [--epochs 10]
        [--sizes 1,4,16,64] [--surrogates margin,slack]

Prints one JSON line per (set, surrogate, size) and a table of gap and dual, relative to
``block_size=1``, at each epoch.
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

SETS = ["yeast", "conll2002/esp"]


def prepared(name: str) -> tuple[Any, Any, Any, float]:
    """(structure, X, Y, C) of the training split, prepared as the default estimator does."""
    from bicrit import MultiLabelSVM, SequenceSVM, datasets

    data = datasets.load(name, "train")
    est = SequenceSVM() if name.startswith("conll") else MultiLabelSVM()
    structure, X, Y = est._prepared(data, None, False)
    return structure, X, Y, float(est.C)


def curve(
    structure: Any, X: Any, Y: Any, C: float, surrogate: str, block_size: int, epochs: int
) -> list[dict[str, float]]:
    """Per epoch: the exact primal, dual and gap of the averaged point, and the CPU seconds."""
    from bicrit.learners import Learner
    from bicrit.learners.fit import Training

    Xn, Yn = structure.native_inputs(X, Y)
    params = {
        "C": C,
        "random_state": 0,
        "n_jobs": 1,
        "tol": 0.0,
        "block_size": block_size,
        "objective": "exact",
    }
    runner = Training(structure, Xn, Yn, Learner("bcfw", **params)).runner(surrogate, "convex-hull")
    rows = []
    for _ in range(epochs):
        c0 = time.process_time()
        st = runner.epoch()
        rows.append(
            {
                "primal": st["objective"],
                "dual": st["dual"],
                "gap": st["gap"],
                "cpu": time.process_time() - c0,
            }
        )
    return rows


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sets", default=",".join(SETS))
    p.add_argument("--epochs", type=int, default=10)
    p.add_argument("--sizes", default="1,4,16,64")
    p.add_argument("--surrogates", default="margin")
    p.add_argument("--C", type=float, default=None, help="C (default: the estimator's)")
    a = p.parse_args()
    sizes = [int(s) for s in a.sizes.split(",")]
    for name in a.sets.split(","):
        structure, X, Y, C = prepared(name)
        C = a.C if a.C is not None else C
        for surrogate in a.surrogates.split(","):
            curves = {}
            for b in sizes:
                curves[b] = curve(structure, X, Y, C, surrogate, b, a.epochs)
                print(
                    json.dumps(
                        {
                            "data": name,
                            "C": C,
                            "surrogate": surrogate,
                            "block_size": b,
                            "rows": curves[b],
                        }
                    ),
                    flush=True,
                )
            base = curves[sizes[0]]
            print(
                f"\n{name} C={C} {surrogate}: gap (dual) per epoch; "
                f"ratio of the gap to block_size={sizes[0]}"
            )
            print("epoch | " + " | ".join(f"b={b}" for b in sizes))
            for e in range(a.epochs):
                cells = []
                for b in sizes:
                    r = curves[b][e]
                    cells.append(
                        f"{r['gap']:.4g} ({r['dual']:.6g}) ×{r['gap'] / base[e]['gap']:.3f}"
                    )
                print(f"{e + 1} | " + " | ".join(cells), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
