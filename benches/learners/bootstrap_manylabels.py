"""Is a gap to one-vs-rest within the test split's noise? A paired bootstrap over the test
instances of (bicrit − OvR) for micro-F1 and example-based (Jaccard) accuracy, from the
predictions ``bench_manylabels.py`` saved (issue 16, Done-when 2).

Each resample draws the test instances with replacement (seeded) and recomputes both methods'
metrics on the same draw: micro-F1 from the pooled TP, FP, FN of the drawn instances, accuracy
as the mean of their per-instance Jaccard scores (1 when gold and prediction are both empty, as
:func:`bicrit.metrics.jaccard_accuracy`). The interval is the 2.5 and 97.5 percentiles of the
differences; ``P(Δ < 0)`` is the share of resamples where bicrit is below OvR. This says how much
a difference of this size moves with the draw of the test instances; it does not turn a miss into
a pass.

    python benches/learners/bootstrap_manylabels.py [--sets a,b] [--resamples 10000]

``--intervals`` prints instead each method's own 95 % interval (the same resampling, one method):
the range a figure of that test split moves in with the draw of its instances, against which an
earlier round's figure (whose predictions were not kept) can be read.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from bench_manylabels import PRED_DIR, SETS, load_predictions


def per_instance(Y: np.ndarray, P: np.ndarray) -> tuple[np.ndarray, ...]:
    """(TP, FP, FN, Jaccard) per instance of gold ``Y`` and prediction ``P`` (0/1 rows)."""
    Y, P = Y.astype(bool), P.astype(bool)
    tp = (Y & P).sum(axis=1)
    fp = (~Y & P).sum(axis=1)
    fn = (Y & ~P).sum(axis=1)
    union = tp + fp + fn
    jac = np.where(union == 0, 1.0, tp / np.maximum(union, 1))
    return tp, fp, fn, jac


def _micro(tp: np.ndarray, fp: np.ndarray, fn: np.ndarray) -> np.ndarray:
    den = 2 * tp + fp + fn
    return np.where(den == 0, 1.0, 2 * tp / np.maximum(den, 1))


def _resampled_sums(
    vectors: tuple[np.ndarray, ...], n: int, resamples: int, seed: int
) -> list[np.ndarray]:
    """Per resample (the test instances drawn with replacement, seeded, in blocks of 500), the sum
    of every per-instance vector over the drawn instances."""
    rng = np.random.default_rng(seed)
    blocks = []
    for start in range(0, resamples, 500):
        m = min(500, resamples - start)
        W = rng.multinomial(n, np.full(n, 1.0 / n), size=m).astype(np.float64)  # draw counts
        blocks.append([W @ v for v in vectors])
    return [np.concatenate(col) for col in zip(*blocks, strict=True)]


def paired(
    Y: np.ndarray, A: np.ndarray, B: np.ndarray, resamples: int, seed: int = 0
) -> dict[str, Any]:
    """Bootstrap of (A − B) in micro-F1 and Jaccard accuracy on the same resampled instances."""
    a, b = per_instance(Y, A), per_instance(Y, B)
    n = Y.shape[0]
    sums = _resampled_sums((*a, *b), n, resamples, seed)
    f1 = _micro(*sums[0:3]) - _micro(*sums[4:7])
    acc = (sums[3] - sums[7]) / n
    full_a = _micro(a[0].sum(), a[1].sum(), a[2].sum())
    full_b = _micro(b[0].sum(), b[1].sum(), b[2].sum())
    return {
        "n_test": n,
        "d_f1": float(full_a - full_b),
        "f1_ci": (float(np.percentile(f1, 2.5)), float(np.percentile(f1, 97.5))),
        "p_f1_below": float(np.mean(f1 < 0)),
        "d_acc": float(a[3].mean() - b[3].mean()),
        "acc_ci": (float(np.percentile(acc, 2.5)), float(np.percentile(acc, 97.5))),
        "p_acc_below": float(np.mean(acc < 0)),
    }


def single(Y: np.ndarray, A: np.ndarray, resamples: int, seed: int = 0) -> dict[str, Any]:
    """Bootstrap of one method's micro-F1 and Jaccard accuracy (95 % percentile intervals)."""
    tp, fp, fn, jac = per_instance(Y, A)
    n = Y.shape[0]
    sums = _resampled_sums((tp, fp, fn, jac), n, resamples, seed)
    f, c = _micro(*sums[0:3]), sums[3] / n
    return {
        "n_test": n,
        "f1": float(_micro(tp.sum(), fp.sum(), fn.sum())),
        "f1_ci": (float(np.percentile(f, 2.5)), float(np.percentile(f, 97.5))),
        "acc": float(jac.mean()),
        "acc_ci": (float(np.percentile(c, 2.5)), float(np.percentile(c, 97.5))),
    }


def main() -> int:
    from bicrit import datasets

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sets", default=",".join(SETS))
    p.add_argument("--methods", default="margin,slack")
    p.add_argument("--pred-dir", default=PRED_DIR)
    p.add_argument("--resamples", type=int, default=10000)
    p.add_argument("--intervals", action="store_true", help="each method's own interval")
    a = p.parse_args()
    if a.intervals:
        return intervals(a)
    print(
        "| data | method | n test | Δ micro-F1 | 95 % interval | P(Δ < 0) "
        "| Δ Acc | 95 % interval | P(Δ < 0) |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for name in a.sets.split(","):
        folder = Path(a.pred_dir)
        if not (folder / f"{name}.ovr.npz").exists():
            continue
        Y = np.asarray(datasets.load(name, "test").Y, dtype=np.uint8)
        ovr = load_predictions(a.pred_dir, name, "ovr")
        for method in a.methods.split(","):
            if not (folder / f"{name}.{method}.npz").exists():
                continue
            r = paired(Y, load_predictions(a.pred_dir, name, method), ovr, a.resamples)
            print(
                f"| {name} | {method} | {r['n_test']} | {r['d_f1']:+.4f} "
                f"| [{r['f1_ci'][0]:+.4f}, {r['f1_ci'][1]:+.4f}] | {r['p_f1_below']:.2f} "
                f"| {r['d_acc']:+.4f} | [{r['acc_ci'][0]:+.4f}, {r['acc_ci'][1]:+.4f}] "
                f"| {r['p_acc_below']:.2f} |",
                flush=True,
            )
    return 0


def intervals(a: argparse.Namespace) -> int:
    """The ``--intervals`` table: each saved method's figures with their 95 % intervals."""
    from bicrit import datasets

    print("| data | method | n test | micro-F1 | 95 % interval | Acc | 95 % interval |")
    print("|---|---|---|---|---|---|---|")
    for name in a.sets.split(","):
        folder = Path(a.pred_dir)
        methods = [m for m in a.methods.split(",") if (folder / f"{name}.{m}.npz").exists()]
        if not methods:
            continue
        Y = np.asarray(datasets.load(name, "test").Y, dtype=np.uint8)
        for method in methods:
            r = single(Y, load_predictions(a.pred_dir, name, method), a.resamples)
            print(
                f"| {name} | {method} | {r['n_test']} | {r['f1']:.4f} "
                f"| [{r['f1_ci'][0]:.4f}, {r['f1_ci'][1]:.4f}] | {r['acc']:.4f} "
                f"| [{r['acc_ci'][0]:.4f}, {r['acc_ci'][1]:.4f}] |",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
