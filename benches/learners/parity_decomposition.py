"""Why the default ``MultiLabelSVM`` trails one-vs-rest LinearSVC on scene and yeast (issue 16,
Done-when 2): the factors between the two, one at a time, judged on **training data only**.

Protocol (as ``graph_choice_study.py``): each training split is cut into a fitting part (80 %)
and an evaluation part (20 %, seeds 1–4, ``[seed, 29]``) that no choice sees. On the
fitting part, every variant runs ``C="auto"``'s protocol by hand — the same seeded 20 % hold-out
(``[0, 7]``, as :mod:`bicrit.estimators.tuning`), every C of the grid fitted cold on the rest,
each C scored on that hold-out by example-based accuracy then subset accuracy, the best refitted
on the whole fitting part — so that the evaluation part's score is also recorded at *every* C
(the curve, diagnostic only: nothing is chosen on it). The test split is never read.

Variants (``K`` labels, ``h_k = w_k·x (+ b_k)``):

* ``ovr-sq``: the bench's one-vs-rest LinearSVC (squared hinge, intercept with
  ``intercept_scaling=1``, i.e. a regularised bias);
* ``ovr-hinge``: the same with the hinge;
* ``ovr-hinge-nob``: the hinge, no intercept;
* ``ovr-sq-nob``: the squared hinge, no intercept;
* ``ovr-sq-ub``: the squared hinge with ``intercept_scaling=100`` (the intercept's penalty
  divided by 10⁴: an all but unregularised bias);
* ``ind``: ``MultiLabelSVM(edges=[], surrogate=S)``, no bias, the default stopping. With no
  edges and margin rescaling + Hamming the structured hinge is Σ_k max(0, 1 − ±h_k): exactly
  ``ovr-hinge-nob``'s objective at the same C (the loss is the Hamming *distance*, not
  normalised, so C maps one to one);
* ``ind-conv``: ``ind`` run to convergence (``n_iter_no_change=None``, ``tol=1e-5``, 150 epochs):
  the stopping rule's share;
* ``ind+b``: ``ind`` with a constant feature of 1 after the scaling (a regularised bias per
  label, LinearSVC's ``intercept_scaling=1``); ``ind+b-conv`` to convergence;
* ``graph``: the default (``edges="auto"``: the full graph on scene and yeast), default stopping;
  ``graph-conv`` to convergence; ``graph+b``: with the bias feature.

    python benches/learners/parity_decomposition.py --sets scene,yeast --seeds 1,2 \
        --surrogates margin --variants ovr-sq,ovr-hinge,ind,ind-conv
    python benches/learners/parity_decomposition.py --table      # or --ladder
    python benches/learners/parity_decomposition.py --identity   # ind ≡ ovr-hinge-nob, scaling
    python benches/learners/parity_decomposition.py --inside     # pairs inside LinearSVC's margin
    python benches/learners/parity_decomposition.py --test-hinge # OvR hinge on test, record only

Rows (one per data, surrogate, variant, seed): ``results/parity_decomposition.jsonl``.
"""

from __future__ import annotations

import argparse
import json
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from bicrit._atomic import write_text

# LinearSVC at C ≥ 1 stops at max_iter, as in the bench (bench_manylabels._ovr): kept as is
warnings.filterwarnings("ignore", message="Liblinear failed to converge")

OUT = Path("benches/learners/results/parity_decomposition.jsonl")
GRID = tuple(10.0**k for k in range(-3, 3))
EXTRA = (1e-5, 1e-4)  # below C="auto"'s grid: curve only, never chosen
CONV = {"n_iter_no_change": None, "tol": 1e-5, "max_epochs": 150}


def _scaled(X_fit: Any, X_ev: Any, bias: bool) -> tuple[Any, Any]:
    """Both parts scaled as ``MultiLabelSVM(scale=True)`` scales (moments of the fitting part),
    optionally with a constant column of 1 appended after the scaling."""
    from bicrit.estimators.scaling import apply_scale, learn_scale

    _, mean, scale = learn_scale(X_fit)
    out = []
    for X in (X_fit, X_ev):
        Xs = np.asarray(apply_scale(X, mean, scale), dtype=np.float64)
        if bias:
            Xs = np.hstack([Xs, np.ones((Xs.shape[0], 1))])
        out.append(Xs)
    return out[0], out[1]


def _model(variant: str, surrogate: str, c: float) -> Any:
    from sklearn.multiclass import OneVsRestClassifier
    from sklearn.svm import LinearSVC

    from bicrit import MultiLabelSVM

    if variant.startswith("ovr"):
        loss = "squared_hinge" if variant.startswith("ovr-sq") else "hinge"
        return OneVsRestClassifier(
            LinearSVC(
                C=c,
                loss=loss,
                fit_intercept=not variant.endswith("-nob"),
                intercept_scaling=100.0 if variant.endswith("-ub") else 1.0,
                random_state=0,
            )
        )
    kw: dict[str, Any] = {"surrogate": surrogate, "C": c, "random_state": 0, "scale": False}
    if variant.startswith("ind"):
        kw.update(edges=[], inference="tree")  # no edges: the exact forest DP, O(K)
    if variant.endswith("-conv"):
        kw.update(CONV)
    return MultiLabelSVM(**kw)


def run(data: str, surrogate: str, variant: str, seed: int) -> dict[str, Any]:
    from bicrit import datasets
    from bicrit.metrics import multilabel_report

    tr = datasets.load(data, "train")
    X_all = tr.X.toarray() if hasattr(tr.X, "toarray") else np.asarray(tr.X)
    Y_all = np.asarray(tr.Y)
    n = X_all.shape[0]
    perm = np.random.default_rng([seed, 29]).permutation(n)
    k = round(0.2 * n)
    ev, fit = np.sort(perm[:k]), np.sort(perm[k:])
    bias = "+b" in variant
    X_fit, X_ev = _scaled(X_all[fit], X_all[ev], bias)
    Y_fit, Y_ev = Y_all[fit], Y_all[ev]
    # C="auto"'s hold-out of the fitting part (bicrit.estimators.tuning._folds, seed 0)
    m = X_fit.shape[0]
    p = np.random.default_rng([0, 7]).permutation(m)
    n_val = max(1, round(0.2 * m))
    va, trn = np.sort(p[:n_val]), np.sort(p[n_val:])

    def score(Y: Any, P: Any) -> dict[str, float]:
        P = np.asarray(P).astype(bool)
        Yb = np.asarray(Y).astype(bool)
        r = multilabel_report(Y, P.astype(np.int64))
        s = {k: float(r[k]) for k in ("jaccard_accuracy", "subset_accuracy", "micro_f1")}
        tp = float((P & Yb).sum())
        s["precision"] = tp / max(1.0, float(P.sum()))
        s["recall"] = tp / max(1.0, float(Yb.sum()))
        s["cardinality"] = float(P.sum(axis=1).mean())  # gold: Yb.sum(axis=1).mean()
        s["empty"] = float((P.sum(axis=1) == 0).mean())
        return s

    c0 = time.process_time()
    curve = []
    for c in (*EXTRA, *GRID):
        est = _model(variant, surrogate, c).fit(X_fit[trn], Y_fit[trn])
        curve.append(
            {
                "C": c,
                "val": score(Y_fit[va], est.predict(X_fit[va])),
                "eval": score(Y_ev, est.predict(X_ev)),  # diagnostic only
                "epochs": getattr(est, "n_epochs_", None),
            }
        )
    key = {
        pt["C"]: (pt["val"]["jaccard_accuracy"], pt["val"]["subset_accuracy"])
        for pt in curve
        if pt["C"] in GRID
    }
    best = max(GRID, key=lambda c: (key[c], -c))
    est = _model(variant, surrogate, best).fit(X_fit, Y_fit)
    s = score(Y_ev, est.predict(X_ev))
    return {
        "eval": s,
        "gold_cardinality": float(Y_ev.sum(axis=1).mean()),
        "data": data,
        "surrogate": surrogate if not variant.startswith("ovr") else "-",
        "variant": variant,
        "seed": seed,
        "C": best,
        "epochs": getattr(est, "n_epochs_", None),
        "micro_f1": s["micro_f1"],
        "jaccard_acc": s["jaccard_accuracy"],
        "curve": curve,
        "cpu": time.process_time() - c0,
    }


def table(rows: list[dict[str, Any]]) -> str:
    """Mean over seeds per (data, surrogate, variant): evaluation micro-F1 / Acc at the C
    chosen on the hold-out (C per seed), and the best evaluation Acc over the grid (oracle C,
    diagnostic)."""
    groups: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    for r in rows:
        groups.setdefault((r["data"], r["surrogate"], r["variant"]), []).append(r)
    out = [
        "| data | surrogate | variant | seeds | chosen C | epochs | micro-F1 | Acc | "
        "precision / recall | labels per example (empty) | "
        "eval Acc at each C (1e-5 … 1e2, mean of seeds) |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for (d, s, v), rs in sorted(groups.items()):
        f1 = np.mean([r["micro_f1"] for r in rs])
        acc = np.mean([r["jaccard_acc"] for r in rs])
        cs = "/".join(f"{r['C']:g}" for r in rs)
        ep = "/".join(str(r["epochs"]) if r["epochs"] is not None else "–" for r in rs)
        curve = np.mean([[pt["eval"]["jaccard_accuracy"] for pt in r["curve"]] for r in rs], axis=0)
        cells = " ".join(f"{a:.3f}" for a in curve)
        seeds = "/".join(str(r["seed"]) for r in rs)
        e = {k: np.mean([r["eval"][k] for r in rs]) for k in rs[0]["eval"]}
        gold = np.mean([r["gold_cardinality"] for r in rs])
        out.append(
            f"| {d} | {s} | {v} | {seeds} | {cs} | {ep} | {f1:.4f} | {acc:.4f} | "
            f"{e['precision']:.3f} / {e['recall']:.3f} | {e['cardinality']:.2f} of {gold:.2f} "
            f"({e['empty']:.3f}) | {cells} |"
        )
    return "\n".join(out)


def identity(data: str = "scene", cs: tuple[float, ...] = (1e-3, 0.1)) -> None:
    """Prints, on the whole training split of ``data``, the objective
    ½‖W‖² + C·Σ_i Σ_k max(0, 1 − ±w_k·x_i) of ``MultiLabelSVM(edges=[])`` (margin rescaling,
    BCFW, 500 epochs) and of K LinearSVC hinge problems without intercept at the same C, the
    share of equal predicted labels, and the largest difference between the model's scaling and
    ``StandardScaler``'s: the C mapping, the loss normalisation and the scaling, checked."""
    from sklearn.preprocessing import StandardScaler

    from bicrit import datasets

    tr = datasets.load(data, "train")
    X0 = tr.X.toarray() if hasattr(tr.X, "toarray") else np.asarray(tr.X)
    Y = np.asarray(tr.Y)
    X, _ = _scaled(X0, X0[:1], False)
    gap = np.abs(X - StandardScaler().fit_transform(X0)).max()
    print(f"{data}: max |scaling − StandardScaler| = {gap:g}")
    S = 2 * Y - 1
    for c in cs:
        a = _model("ind-conv", "margin", c).set_params(tol=1e-6, max_epochs=500).fit(X, Y)
        b = _model("ovr-hinge-nob", "-", c)
        b.estimator.set_params(tol=1e-8, max_iter=100_000)
        b.fit(X, Y)
        Wa = np.asarray(a.coef_).ravel()[: Y.shape[1] * X.shape[1]].reshape(Y.shape[1], -1)
        Wb = np.vstack([e.coef_.ravel() for e in b.estimators_])
        objs = [0.5 * (W**2).sum() + c * np.maximum(0, 1 - S * (X @ W.T)).sum() for W in (Wa, Wb)]
        agree = float((a.predict(X) == b.predict(X)).mean())
        print(
            f"C {c:g}: objective bicrit {objs[0]:.5f} ({a.n_epochs_} epochs), "
            f"liblinear {objs[1]:.5f}; equal predicted labels {agree:.4f}"
        )


def inside(data: str, seed: int = 1, cs: tuple[float, ...] = (1e-3, 1e-2, 0.1)) -> None:
    """Prints, for LinearSVC per label on the fitting part of ``seed`` (squared hinge and hinge,
    intercept), the share of (instance, label) pairs inside the margin (y·f < 1): where it is
    near 1 the squared hinge is a ridge regression of the ±1 targets."""
    from sklearn.svm import LinearSVC

    from bicrit import datasets

    tr = datasets.load(data, "train")
    X0 = tr.X.toarray() if hasattr(tr.X, "toarray") else np.asarray(tr.X)
    perm = np.random.default_rng([seed, 29]).permutation(X0.shape[0])
    fit = np.sort(perm[round(0.2 * X0.shape[0]) :])
    X, _ = _scaled(X0[fit], X0[:1], False)
    Y = np.asarray(tr.Y)[fit]
    for c in cs:
        for loss in ("squared_hinge", "hinge"):
            shares = [
                float(np.mean((2 * Y[:, j] - 1) * svc.decision_function(X) < 1))
                for j in range(Y.shape[1])
                if len(set(Y[:, j])) == 2
                for svc in [LinearSVC(C=c, loss=loss, random_state=0).fit(X, Y[:, j])]
            ]
            print(f"{data} C {c:g} {loss}: inside the margin {np.mean(shares):.3f}")


def test_hinge(sets: list[str]) -> None:
    """The bench's one-vs-rest (``bench_manylabels._ovr``, C chosen on the training hold-out)
    with the squared hinge and with the hinge, scored on the **test** split: for the record
    only, run after every decision."""
    import sys
    from types import SimpleNamespace

    from bicrit import datasets
    from bicrit.metrics import multilabel_report

    sys.path.insert(0, str(Path(__file__).parent))
    from bench_manylabels import _ovr

    for d in sets:
        tr, te = datasets.load(d, "train"), datasets.load(d, "test")
        for loss in ("squared_hinge", "hinge"):
            P, c = _ovr(SimpleNamespace(X=tr.X, Y=tr.Y), SimpleNamespace(X=te.X, Y=te.Y), loss)
            r = multilabel_report(np.asarray(te.Y), np.asarray(P))
            print(
                f"{d} {loss}: C {c:g} micro-F1 {r['micro_f1']:.4f} Acc {r['jaccard_accuracy']:.4f}"
            )


#: The ladder from one-vs-rest LinearSVC to the default ``MultiLabelSVM``, one factor a rung.
LADDER = (
    ("ovr-sq", "one-vs-rest LinearSVC (the bench's)"),
    ("ovr-hinge", "squared hinge → hinge"),
    ("ind+b-conv", "liblinear → BCFW on the same objective, run to convergence"),
    ("ind+b", "the default stopping rule"),
    ("graph+b", "the edges (full graph)"),
    ("graph", "the bias feature dropped (offsets carried by the edges only): the default"),
)


def ladder(rows: list[dict[str, Any]]) -> str:
    """Per (data, surrogate): each rung of :data:`LADDER` (mean of the seeds where every rung
    ran) and its change from the rung above; then ``graph-conv`` against ``graph``."""
    by: dict[tuple[str, str, int], dict[str, dict[str, Any]]] = {}
    for r in rows:
        for sur in ("margin", "slack") if r["surrogate"] == "-" else (r["surrogate"],):
            by.setdefault((r["data"], sur, r["seed"]), {})[r["variant"]] = r
    names = [v for v, _ in LADDER]
    out = [
        "| data | surrogate | rung | what changes | seeds | micro-F1 | Acc | Δ micro-F1 | Δ Acc |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for d, sur in sorted({(d, s) for d, s, _ in by}):
        seeds = sorted(
            s for (dd, ss, s), g in by.items() if (dd, ss) == (d, sur) and set(names) <= set(g)
        )
        if not seeds:
            continue
        prev: tuple[float, float] | None = None
        base: tuple[float, float] | None = None
        for v, what in [*LADDER, ("graph-conv", "the default run to convergence")]:
            rs = [by[(d, sur, s)].get(v) for s in seeds]
            if any(r is None for r in rs):
                continue
            f1 = float(np.mean([r["micro_f1"] for r in rs]))
            acc = float(np.mean([r["jaccard_acc"] for r in rs]))
            if v == "graph-conv":
                prev = base
            if v == "ind+b-conv" and sur != "margin":
                what = f"BCFW with {sur} rescaling (on independent labels it does not decompose)"
            delta = "| – | –" if prev is None else f"| {f1 - prev[0]:+.4f} | {acc - prev[1]:+.4f}"
            label = "/".join(str(s) for s in seeds)
            out.append(f"| {d} | {sur} | {v} | {what} | {label} | {f1:.4f} | {acc:.4f} {delta} |")
            prev = (f1, acc)
            if v == "graph":
                base = prev
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sets", default="scene,yeast")
    ap.add_argument("--seeds", default="1,2")
    ap.add_argument("--surrogates", default="margin")
    ap.add_argument("--variants", default="ovr-sq,ovr-hinge,ind,ind-conv")
    ap.add_argument("--out", default=str(OUT))
    ap.add_argument("--table", action="store_true")
    ap.add_argument("--ladder", action="store_true", help="print the ladder table")
    ap.add_argument("--identity", action="store_true", help="check the objective identity")
    ap.add_argument("--inside", action="store_true", help="share of pairs inside the margin")
    ap.add_argument("--test-hinge", action="store_true", help="OvR hinge on test (record only)")
    a = ap.parse_args()
    out = Path(a.out)
    if a.identity:
        identity()
        return
    if a.inside:
        for d in a.sets.split(","):
            inside(d)
        return
    if a.test_hinge:
        test_hinge(a.sets.split(","))
        return
    if a.table or a.ladder:
        rows = [json.loads(x) for x in out.read_text().splitlines() if x.strip()]
        print(ladder(rows) if a.ladder else table(rows))
        return
    done = out.read_text() if out.exists() else ""
    for data in a.sets.split(","):
        for seed in (int(s) for s in a.seeds.split(",")):
            for variant in a.variants.split(","):
                surs = ["-"] if variant.startswith("ovr") else a.surrogates.split(",")
                for sur in surs:
                    r = run(data, sur, variant, seed)
                    done += json.dumps(r) + "\n"
                    write_text(out, done)
                    print(
                        f"{data} {sur} {variant} seed {seed}: C {r['C']:g} "
                        f"F1 {r['micro_f1']:.4f} Acc {r['jaccard_acc']:.4f} cpu {r['cpu']:.1f}",
                        flush=True,
                    )


if __name__ == "__main__":
    main()
