"""Clus HMC FunCat (tree) and Gene Ontology (DAG) sets: flat / HSVM / NHSVM / SSVM beside hiclass,
in one run.

For each dataset of :data:`DATASETS`: features imputed with the training means and standardised
with the training mean/std; every model of :data:`MODELS` is a multi-label
:class:`bicrit.HierarchicalSVM` (labels ending at internal nodes get virtual leaves) trained on the
official ``train`` split with C chosen on ``valid`` from :data:`C_GRID`, then scored on ``test``:
hierarchical micro-F1 (root excluded, Kiritchenko et al.) and per-level exact-match accuracy
(:func:`bicrit.metrics.hierarchy.per_level_accuracy`, depth = shortest distance from the root).

hiclass (``pip install -e .[peers]``) is local-only and single-label: it is trained on the
**deepest-path view** — each training instance keeps one path, to its deepest terminal (ties: the
smallest node id; in a DAG the path through the first-listed parents) — with
``LocalClassifierPerParentNode(LinearSVC(C))``, C chosen on ``valid`` from the same grid, and its
predicted path is scored with the same metrics against the full multi-label gold sets.

Run ``python benches/hierarchy/clus_hmc_table.py [--datasets clus_hmc/church_FUN ...]``.
"""

from __future__ import annotations

import argparse
import time
import warnings
from typing import Any

import numpy as np
import polars as pl

from bicrit.datasets import load
from bicrit.hierarchy.estimator import HierarchicalSVM
from bicrit.metrics.hierarchy import hierarchical_f1, per_level_accuracy

DATASETS = ("clus_hmc/church_FUN", "clus_hmc/pheno_FUN", "clus_hmc/pheno_GO")
MODELS = ("flat", "hsvm", "nhsvm", "ssvm")
C_GRID = (0.1, 1.0)
FIT = {"max_epochs": 10, "tol": 1e-3, "alpha_every": 3, "max_alternations": 3, "n_jobs": 2}


def _data(name: str) -> tuple[Any, ...]:
    tr = load(name, "train", impute="mean")
    va = load(name, "valid", impute="mean")
    te = load(name, "test", impute="mean")
    mu, sd = tr.X.mean(axis=0), tr.X.std(axis=0)
    sd[sd == 0] = 1.0

    def keep(ds: Any) -> tuple[np.ndarray, list[np.ndarray]]:  # drop empty label sets ('?')
        ok = [i for i, y in enumerate(ds.Y) if len(y)]
        return (ds.X[ok] - mu) / sd, [ds.Y[i] for i in ok]

    return (tr.hierarchy, *keep(tr), *keep(va), *keep(te))


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
    acc = per_level_accuracy(Y, P, _depth(h))
    out: dict[str, Any] = {"hF1": float(hierarchical_f1(Y, P, root=h.root))}
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
        t0 = time.perf_counter()
        clf = LocalClassifierPerParentNode(local_classifier=LinearSVC(C=C), n_jobs=1)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            clf.fit(X, Ystr)
        dt = time.perf_counter() - t0
        f1v = hierarchical_f1(Yv, to_sets(clf.predict(Xv)), root=h.root)
        if best is None or f1v > best[0]:
            best = (f1v, C, clf, dt)
    f1v, C, clf, dt = best
    row = {"model": "hiclass (deepest path)", "C": C, "fit_s": dt, "valid_hF1": float(f1v)}
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
        for model in models:
            best = None
            for C in C_GRID:
                t0 = time.perf_counter()
                est = HierarchicalSVM(h, model=model, C=C, **FIT).fit(X, Y)
                dt = time.perf_counter() - t0
                f1v = est.score(Xv, Yv)
                if verbose:
                    print(f"{name} {model} C={C}: valid hF1 {f1v:.4f} ({dt:.1f}s)", flush=True)
                if best is None or f1v > best[0]:
                    best = (f1v, C, est, dt)
            f1v, C, est, dt = best
            row = {"model": model, "C": C, "fit_s": dt, "valid_hF1": float(f1v)}
            row.update(_scores(h, Yt, est.predict(Xt)))
            rows.append({"dataset": name, "graph": kind, **row})
        if peers:
            try:
                row = _hiclass(h, X, Y, Xv, Yv, Xt, Yt)
            except ImportError:
                print("hiclass is not installed (pip install -e .[peers]): skipped")
            else:
                rows.append({"dataset": name, "graph": kind, **row})
        if verbose:
            print(pl.DataFrame(rows).filter(pl.col("dataset") == name), flush=True)
    return pl.DataFrame(rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", nargs="*", default=list(DATASETS))
    ap.add_argument("--no-peers", action="store_true")
    ap.add_argument("--out", default=None)
    ap.add_argument("--epochs", type=int, default=FIT["max_epochs"], help="max_epochs per fit")
    args = ap.parse_args()
    FIT["max_epochs"] = args.epochs
    pl.Config.set_tbl_rows(60)
    pl.Config.set_tbl_cols(20)
    t0 = time.perf_counter()
    table = run(tuple(args.datasets), peers=not args.no_peers)
    print(table)
    print(f"total {time.perf_counter() - t0:.0f}s")
    if args.out:
        table.write_csv(args.out)


if __name__ == "__main__":
    main()
