"""Default ``MultiLabelSVM`` against one-vs-rest LinearSVC on every multi-label set in
``BICRIT_DATA`` (issue 16): fit time, CPU time, peak memory, micro-F1 and example-based
(Jaccard) accuracy on the official test split, in one run.

Every fit runs in its own process, so its peak resident memory (``ru_maxrss``) is its own.
C is chosen the same way for every method: bicrit's ``C="auto"`` (the log grid
``bicrit.estimators.tuning.GRID`` on one seeded ``VALIDATION`` hold-out of the training data,
scored by example-based accuracy, then subset accuracy; refit on all of it). One-vs-rest runs
the same grid on the same hold-out with the same key. Features: ``MultiLabelSVM(scale=True)``
scales dense columns to unit variance and sparse ones to unit maximum; one-vs-rest gets the same
scaling (``StandardScaler``/``MaxAbsScaler``) and LinearSVC's intercept. Nothing is tuned on
the test split.

    python benches/learners/bench_manylabels.py [--sets a,b] [--methods ovr,margin,slack]
        [--out benches/learners/results/manylabels.jsonl]

Methods: ``ovr``, a surrogate (``margin``, ``slack``: the default ``MultiLabelSVM``), or a
surrogate with ``+sq`` (``margin+sq``: the same with squared slacks, ``slack_norm=2``).
``--one NAME METHOD`` runs one fit and prints its JSON row (what the driver calls). Each fit's
test predictions go to ``--pred-dir`` (``NAME.METHOD.npz``: the 0/1 rows bit-packed, with the
commit), for the paired bootstrap of ``bootstrap_manylabels.py``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bicrit._atomic import atomic_write, write_text

SETS = [
    "emotions",
    "birds",
    "genbase",
    "medical",
    "scene",
    "yeast",
    "enron",
    "corel5k",
    "tmc2007-500",
    "delicious",
]
METHODS = ["ovr", "margin", "slack"]
PRED_DIR = "benches/learners/results/manylabels_pred"


def _ovr(tr: Any, te: Any, loss: str = "squared_hinge") -> tuple[Any, float]:
    import numpy as np
    import scipy.sparse as sp
    from sklearn.multiclass import OneVsRestClassifier
    from sklearn.preprocessing import MaxAbsScaler, StandardScaler
    from sklearn.svm import LinearSVC

    from bicrit.estimators.tuning import GRID, VALIDATION
    from bicrit.metrics import multilabel_report

    scaler = MaxAbsScaler() if sp.issparse(tr.X) else StandardScaler()
    X = scaler.fit_transform(tr.X)
    Xt = scaler.transform(te.X)
    Y = np.asarray(tr.Y)
    n = X.shape[0]
    perm = np.random.default_rng([0, 7]).permutation(n)  # C="auto"'s hold-out (seed 0)
    n_val = max(1, round(VALIDATION * n))
    val, fit = np.sort(perm[:n_val]), np.sort(perm[n_val:])

    def model(c: float) -> Any:
        return OneVsRestClassifier(LinearSVC(C=c, loss=loss, random_state=0))

    def key(c: float) -> tuple[float, float]:
        # a label column constant on the fitting part: predict that constant
        Yf = Y[fit]
        m = model(c).fit(X[fit], Yf)
        r = multilabel_report(Y[val], m.predict(X[val]))
        return (float(r["jaccard_accuracy"]), float(r["subset_accuracy"]))

    best = max(GRID, key=lambda c: (key(c), -c))
    return model(best).fit(X, Y).predict(Xt), best


def _commit() -> str:
    """The checked-out commit (``+`` when the library's code has uncommitted changes)."""
    here = Path(__file__).parent
    rev = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=here
    ).stdout.strip()
    dirty = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=no", "--", ":/python", ":/rust"],
        capture_output=True,
        text=True,
        cwd=here,
    ).stdout.strip()
    return rev + ("+" if dirty else "")


def latest(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The last row of each (data, method), in the order of their first rows."""
    last: dict[tuple[str, str], dict[str, Any]] = {}
    for r in rows:
        last[(r["data"], r["method"])] = r
    return list(last.values())


def save_predictions(folder: str, name: str, method: str, P: Any, commit: str) -> None:
    """The test predictions of one fit, bit-packed (``unpack`` reads them back)."""
    import numpy as np

    P = np.asarray(P, dtype=bool)
    path = Path(folder) / f"{name.replace('/', '_')}.{method}.npz"
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_write(path, "wb") as f:
        np.savez_compressed(
            f, bits=np.packbits(P, axis=1), shape=np.asarray(P.shape), commit=np.asarray(commit)
        )


def load_predictions(folder: str, name: str, method: str) -> Any:
    """The 0/1 test predictions :func:`save_predictions` wrote, as an (n, K) uint8 array."""
    import numpy as np

    with np.load(Path(folder) / f"{name.replace('/', '_')}.{method}.npz") as z:
        n, k = (int(v) for v in z["shape"])
        return np.unpackbits(z["bits"], axis=1, count=k)[:n].astype(np.uint8)


def run_one(
    name: str, method: str, n_jobs: int | None, pred_dir: str | None = None
) -> dict[str, Any]:
    import numpy as np

    from bicrit import MultiLabelSVM, datasets
    from bicrit.metrics import multilabel_report

    tr = datasets.load(name, "train")
    te = datasets.load(name, "test")
    t0, c0 = time.perf_counter(), time.process_time()
    row: dict[str, Any] = {"data": name, "method": method, "n": tr.X.shape[0], "K": tr.Y.shape[1]}
    if method == "ovr":
        P, c = _ovr(tr, te)
        row.update(C=c, epochs=None, calls_per_inference=None, edges="-")
    else:
        surrogate, _, variant = method.partition("+")
        est = MultiLabelSVM(
            surrogate=surrogate,
            slack_norm=2 if variant == "sq" else 1,
            C="auto",
            random_state=0,
            n_jobs=n_jobs,
        ).fit(tr)
        P = est.predict(te.X)
        s = est.training_summary()
        row.update(
            C=float(est.C_),
            epochs=int(s["epochs"]),
            calls_per_inference=float(s["calls_per_inference"]),
            edges=est.edges_kind_,
            learner=s["learner"],
        )
    row["commit"] = _commit()
    if pred_dir is not None:
        save_predictions(pred_dir, name, method, P, row["commit"])
    row["fit_time"] = time.perf_counter() - t0
    row["cpu_time"] = time.process_time() - c0
    row["peak_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    r = multilabel_report(np.asarray(te.Y), np.asarray(P))
    row.update(
        micro_f1=float(r["micro_f1"]),
        jaccard_acc=float(r["jaccard_accuracy"]),
        hamming=float(r["hamming_loss"]),
    )
    return row


def table(rows: list[dict[str, Any]]) -> str:
    out = [
        "| data | n × K | method | learner | graph | C | epochs | calls/inf | fit (s) | CPU (s) "
        "| peak MB | micro-F1 | Acc (Jaccard) | ≥ OvR (F1, Acc) | commit |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    rows = latest(rows)
    ovr = {r["data"]: r for r in rows if r["method"] == "ovr"}
    for r in rows:
        o = ovr.get(r["data"])
        beats = (
            "–"
            if r["method"] == "ovr" or o is None
            else f"{'yes' if r['micro_f1'] >= o['micro_f1'] else 'NO'}, "
            f"{'yes' if r['jaccard_acc'] >= o['jaccard_acc'] else 'NO'}"
        )
        cpi = r.get("calls_per_inference")
        out.append(
            f"| {r['data']} | {r['n']} × {r['K']} | {r['method']} | {r.get('learner', '-')} "
            f"| {r.get('edges', '-')} "
            f"| {r['C']:g} | {r.get('epochs') or '–'} | {'–' if cpi is None else f'{cpi:.2f}'} "
            f"| {r['fit_time']:.1f} | {r['cpu_time']:.1f} | {r['peak_mb']:.0f} "
            f"| {r['micro_f1']:.4f} | {r['jaccard_acc']:.4f} | {beats} | {r.get('commit', '?')} |"
        )
    return "\n".join(out)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--one", nargs=2, metavar=("NAME", "METHOD"))
    p.add_argument("--sets", default=",".join(SETS))
    p.add_argument("--methods", default=",".join(METHODS))
    p.add_argument("--n-jobs", type=int, default=None)
    p.add_argument("--out", default="benches/learners/results/manylabels.jsonl")
    p.add_argument("--pred-dir", default=PRED_DIR, help="where each fit's test predictions go")
    p.add_argument("--table", action="store_true", help="print the table of --out and exit")
    a = p.parse_args()
    if a.one:
        print(json.dumps(run_one(a.one[0], a.one[1], a.n_jobs, a.pred_dir)))
        return 0
    out = Path(a.out)
    if a.table:
        print(table([json.loads(x) for x in out.read_text().splitlines() if x.strip()]))
        return 0
    out.parent.mkdir(parents=True, exist_ok=True)
    for name in a.sets.split(","):
        for method in a.methods.split(","):
            cmd = [sys.executable, __file__, "--one", name, method]
            if a.n_jobs is not None:
                cmd += ["--n-jobs", str(a.n_jobs)]
            cmd += ["--pred-dir", a.pred_dir]
            res = subprocess.run(cmd, capture_output=True, text=True, env=os.environ)
            if res.returncode != 0:
                print(f"{name} {method} FAILED:\n{res.stderr[-2000:]}", flush=True)
                continue
            line = res.stdout.strip().splitlines()[-1]
            old = out.read_text() if out.exists() else ""
            write_text(out, old + line + "\n")  # the log rewritten whole, atomically
            print(line, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
