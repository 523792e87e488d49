"""Diagnostics behind the Clus HMC table (``clus_hmc_table.py``): why the multi-label models
over-predicted, and what limits them after the fix. Everything is measured on the ``valid`` split
(the test split is not touched).

1. **Bias column and learner** — church_FUN, NHSVM, 10 epochs, C ∈ {0.01, 1}: predicted vs gold
   nodes per instance and valid hF1, without / with the constant feature column, with the SGD
   and BCFW learners.
2. **Ranking quality** — for the 8 most frequent training nodes of church_FUN, the ROC AUC on
   ``valid`` of the path score ``Σ_{a ∈ Anc(n)} U_a·x`` (NHSVM and HSVM, bias column, the fits
   of part 1's grid), and the rank correlation between a node's mean path score and its training
   frequency.
3. **GO min-cut cost** — pheno_GO with virtual leaves (the ``labels="any"`` space the estimator
   uses on DAGs): CPU milliseconds per inference of the exact min-cut oracle, plain and
   loss-augmented (leaf Hamming), on random node scores shifted so that a given fraction of the
   nodes scores above 0.
4. **GO epoch cost** — pheno_GO, NHSVM, one SGD epoch at C ∈ {0.1, 1}: CPU seconds of the fit,
   CPU seconds of one loss-augmented oracle pass over the training set with the fitted scores,
   and the fraction of node scores above −1 (the loss-augmented cost of a non-gold leaf).

Run ``python benches/hierarchy/clus_hmc_diagnose.py [--parts 1 2 3 4] [--md out.md]``.
"""

from __future__ import annotations

import argparse
import time
import warnings
from typing import Any

import numpy as np
from scipy.stats import spearmanr
from sklearn.metrics import roc_auc_score

from bicrit._atomic import atomic_write
from bicrit.datasets import load
from bicrit.hierarchy import add_virtual_leaves
from bicrit.hierarchy.estimator import HierarchicalSVM
from bicrit.metrics.hierarchy import hierarchical_f1

try:  # run as a script or imported as benches.hierarchy.clus_hmc_diagnose
    from benches.hierarchy.clus_hmc_table import _data
except ImportError:  # pragma: no cover
    from clus_hmc_table import _data  # type: ignore[no-redef]

FIT = {"max_epochs": 10, "tol": 1e-3, "n_jobs": 1}


def bias_and_learner(name: str = "clus_hmc/church_FUN") -> list[dict[str, Any]]:
    """Part 1: predicted set sizes and valid hF1 over bias × learner × C (NHSVM)."""
    rows = []
    for bias in (False, True):
        h, X, Y, Xv, Yv, *_ = _data(name, bias=bias)
        for learner in ("sgd", "bcfw"):
            for C in (0.01, 1.0):
                t0 = time.process_time()
                est = HierarchicalSVM(h, model="nhsvm", C=C, learner=learner, **FIT).fit(X, Y)
                dt = time.process_time() - t0
                P = est.predict(Xv)
                rows.append(
                    {
                        "bias": bias,
                        "learner": learner,
                        "C": C,
                        "epochs": est.n_epochs_,
                        "pred_per_inst": float(np.mean([len(p) for p in P])),
                        "gold_per_inst": float(np.mean([len(y) for y in Yv])),
                        "valid_hF1": float(hierarchical_f1(Yv, P, root=h.root)),
                        "fit_cpu_s": dt,
                    }
                )
    return rows


def ranking(name: str = "clus_hmc/church_FUN") -> list[dict[str, Any]]:
    """Part 2: per-node AUC of the path scores and their correlation with node frequency."""
    h, X, Y, Xv, Yv, *_ = _data(name)
    n0 = h.n_nodes
    A = h.ancestor_matrix[:n0, :n0].toarray().astype(np.float64)
    G = np.zeros((len(Yv), n0))
    for i, y in enumerate(Yv):
        G[i, y] = 1
    freq = np.bincount(np.concatenate(Y), minlength=n0)
    freq[h.root] = 0
    top = np.argsort(-freq, kind="stable")[:8]
    rows = []
    for model in ("hsvm", "nhsvm"):
        for C in (0.01, 1.0):
            est = HierarchicalSVM(h, model=model, C=C, **FIT).fit(X, Y)
            path = (Xv @ est.coef_[:n0].T) @ A.T  # path[i, n] = Σ_{a ∈ Anc(n)} U_a·x_i
            keep = np.flatnonzero(freq > 0)
            row: dict[str, Any] = {"model": model, "C": C}
            row["spearman_freq"] = float(spearmanr(path[:, keep].mean(0), freq[keep]).correlation)
            for v in top.tolist():
                row[f"AUC {h.names[v]}"] = float(roc_auc_score(G[:, v], path[:, v]))
            rows.append(row)
    return rows


def go_min_cut(name: str = "clus_hmc/pheno_GO", n: int = 200) -> list[dict[str, Any]]:
    """Part 3: CPU ms per exact min-cut inference vs the fraction of positive node scores."""
    from bicrit.structures.hierarchy import HierarchyStructure

    tr = load(name, "train", impute="mean")
    Y = [y for y in tr.Y if len(y)]
    vl = add_virtual_leaves(tr.hierarchy, Y)
    h = vl.hierarchy
    s = HierarchyStructure(h, labels="any", multilabel=True, loss="leaf", n_features=1)
    Yr = [np.union1d(y, [h.root]).astype(np.int64) for y in vl.Y[:n]]
    rng = np.random.default_rng(0)
    rows = []
    for frac in (0.01, 0.05, 0.2, 0.5, 1.0):
        S = rng.standard_normal((len(Yr), h.n_nodes))
        S = np.abs(S) if frac >= 1 else S - np.quantile(S, 1 - frac)
        row: dict[str, Any] = {"nodes": h.n_nodes, "oracle": s.oracle_kind, "positive": frac}
        for kind, coef in (("plain", {}), ("loss-augmented", {"loss": 1.0})):
            t0 = time.process_time()
            s.batch_oracle_scores(S, Yr, coef, n_jobs=1)
            row[f"{kind} ms"] = 1e3 * (time.process_time() - t0) / len(Yr)
        rows.append(row)
    return rows


def go_epoch_cost(name: str = "clus_hmc/pheno_GO") -> list[dict[str, Any]]:
    """Part 4: one NHSVM epoch on a GO set vs one loss-augmented oracle pass at its scores."""
    from bicrit.structures.hierarchy import HierarchyStructure

    h0, X, Y, *_ = _data(name)
    Yv = add_virtual_leaves(h0, Y)
    rows = []
    for C in (0.1, 1.0):
        t0 = time.process_time()
        est = HierarchicalSVM(h0, model="nhsvm", C=C, max_epochs=1, n_jobs=1).fit(X, Y)
        fit = time.process_time() - t0
        h = est.hierarchy_
        s = HierarchyStructure(h, labels="any", multilabel=True, loss="leaf", n_features=1)
        Yr = [np.union1d(y, [h.root]).astype(np.int64) for y in Yv.Y]
        S = np.asarray(X @ est.coef_.T)
        t0 = time.process_time()
        s.batch_oracle_scores(S, Yr, {"loss": 1.0}, n_jobs=1)
        rows.append(
            {
                "C": C,
                "epoch fit cpu s": fit,
                "oracle pass cpu s": time.process_time() - t0,
                "scores > -1": float(np.mean(S > -1.0)),
            }
        )
    return rows


def _md(rows: list[dict[str, Any]]) -> str:
    cols = list(rows[0])
    out = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for r in rows:
        cells = [
            f"{r[c]:.3f}" if isinstance(r[c], float) and not isinstance(r[c], bool) else str(r[c])
            for c in cols
        ]
        out.append("| " + " | ".join(cells) + " |")
    return "\n".join(out) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--md", default=None, help="write the tables as Markdown")
    ap.add_argument("--parts", nargs="*", type=int, default=[1, 2, 3, 4])
    args = ap.parse_args()
    every = {
        1: ("1. bias column and learner (church_FUN valid, NHSVM)", bias_and_learner),
        2: ("2. ranking quality of the path scores (church_FUN valid)", ranking),
        3: ("3. GO min-cut cost (pheno_GO)", go_min_cut),
        4: ("4. GO epoch cost (pheno_GO, NHSVM, one epoch)", go_epoch_cost),
    }
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        parts = [(every[k][0], every[k][1]()) for k in args.parts]
    text = "\n".join(f"**{title}**\n\n{_md(rows)}" for title, rows in parts)
    print(text)
    if args.md:
        with atomic_write(args.md) as f:
            f.write(text)


if __name__ == "__main__":
    main()
