"""Why NHSVM's gasch2_GO test AU(PRC) (.211) is far below its valid one (.347): the final model
(train + valid) is calibrated with Platt parameters fitted on the *selection* model's valid
scores (calibration = valid). Compares the two models' node-score scales, and scores the
selection model itself, calibrated on valid, on test (a diagnostic: it chooses nothing).

    BICRIT_DATA=/work/shared/data nice -n 19 python benches/hierarchy/hmc_nhsvm_calibration.py

Output of the run in benches/hierarchy/RESULTS.md ("NHSVM on gasch2_GO ranks below the prior").
"""

from __future__ import annotations

import time

import numpy as np

from bicrit.datasets import load
from bicrit.hierarchy import NodeCalibration
from bicrit.metrics.hierarchy import au_prc
from bicrit.reproduce import hmc


def main() -> None:
    name, params = "gasch2_GO", {"model": "nhsvm", "C": 0.1, "multilabel_loss": "auto"}
    raw = {s: load(f"clus_hmc/{name}", s) for s in ("train", "valid", "test")}
    h = raw["train"].hierarchy
    keep = hmc.evaluated_nodes(h)
    skip = np.setdiff1d(np.arange(h.n_nodes), keep)
    train = hmc._Data(raw["train"].X, list(raw["train"].Y)).labelled()
    valid = hmc._Data(raw["valid"].X, list(raw["valid"].Y)).labelled()
    test = hmc._Data(raw["test"].X, list(raw["test"].Y))
    both = hmc._Data(np.vstack([train.X, valid.X]), train.Y + valid.Y)
    Xtr, Xva, Xte_sel = hmc._imputed(train.X, valid.X, test.X)
    Xboth, Xte = hmc._imputed(both.X, test.X)

    def ap(Y: list[np.ndarray], S: np.ndarray) -> float:
        return au_prc(Y, S, exclude=skip)

    t0 = time.process_time()
    sel = hmc._svm(h, params, 0, hmc.FIT["max_epochs"]).fit(Xtr, train.Y)
    fin = hmc._svm(h, params, 0, hmc.FIT["max_epochs"]).fit(Xboth, both.Y)
    S_va, S_te_sel, S_te_fin = sel.node_scores(Xva), sel.node_scores(Xte_sel), fin.node_scores(Xte)
    cal = NodeCalibration(sel).fit_scores(S_va, valid.Y)
    print(f"cpu {time.process_time() - t0:.1f}")
    scale = [float(np.median(np.abs(S[:, keep]))) for S in (S_va, S_te_sel, S_te_fin)]
    print(
        "median |node score|: selection on valid {:.4g}, selection on test {:.4g}, "
        "final on test {:.4g}".format(*scale)
    )
    print(f"nodes with virtual leaves: selection {len(sel.alpha_)}, final {len(fin.alpha_)}")
    protocol = ap(test.Y, cal.predict_proba_scores(S_te_fin))
    print(f"test, final model, selection model's valid calibration (the protocol): {protocol:.4f}")
    own = ap(test.Y, cal.predict_proba_scores(S_te_sel))
    print(f"test, selection model, its own valid calibration: {own:.4f}")
    print(f"test raw: selection {ap(test.Y, S_te_sel):.4f}, final {ap(test.Y, S_te_fin):.4f}")


if __name__ == "__main__":
    main()
