"""Per-epoch trajectories for choosing the default stopping rule (issue 16, item 5), on
**training data only**: a seeded hold-out of the training split (multi-label sets, conll2000)
or the corpus's dev split (CoNLL-2002 ``testa``). Never the test split.

Each fit runs ``--epochs`` epochs with every stop off (``tol=None``, no stability stop) and
records per epoch: the share of a seeded training probe whose predictions changed (what the
stability rule reads), BCFW's relative duality gap ``gap / objective``, the held-out scores and
the cumulative process CPU. :func:`stop_epoch` replays a candidate rule on those rows, so every
candidate is judged on the same fits.

    python benches/learners/stop_rule_study.py run --data medical --surrogate slack --C 0.1
    python benches/learners/stop_rule_study.py rules [--rows FILE]

Rows go to ``benches/learners/results/stop_rule_study.jsonl`` (one line per fit).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

import numpy as np

from bicrit._atomic import write_text

OUT = Path("benches/learners/results/stop_rule_study.jsonl")
#: The hold-out seed: not C="auto"'s split (seed [0, 7]), so the rule is judged on other data.
SEED = [1, 13]


def _split(n: int, share: float = 0.2) -> tuple[np.ndarray, np.ndarray]:
    perm = np.random.default_rng(SEED).permutation(n)
    k = max(1, round(share * n))
    return np.sort(perm[k:]), np.sort(perm[:k])


def _estimator(data: str, surrogate: str, C: float, epochs: int) -> Any:
    from bicrit import MultiLabelSVM, SequenceSVM

    kw = {"surrogate": surrogate, "C": C, "max_epochs": epochs, "tol": None, "random_state": 0}
    if data.startswith("conll"):
        return SequenceSVM(**kw)
    return MultiLabelSVM(**kw)


def run(data: str, surrogate: str, C: float, epochs: int) -> dict[str, Any]:
    """One fit on the training part with every stop off; its per-epoch rows."""
    from bicrit import datasets
    from bicrit.learners.fit import _same

    est = _estimator(data, surrogate, C, epochs)
    tr = datasets.load(data, "train")
    if data.startswith("conll2002"):
        tr = tr.to_iob2()
        dev = datasets.load(data, "dev").to_iob2()
        structure, X, Y = est._prepared(tr, None, continuing=False)
        X_va = est._prepare_inputs(dev)
        gold_va = est._score_labels(dev, dev.tags)
        X_tr, Y_tr = X, Y
    else:
        if data == "conll2000":
            tr = tr.to_iob2()
        structure, X, Y = est._prepared(tr, None, continuing=False)
        from bicrit.estimators.validation import n_rows
        from bicrit.structures.base import take

        fit_idx, va_idx = _split(int(n_rows(Y)))
        X_tr, Y_tr = structure.take(X, fit_idx), take(Y, fit_idx)
        X_va = structure.take(X, va_idx)
        Xs, Ys = est._split(tr, None)
        gold_va = take(est._score_labels(Xs, Ys), va_idx)
    cpu0 = time.process_time()
    trace: list[dict[str, Any]] = []
    last: dict[str, Any] = {"P": None}

    def record(stability: Any) -> Any:
        def cb(event: Any) -> None:
            stability(event)  # adds "changed"; its stop is ignored (patience never reached)
            event.stop = False
            w = np.asarray(event.runner.weights(True), dtype=np.float64)
            est.structure_ = structure
            est._set_coef(w)
            P = est._predict_prepared(X_va)
            key = structure.validation_key(gold_va, P)
            prev, last["P"] = last["P"], list(P)
            val_changed = (
                None
                if prev is None
                else sum(not _same(a, b) for a, b in zip(prev, P, strict=True)) / len(P)
            )
            row = event.row
            obj, gap = row.get("objective"), row.get("gap")
            trace.append(
                {
                    "epoch": row["epoch"],
                    "changed": row.get("changed"),
                    "rel_gap": None if gap is None else float(gap) / max(abs(obj), 1e-12),
                    "objective": obj,
                    "task_loss": row.get("task_loss"),
                    "val": [float(k) for k in key],
                    "val_changed": val_changed,
                    "cpu": time.process_time() - cpu0,
                }
            )

        return cb

    orig = est._stability

    def patched(structure_: Any, X_: Any, Y_: Any) -> Any:
        inner = orig(structure_, X_, Y_)
        return record(inner)

    est.n_iter_no_change = 10**6
    est._stability = patched  # type: ignore[method-assign]
    est._train(structure, X_tr, Y_tr, None, False)
    return {
        "data": data,
        "surrogate": surrogate,
        "C": C,
        "learner": est.learner_,
        "n_fit": len(Y_tr),
        "rows": trace,
    }


def stop_epoch(rows: list[dict[str, Any]], share: float, patience: int, gap: float | None) -> int:
    """The epoch the stability rule stops at: ``patience`` calm epochs (≤ ``share`` of the
    training probe changed, after the predictions first moved) running, each with a relative
    gap ≤ ``gap`` (when given); the last epoch if it never fires."""
    calm, moved = 0, False
    for r in rows:
        c = r["changed"]
        if c is None:
            continue
        moved = moved or c > share
        ok_gap = gap is None or r["rel_gap"] is None or r["rel_gap"] <= gap
        calm = calm + 1 if (c <= share and moved and ok_gap) else 0
        if calm >= patience:
            return int(r["epoch"])
    return int(rows[-1]["epoch"])


def held_out_stop(rows: list[dict[str, Any]], patience: int) -> tuple[int, int]:
    """(best epoch, stop epoch) of early stopping on the held-out score with ``patience``
    (:class:`bicrit.learners.fit.HeldOutBest`)."""
    best, best_e, since = None, 0, 0
    for r in rows:
        key = tuple(r["val"])
        if best is None or key > best:
            best, best_e, since = key, int(r["epoch"]), 0
        else:
            since += 1
        if since >= patience:
            return best_e, int(r["epoch"])
    return best_e, int(rows[-1]["epoch"])


def rules(path: Path) -> None:
    """The table of benches/RESULTS.md "Choosing the stopping rule": held-out score (and CPU
    share of the full run) at the epoch each candidate rule stops at or keeps."""
    fits = [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
    names = ["stability", "+gap≤0.3", "+gap≤0.1", "held-out P=5", "held-out P=10"]
    print("| data | surrogate | C | best (epoch) | 50 epochs | " + " | ".join(names) + " |")
    print("|---" * (5 + len(names)) + "|")
    worse = {n: [] for n in names}
    for f in fits:
        rows = f["rows"]
        vals = [r["val"][0] for r in rows]
        best = int(np.argmax(vals))
        total = rows[-1]["cpu"]
        cells = []
        for name in names:
            if name.startswith("held-out"):
                keep, stop = held_out_stop(rows, int(name.split("=")[1]))
            else:
                gap = None if name == "stability" else float(name.split("≤")[1])
                keep = stop = stop_epoch(rows, 0.01, 3, gap)
            v = vals[keep - 1]
            worse[name].append(vals[best] - v)
            cells.append(f"{v:.4f} @{keep} ({rows[stop - 1]['cpu'] / total:.0%})")
        print(
            f"| {f['data']} | {f['surrogate']} | {f['C']:g} | {vals[best]:.4f} @{best + 1} "
            f"| {vals[-1]:.4f} | " + " | ".join(cells) + " |"
        )
    print(
        "| mean shortfall from the best | | | | | "
        + " | ".join(f"{np.mean(worse[n]):.4f}" for n in names)
        + " |"
    )


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--data", required=True)
    r.add_argument("--surrogate", default="margin")
    r.add_argument("--C", type=float, default=1.0)
    r.add_argument("--epochs", type=int, default=50)
    r.add_argument("--out", default=str(OUT))
    s = sub.add_parser("rules")
    s.add_argument("--rows", default=str(OUT))
    a = p.parse_args()
    if a.cmd == "rules":
        rules(Path(a.rows))
        return 0
    res = run(a.data, a.surrogate, a.C, a.epochs)
    out = Path(a.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    old = out.read_text() if out.exists() else ""
    write_text(out, old + json.dumps(res) + "\n")
    last = res["rows"][-1]
    print(a.data, a.surrogate, a.C, len(res["rows"]), last["val"], f"{last['cpu']:.1f}s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
