"""Clus HMC FunCat (tree) and Gene Ontology (DAG) sets: flat / HSVM / NHSVM / SSVM beside hiclass,
in one run.

For each dataset of :data:`DATASETS`: features imputed with the training means, standardised
with the training mean/std, and given a constant column (value 1: the node rows' bias terms,
regularised like the weights); every model of :data:`MODELS` is a multi-label
:class:`bicrit.HierarchicalSVM` (labels ending at internal nodes get virtual leaves) trained on the
official ``train`` split (``n_jobs=1``) with C from :data:`C_GRID` (:data:`C_GRID_DAG` on the GO
sets) and the decoding threshold τ of :meth:`~bicrit.HierarchicalSVM.predict` (0, or the τ that
lifts the top :data:`TAU_FRACTIONS` of the validation node scores above 0) chosen together on
``valid`` by hierarchical F1, then scored on ``test``: hierarchical micro-F1, precision and recall
(root excluded, Kiritchenko et al.), predicted nodes per instance, and per-level exact-match
accuracy (:func:`bicrit.metrics.hierarchy.per_level_accuracy`, depth = shortest distance from the
root; an instance counts at level d only when its predicted node set at depth d equals the gold
one). ``fit_cpu_s`` is the process CPU time of the chosen fit.

A featureless reference row, ``constant (top k nodes)``, predicts the closure of the k most
frequent training nodes for every instance, k = 1…40 chosen on ``valid``.

hiclass (``pip install -e .[peers]``) is local-only and single-label: it is trained on the
**deepest-path view** — each training instance keeps one path, to its deepest terminal (ties: the
smallest node id; in a DAG the path through the first-listed parents) — with
``LocalClassifierPerParentNode(LinearSVC(C))``, C chosen on ``valid`` from the same grid, and its
predicted path is scored with the same metrics against the full multi-label gold sets.

Run ``python benches/hierarchy/clus_hmc_table.py [--datasets clus_hmc/church_FUN ...]
[--out table.csv] [--md table.md]``.
"""

from __future__ import annotations

import argparse
import time
import warnings
from typing import Any

import numpy as np
import polars as pl

from bicrit._atomic import atomic_write
from bicrit.datasets import load
from bicrit.hierarchy.estimator import HierarchicalSVM
from bicrit.metrics.hierarchy import hierarchical_f1, hierarchical_scores, per_level_accuracy

DATASETS = ("clus_hmc/church_FUN", "clus_hmc/pheno_FUN", "clus_hmc/pheno_GO")
MODELS = ("flat", "hsvm", "nhsvm", "ssvm")
C_GRID = (0.01, 0.1, 1.0, 10.0)
C_GRID_DAG = (0.01, 0.1, 1.0)
"""On the GO DAGs a fit costs more as C grows (NHSVM on pheno_GO: 103 CPU s at C = 1; see
``clus_hmc_diagnose.py`` part 4): the grid stops at 1 there."""
TAU_FRACTIONS = (0.01, 0.03, 0.1, 0.2, 0.4)
FIT = {"max_epochs": 10, "tol": 1e-3, "alpha_every": 3, "max_alternations": 3, "n_jobs": 1}


def _data(name: str, bias: bool = True) -> tuple[Any, ...]:
    """(hierarchy, X, Y, X_valid, Y_valid, X_test, Y_test): training-mean imputation,
    training standardisation and, with ``bias``, a constant column of ones.

    The constant column is what keeps the multi-label models from over-predicting: without it a
    node row scores ``U_n·x`` with mean 0 over the standardised data, so about half the nodes
    score above 0 on any instance and the predicted set is the closure of them (measured on
    church_FUN valid, NHSVM C=1, 10 SGD epochs: 84.9 predicted nodes per instance against 8.6
    gold without it, 1.6 with it)."""
    tr = load(name, "train", impute="mean")
    va = load(name, "valid", impute="mean")
    te = load(name, "test", impute="mean")
    mu, sd = tr.X.mean(axis=0), tr.X.std(axis=0)
    sd[sd == 0] = 1.0

    def keep(ds: Any) -> tuple[np.ndarray, list[np.ndarray]]:  # drop empty label sets ('?')
        ok = [i for i, y in enumerate(ds.Y) if len(y)]
        Z = (ds.X[ok] - mu) / sd
        if bias:
            Z = np.hstack([Z, np.ones((len(ok), 1))])
        return Z, [ds.Y[i] for i in ok]

    return (tr.hierarchy, *keep(tr), *keep(va), *keep(te))


def c_grid(name: str) -> tuple[float, ...]:
    """C candidates of a dataset: :data:`C_GRID`, :data:`C_GRID_DAG` on the GO sets."""
    return C_GRID_DAG if name.endswith("_GO") else C_GRID


def _thresholds(h: Any, est: HierarchicalSVM, Xv: np.ndarray) -> list[tuple[float, float]]:
    """(fraction f, decoding threshold τ) pairs for :meth:`HierarchicalSVM.predict`: τ = 0 (the
    thesis's decoding) and, for f in :data:`TAU_FRACTIONS`, the τ that lifts the top fraction f of
    the validation node scores ``U_n·x`` (original non-root nodes with a non-zero row) above 0."""
    n0 = h.n_nodes
    rows = np.flatnonzero(np.any(est.coef_[:n0] != 0, axis=1))  # flat: the leaves' rows only
    S = np.asarray(Xv @ est.coef_[rows[rows != h.root]].T)
    return [(0.0, 0.0)] + [(f, float(-np.quantile(S, 1.0 - f))) for f in TAU_FRACTIONS]


def _depth(h: Any) -> np.ndarray:
    """Shortest distance from the root (BFS)."""
    depth = np.full(h.n_nodes, -1, dtype=np.int64)
    depth[h.root] = 0
    frontier = [h.root]
    children = h.children
    while frontier:
        nxt = []
        for v in frontier:
            for c in children[v]:
                if depth[c] < 0:
                    depth[c] = depth[v] + 1
                    nxt.append(c)
        frontier = nxt
    return depth


def _scores(h: Any, Y: list[np.ndarray], P: list[np.ndarray]) -> dict[str, Any]:
    """Test hF1, hP, hR, predicted and gold nodes per instance, per-level exact match."""
    acc = per_level_accuracy(Y, P, _depth(h))
    hs = hierarchical_scores(Y, P, root=h.root)
    out: dict[str, Any] = {"hF1": float(hs["hF"]), "hP": float(hs["hP"]), "hR": float(hs["hR"])}
    out["pred_per_inst"] = float(np.mean([len(p) for p in P]))
    out["gold_per_inst"] = float(np.mean([len(y) for y in Y]))
    for d in range(1, min(5, len(acc))):
        out[f"acc_L{d}"] = float(acc[d])
    return out


def _deepest_paths(h: Any, Y: list[np.ndarray]) -> list[list[str]]:
    """One root-to-node path (node names, root excluded) per label set, to its deepest node."""
    depth = _depth(h)
    names = h.names
    out = []
    for y in Y:
        v = int(y[np.lexsort((y, -depth[y]))[0]])
        path = []
        while v != h.root:
            path.append(names[v])
            v = int(h.parents[v][0])
        out.append(path[::-1])
    return out


def _constant(h: Any, Y, Yv, Yt) -> dict[str, Any]:
    """Reference row: one label set for every instance, the closure of the k most frequent
    training nodes, k = 1…40 chosen on ``valid`` by hF1 (uses no features)."""
    counts = np.bincount(np.concatenate(Y), minlength=h.n_nodes)
    counts[h.root] = 0
    order = np.argsort(-counts, kind="stable")
    best = None
    for k in range(1, 41):
        guess = h.closure(order[:k].tolist())
        guess = guess[guess != h.root]
        f1v = hierarchical_f1(Yv, [guess] * len(Yv), root=h.root)
        if best is None or f1v > best[0]:
            best = (f1v, k, guess)
    f1v, k, guess = best
    row: dict[str, Any] = {"model": f"constant (top {k} nodes)", "C": None, "fit_cpu_s": 0.0}
    row["valid_hF1"] = float(f1v)
    row.update(_scores(h, Yt, [guess] * len(Yt)))
    return row


def _hiclass(h: Any, X, Y, Xv, Yv, Xt, Yt) -> dict[str, Any]:
    from hiclass import LocalClassifierPerParentNode
    from sklearn.svm import LinearSVC

    paths = _deepest_paths(h, Y)
    width = max(len(p) for p in paths)
    Ystr = np.array([p + [""] * (width - len(p)) for p in paths], dtype=object)
    index = h.name_to_id

    def to_sets(pred: np.ndarray) -> list[np.ndarray]:
        out = []
        for row in pred:
            names = [str(s) for s in np.atleast_1d(row) if str(s) not in ("", "nan")]
            ids = [index[n] for n in names if n in index]
            out.append(h.closure(ids[-1:]) if ids else np.empty(0, dtype=np.int64))
        return out

    best = None
    for C in C_GRID:
        t0 = time.process_time()
        clf = LocalClassifierPerParentNode(local_classifier=LinearSVC(C=C), n_jobs=1)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            clf.fit(X, Ystr)
        dt = time.process_time() - t0
        f1v = hierarchical_f1(Yv, to_sets(clf.predict(Xv)), root=h.root)
        if best is None or f1v > best[0]:
            best = (f1v, C, clf, dt)
    f1v, C, clf, dt = best
    row = {"model": "hiclass (deepest path)", "C": C, "fit_cpu_s": dt, "valid_hF1": float(f1v)}
    row.update(_scores(h, Yt, to_sets(clf.predict(Xt))))
    return row


def run(
    datasets: tuple[str, ...] = DATASETS,
    models: tuple[str, ...] = MODELS,
    peers: bool = True,
    verbose: bool = True,
) -> pl.DataFrame:
    rows = []
    for name in datasets:
        h, X, Y, Xv, Yv, Xt, Yt = _data(name)
        kind = "tree" if h.is_tree else "DAG"
        rows.append({"dataset": name, "graph": kind, **_constant(h, Y, Yv, Yt)})
        for model in models:
            best = None
            for C in c_grid(name):
                t0 = time.process_time()
                est = HierarchicalSVM(h, model=model, C=C, **FIT).fit(X, Y)
                dt = time.process_time() - t0
                for frac, thr in _thresholds(h, est, Xv):
                    f1v = hierarchical_f1(Yv, est.predict(Xv, threshold=thr), root=h.root)
                    if verbose:
                        print(
                            f"{name} {model} C={C} τ-fraction={frac}: valid hF1 {f1v:.4f} "
                            f"(fit {dt:.1f}s CPU, {est.n_epochs_} epochs)",
                            flush=True,
                        )
                    if best is None or f1v > best[0]:
                        best = (f1v, C, frac, thr, est, dt)
            f1v, C, frac, thr, est, dt = best
            row = {"model": model, "C": C, "tau_frac": frac, "fit_cpu_s": dt}
            row["valid_hF1"] = float(f1v)
            row.update(_scores(h, Yt, est.predict(Xt, threshold=thr)))
            rows.append({"dataset": name, "graph": kind, **row})
        if peers:
            try:
                row = _hiclass(h, X, Y, Xv, Yv, Xt, Yt)
            except ImportError:
                print("hiclass is not installed (pip install -e .[peers]): skipped")
            else:
                rows.append({"dataset": name, "graph": kind, **row})
        if verbose:
            print(markdown(pl.DataFrame(rows).filter(pl.col("dataset") == name)), flush=True)
    return pl.DataFrame(rows)


def markdown(table: pl.DataFrame) -> str:
    """The table as Markdown, one block per dataset (what RESULTS.md shows)."""
    cols = ["model", "C", "tau_frac", "valid_hF1", "hF1", "hP", "hR", "pred_per_inst"]
    cols += [c for c in table.columns if c.startswith("acc_L")] + ["fit_cpu_s"]
    out = []
    for (name,), part in table.group_by("dataset", maintain_order=True):
        gold = part["gold_per_inst"][0]
        out.append(f"**{name}** ({part['graph'][0]}; gold nodes per test instance {gold:.2f})\n")
        out.append("| " + " | ".join(cols) + " |")
        out.append("|" + "---|" * len(cols))
        for r in part.iter_rows(named=True):
            cells = []
            for c in cols:
                v = r.get(c)
                if v is None:
                    cells.append("–")
                elif isinstance(v, float):
                    cells.append(
                        f"{v:.1f}"
                        if c in ("fit_cpu_s", "pred_per_inst")
                        else f"{v:.3g}"
                        if c in ("C", "tau_frac")
                        else f"{v:.3f}"
                    )
                else:
                    cells.append(str(v))
            out.append("| " + " | ".join(cells) + " |")
        out.append("")
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", nargs="*", default=list(DATASETS))
    ap.add_argument("--no-peers", action="store_true")
    ap.add_argument("--models", nargs="*", default=list(MODELS), help="a subset of MODELS")
    ap.add_argument("--out", default=None, help="CSV of the table")
    ap.add_argument("--md", default=None, help="Markdown of the table (for RESULTS.md)")
    ap.add_argument("--epochs", type=int, default=FIT["max_epochs"], help="max_epochs per fit")
    args = ap.parse_args()
    FIT["max_epochs"] = args.epochs
    pl.Config.set_tbl_rows(60)
    pl.Config.set_tbl_cols(20)
    t0 = time.perf_counter()
    table = run(tuple(args.datasets), tuple(args.models), peers=not args.no_peers)
    print(table)
    print(f"total {time.perf_counter() - t0:.0f}s")
    if args.out:
        with atomic_write(args.out) as f:
            table.write_csv(f)
    if args.md:
        with atomic_write(args.md) as f:
            f.write(markdown(table))


if __name__ == "__main__":
    main()
