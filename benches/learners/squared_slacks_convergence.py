"""Does squared slacks' lower held-out score come from stopping early? (issue 16, round 5;
training data only.) On the evaluation protocol of ``graph_choice_study.py`` (80 % fitting
part, 20 % evaluation part of the training split, seed ``[seed, 29]``), fits ``MultiLabelSVM``
at fixed C with ``slack_norm`` 1 and 2, once with the default stop and once for
``--epochs`` epochs without the stability rule (``n_iter_no_change=None``, ``tol=0``), and
prints the evaluation micro-F1 / Acc with the last epoch's relative duality gap.

    python benches/learners/squared_slacks_convergence.py --data scene --surrogate margin \\
        --C 0.01,0.1,1 --seed 1
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", default="scene")
    p.add_argument("--surrogate", default="margin")
    p.add_argument("--C", default="0.01,0.1,1")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--epochs", type=int, default=100)
    a = p.parse_args()
    from bicrit import MultiLabelSVM, datasets
    from bicrit.metrics import multilabel_report

    tr = datasets.load(a.data, "train")
    n = tr.X.shape[0]
    perm = np.random.default_rng([a.seed, 29]).permutation(n)
    k = round(0.2 * n)
    ev, fit = np.sort(perm[:k]), np.sort(perm[k:])
    Y = np.asarray(tr.Y)
    for c in (float(x) for x in a.C.split(",")):
        for norm in (1, 2):
            for long in (False, True):
                kw = {"n_iter_no_change": None, "tol": 0.0, "max_epochs": a.epochs} if long else {}
                c0 = time.process_time()
                est = MultiLabelSVM(
                    surrogate=a.surrogate, C=c, slack_norm=norm, random_state=0, **kw
                ).fit(tr.X[fit], Y[fit])
                r = multilabel_report(Y[ev], np.asarray(est.predict(tr.X[ev])))
                last = est.history_.row(-1, named=True)
                print(
                    json.dumps(
                        {
                            "data": a.data,
                            "surrogate": a.surrogate,
                            "seed": a.seed,
                            "C": c,
                            "slack_norm": norm,
                            "stop": f"{a.epochs} epochs" if long else "default",
                            "epochs": int(est.n_epochs_),
                            "rel_gap": last["gap"] / abs(last["objective"]),
                            "micro_f1": float(r["micro_f1"]),
                            "jaccard_acc": float(r["jaccard_accuracy"]),
                            "cpu": time.process_time() - c0,
                        }
                    ),
                    flush=True,
                )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
