"""Why SSVM trails NHSVM on the unbalanced set: validation accuracy of Shared SVM's loss readings
and of a longer optimisation budget (unbalanced set, seed 0, trained on its train split and scored
on its validation split — the test split is not touched).

Each argument is ``model:C:loss:alternations:epochs`` — ``loss`` is ``normalized`` / ``hamming``
(``HierarchicalSVM(ssvm_loss=...)``) or ``sqrt-hamming`` (a diagnostic-only reading,
√|Ā(l) △ Ā(l_i)|, the thesis's normalized loss with α = 1), ``alternations`` SSVM's α steps
(2 epochs each), ``epochs`` the other models' epochs. Prints validation accuracy, epochs, CPU
seconds and the objective after every α step (SSVM, exact) or epoch (others, the learner's
running objective)::

    python benches/hierarchy/ssvm_diagnostics.py ssvm:10:hamming:5:10 \\
        ssvm:10:sqrt-hamming:5:10 ssvm:10:normalized:15:10 nhsvm:10:-:1:30
"""

from __future__ import annotations

import sys
import time
from typing import Any

import numpy as np

from bicrit.datasets import synthetic_hierarchy
from bicrit.hierarchy import Hierarchy
from bicrit.hierarchy.estimator import HierarchicalSVM


class _SqrtHamming(HierarchicalSVM):
    """SSVM with the fixed loss √|Ā(l) △ Ā(l_i)| (diagnostic only)."""

    def _alpha_and_loss(self, h: Hierarchy, multilabel: bool) -> tuple[np.ndarray, str, Any]:
        a = super()._alpha_and_loss(h, multilabel)[0]
        return a, "normalized", np.ones(h.n_nodes)


def main(specs: list[str]) -> None:
    ds = synthetic_hierarchy("unbalanced", seed=0)
    tr, va = ds.split("train"), ds.split("valid")
    for spec in specs:
        model, C, loss, alt, ep = spec.split(":")
        fit = {"max_epochs": int(ep), "tol": 1e-4, "alpha_every": 2, "n_jobs": 1}
        fit["max_alternations"] = int(alt)
        cls, kw = HierarchicalSVM, {}
        if loss == "sqrt-hamming":
            cls = _SqrtHamming
        elif model == "ssvm":
            kw["ssvm_loss"] = loss
        c0 = time.process_time()
        est = cls(ds.hierarchy, model=model, C=float(C), random_state=0, **kw, **fit)
        est.fit(tr.X, tr.Y)
        cpu = time.process_time() - c0
        h = est.history_
        objs = h.filter(h["phase"] == ("alpha" if model == "ssvm" else "v"))["objective"]
        print(
            f"{spec} val={100 * est.score(va.X, va.Y):.2f} epochs={est.n_epochs_} "
            f"cpu={cpu:.1f}s objective={[round(o) for o in objs.to_list()]}",
            flush=True,
        )


if __name__ == "__main__":
    main(sys.argv[1:])
