"""Why the hierarchical models ranked below the frequency prior (issue 18, item 3): the valid
AU(PRC) of one dataset as the pieces are added one at a time — node biases, the per-node score
(the node's own score σ_n = U_n·x + b_n, or the max-marginal margin δ_n of
:meth:`~bicrit.HierarchicalSVM.node_scores`), per-node Platt calibration
(:class:`~bicrit.hierarchy.NodeCalibration`), the max over the subtree, and the weighted task
loss.

Protocol: fitted on ``train`` (standardised; imputation with the training means), scored on
``valid``; the calibration is fitted on one half of valid and applied to the other, and back
(the selection protocol of :mod:`bicrit.reproduce.hmc`). The test split is not read.

Run ``python benches/hierarchy/hmc_ablation.py [--set cellcycle_FUN] [--model nhsvm] [--C 1]``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from bicrit.datasets import load
from bicrit.hierarchy import NodeCalibration
from bicrit.hierarchy.estimator import HierarchicalSVM
from bicrit.metrics.hierarchy import au_prc
from bicrit.reproduce.hmc import FIT, evaluated_nodes


def _halves(n: int) -> tuple[np.ndarray, np.ndarray]:
    perm = np.random.default_rng(0).permutation(n)
    return perm[: n // 2], perm[n // 2 :]


def calibrated(est, S: np.ndarray, Y: list, coherent: bool) -> np.ndarray:
    a, b = _halves(len(Y))
    P = np.empty_like(S)
    for fit, apply in ((a, b), (b, a)):
        cal = NodeCalibration(est, coherent=coherent).fit_scores(S[fit], [Y[i] for i in fit])
        P[apply] = cal.predict_proba_scores(S[apply])
    return P


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--set", default="cellcycle_FUN")
    ap.add_argument("--model", default="nhsvm")
    ap.add_argument("--C", type=float, default=1.0)
    args = ap.parse_args()
    tr = load(f"clus_hmc/{args.set}", "train", impute="mean")
    va = load(f"clus_hmc/{args.set}", "valid", impute="mean")
    h = tr.hierarchy
    k = [i for i, y in enumerate(tr.Y) if len(y)]
    kv = [i for i, y in enumerate(va.Y) if len(y)]
    X, Y = tr.X[k], [tr.Y[i] for i in k]
    Xv, Yv = va.X[kv], [va.Y[i] for i in kv]
    skip = np.setdiff1d(np.arange(h.n_nodes), evaluated_nodes(h))

    def ap_(S: np.ndarray) -> float:
        return au_prc(Yv, S, exclude=skip)

    freq = np.zeros(h.n_nodes)
    for y in Y:
        freq[y] += 1
    print(f"| {args.set}, {args.model}, C={args.C} | valid AU(PRC) |")
    print("|---|---|")
    print(f"| frequency prior | {ap_(np.tile(freq / len(Y), (len(Yv), 1))):.3f} |")
    for bias, loss in ((False, "auto"), (True, "auto"), (True, "weighted")):
        t0 = time.perf_counter()
        est = HierarchicalSVM(
            h,
            model=args.model,
            C=args.C,
            fit_intercept=bias,
            multilabel_loss=loss,
            random_state=0,
            **FIT,
        ).fit(X, Y)
        fit_s = time.perf_counter() - t0
        tag = f"{'bias' if bias else 'no bias'}, loss {loss}"
        Z = (Xv - est.scale_mean_) / est.scale_std_
        own = Z @ est.coef_.T + est.intercept_
        own = own[:, : h.n_nodes]
        delta = est.node_scores(Xv)
        print(f"| {tag}: own score σ_n | {ap_(own):.3f} |")
        own_cal = calibrated(est, own, Yv, True)
        print(f"| {tag}: own score, calibrated + subtree max | {ap_(own_cal):.3f} |")
        print(f"| {tag}: max-marginal margin δ_n | {ap_(delta):.3f} |")
        print(f"| {tag}: δ_n, calibrated | {ap_(calibrated(est, delta, Yv, False)):.3f} |")
        print(
            f"| {tag}: δ_n, calibrated + subtree max ({fit_s:.0f} s fit) | "
            f"{ap_(calibrated(est, delta, Yv, True)):.3f} |"
        )


if __name__ == "__main__":
    main()
