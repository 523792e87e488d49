"""LSHTC-like scale benchmark: training time and peak memory of HierarchicalSVM on
:func:`bicrit.datasets.synthetic_lshtc` (≥ 10,000 nodes, ≥ 100,000 instances, ≥ 100,000 float32
sparse features).

Each case runs in a fresh subprocess and reports, from ``resource.getrusage`` (peak RSS), the
memory after generating the data and after training, the generation / fit / predict wall times,
the number of epochs, and the test accuracy. The weight rows are hashed: M·d float64 weights
would be 8 GB at M = 10⁴, d = 10⁵, so the input's 100,000 columns are hashed onto
``--hashed`` columns (signed hashing, :class:`bicrit.HierarchicalSVM`'s ``n_hashed_features``), and
the model holds M × hashed weights.

Run ``python benches/hierarchy/lshtc_scale.py`` (full size: 10,000 nodes, 100,000 features,
200,000 instances generated, of which the 50 % train split — 100,000 — is trained on), or e.g.
``--n 20000`` for a quick look; ``--model`` picks the model(s).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

CHILD = r"""
import json, os, resource, sys, time
import numpy as np
kw = json.loads(sys.argv[1])
def rss():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
from bicrit.datasets import synthetic_lshtc
from bicrit.hierarchy.estimator import HierarchicalSVM
base = rss()
t0 = time.perf_counter()
ds = synthetic_lshtc(n_nodes=kw["nodes"], n=kw["n"], d=kw["d"], seed=0)
gen_s = time.perf_counter() - t0
tr = ds.split("train"); te = ds.split("test")
after_data = rss()
est = HierarchicalSVM(ds.hierarchy, model=kw["model"], C=kw["C"], max_epochs=kw["epochs"],
                      n_hashed_features=kw["hashed"], n_jobs=2, layout="feature",
                      alpha_every=1, max_alternations=kw["epochs"], tol=0.0, random_state=0)
t0 = time.perf_counter()
est.fit(tr.X, tr.Y)
fit_s = time.perf_counter() - t0
after_fit = rss()
t0 = time.perf_counter()
pred = est.predict(te.X)
pred_s = time.perf_counter() - t0
acc = float(np.mean([int(p.max()) == int(l) for p, l in zip(pred, te.leaf)]))
print(json.dumps({"model": kw["model"], "nodes": ds.hierarchy.n_nodes,
                  "leaves": int(len(ds.hierarchy.leaves)), "n_train": tr.n_samples,
                  "n_test": te.n_samples, "d": ds.n_features, "hashed": kw["hashed"],
                  "nnz_train": int(tr.X.nnz), "epochs": int(est.n_epochs_),
                  "generate_s": round(gen_s, 1), "fit_s": round(fit_s, 1),
                  "predict_s": round(pred_s, 1), "test_accuracy": round(acc, 4),
                  "rss_base_mib": round(base), "rss_after_data_mib": round(after_data),
                  "rss_peak_mib": round(after_fit)}))
"""


def run(**kw) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", CHILD, json.dumps(kw)], check=True, capture_output=True, text=True
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=10_000)
    ap.add_argument("--n", type=int, default=200_000)
    ap.add_argument("--d", type=int, default=100_000)
    ap.add_argument("--hashed", type=int, default=4096)
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--C", type=float, default=1.0)
    ap.add_argument("--model", nargs="*", default=["nhsvm"])
    args = ap.parse_args()
    import polars as pl

    rows = []
    for model in args.model:
        r = run(
            nodes=args.nodes,
            n=args.n,
            d=args.d,
            hashed=args.hashed,
            epochs=args.epochs,
            C=args.C,
            model=model,
        )
        print(json.dumps(r), flush=True)
        rows.append(r)
    pl.Config.set_tbl_cols(30)
    print(pl.DataFrame(rows))


if __name__ == "__main__":
    main()
