"""The default ``MultiLabelSVM(C="auto")`` under candidate stopping rules, judged on **training
data only** (issue 16, item 5): the training split is cut into a part the whole C="auto"
protocol runs on (its own hold-out for C included) and an evaluation part (20 %, seeded) that no
rule sees. The test split is never read.

Rules (each for the path's fits and the refit):

* ``probe``: the training-probe stability rule on every fit (``n_iter_no_change=3``; the rule
  before the held-out stop);
* ``held-out``: each path fit stops on its held-out score (10 epochs of patience) and is
  represented by its best epoch; the refit runs that many epochs;
* ``held-out+probe``: the path as ``held-out``, the refit stops by the probe rule instead of
  the validated epoch count;

  (these two ran at commit ac00900, whose ``bicrit.learners.fit.HeldOutBest`` was removed after
  this study: check that commit out to rerun them)
* ``probe+gap≤G``: the probe rule, which may stop only at an epoch whose relative duality gap
  (BCFW's ``gap / objective``) is ≤ G;
* ``off``: no stability stop (``n_iter_no_change=None``: ``tol`` or 50 epochs).

    python benches/learners/stop_rule_protocol.py --sets emotions,birds --seeds 1,2
    python benches/learners/stop_rule_protocol.py --table

Rows: ``benches/learners/results/stop_rule_protocol.jsonl``.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

import numpy as np

from bicrit._atomic import write_text

OUT = Path("benches/learners/results/stop_rule_protocol.jsonl")
RULES = ["probe", "held-out", "held-out+probe", "probe+gap≤0.1", "off"]


def _estimator(rule: str, surrogate: str) -> Any:
    from bicrit import MultiLabelSVM
    from bicrit.estimators import tuning

    class Probe(MultiLabelSVM):  # type: ignore[misc]
        """MultiLabelSVM with the rule under study patched in (this study only)."""

        def _stability(self, structure: Any, X: Any, Y: Any) -> Any:
            inner = super()._stability(structure, X, Y)
            if not rule.startswith("probe+gap") or inner is None:
                return inner
            limit = float(rule.split("≤")[1])

            def cb(event: Any) -> None:
                inner(event)
                row = event.row
                gap, obj = row.get("gap"), row.get("objective")
                if gap is not None and float(gap) > limit * max(abs(float(obj)), 1e-12):
                    event.stop = False

            return cb

        def _train(self, *args: Any, **kw: Any) -> Any:
            if rule == "held-out+probe" and kw.get("stops") == [] and kw.get("history"):
                kw.pop("stops")  # the refit: the probe rule, not the validated epochs
                self.__dict__.pop("_tuned_epochs", None)
            return super()._train(*args, **kw)

    est = Probe(surrogate=surrogate, C="auto", random_state=0)
    if rule == "off":
        est.n_iter_no_change = None
    if rule.startswith("held-out"):
        if not hasattr(tuning, "HeldOutBest"):
            raise SystemExit(f"rule {rule!r} needs commit ac00900 (HeldOutBest)")
        from bicrit.learners.fit import HeldOutBest  # type: ignore[attr-defined]

        tuning.HeldOutBest = HeldOutBest
    elif hasattr(tuning, "HeldOutBest"):  # at ac00900: the path as before, the probe rule
        tuning.HeldOutBest = lambda *a, **k: None
    return est


def run(data: str, surrogate: str, rule: str, seed: int) -> dict[str, Any]:
    from bicrit import datasets
    from bicrit.metrics import multilabel_report

    tr = datasets.load(data, "train")
    n = tr.X.shape[0]
    perm = np.random.default_rng([seed, 29]).permutation(n)
    k = round(0.2 * n)
    ev, fit = np.sort(perm[:k]), np.sort(perm[k:])
    est = _estimator(rule, surrogate)
    c0 = time.process_time()
    est.fit(tr.X[fit], tr.Y[fit])
    cpu = time.process_time() - c0
    r = multilabel_report(np.asarray(tr.Y[ev]), np.asarray(est.predict(tr.X[ev])))
    return {
        "data": data,
        "surrogate": surrogate,
        "rule": rule,
        "seed": seed,
        "C": float(est.C_),
        "epochs": int(est.n_epochs_),
        "cpu": cpu,
        "micro_f1": float(r["micro_f1"]),
        "jaccard_acc": float(r["jaccard_accuracy"]),
    }


def table(rows: list[dict[str, Any]]) -> str:
    """Mean over seeds per (data, surrogate, rule): evaluation micro-F1 / Acc, epochs, CPU."""
    groups: dict[tuple[str, str], dict[str, list[dict[str, Any]]]] = {}
    for r in rows:
        groups.setdefault((r["data"], r["surrogate"]), {}).setdefault(r["rule"], []).append(r)
    rules = [x for x in RULES if any(x in g for g in groups.values())]
    out = ["| data | surrogate | " + " | ".join(rules) + " |", "|---" * (2 + len(rules)) + "|"]
    means: dict[str, list[tuple[float, float, float]]] = {x: [] for x in rules}
    for (data, sur), g in groups.items():
        cells = []
        for x in rules:
            rs = g.get(x, [])
            if not rs:
                cells.append("–")
                continue
            f1 = float(np.mean([r["micro_f1"] for r in rs]))
            acc = float(np.mean([r["jaccard_acc"] for r in rs]))
            cpu = float(np.mean([r["cpu"] for r in rs]))
            ep = float(np.mean([r["epochs"] for r in rs]))
            means[x].append((f1, acc, cpu))
            cells.append(f"{f1:.4f} / {acc:.4f} ({ep:.0f} ep, {cpu:.1f} s)")
        out.append(f"| {data} | {sur} | " + " | ".join(cells) + " |")
    out.append(
        "| mean | | "
        + " | ".join(
            f"{np.mean([m[0] for m in means[x]]):.4f} / {np.mean([m[1] for m in means[x]]):.4f}"
            f" ({np.mean([m[2] for m in means[x]]):.1f} s)"
            for x in rules
        )
        + " |"
    )
    return "\n".join(out)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sets", default="emotions,birds,genbase,medical,scene,yeast,enron")
    p.add_argument("--surrogates", default="margin,slack")
    p.add_argument("--rules", default="probe,probe+gap≤0.1,off")
    p.add_argument("--seeds", default="1,2")
    p.add_argument("--out", default=str(OUT))
    p.add_argument("--table", action="store_true")
    a = p.parse_args()
    out = Path(a.out)
    if a.table:
        print(table([json.loads(x) for x in out.read_text().splitlines() if x.strip()]))
        return 0
    out.parent.mkdir(parents=True, exist_ok=True)
    for data in a.sets.split(","):
        for sur in a.surrogates.split(","):
            for seed in (int(s) for s in a.seeds.split(",")):
                for rule in a.rules.split(","):
                    row = run(data, sur, rule, seed)
                    old = out.read_text() if out.exists() else ""
                    write_text(out, old + json.dumps(row) + "\n")
                    print(json.dumps(row), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
