"""Candidate defaults that could close the gaps to one-vs-rest LinearSVC (issue 16,
Done-when 2), judged on **training data only**, with the protocol of
``stop_rule_protocol.py``: each training split is cut into a part the whole ``C="auto"``
protocol runs on (its own seeded hold-out for C included) and an evaluation part (20 %, seeds
1 and 2, ``[seed, 29]``) that no candidate sees. The test split is never read.

Variants (each with ``C="auto"``, ``random_state=0``, everything else the default):

* ``graph``: today's default ``MultiLabelSVM`` (``edges="auto"``: full graph ≤ 16 labels, the
  Chow–Liu tree beyond; no per-label bias feature: the edge potentials carry the offsets);
* ``graph+bias``: the same with a constant feature (value 1) appended after the scaling, so each
  label gets its own regularised bias as LinearSVC's intercept (``intercept_scaling=1``);
* ``independent+bias``: no edges (``edges=[]``) with that bias feature: margin rescaling is then
  one hinge per label, OvR's form (LinearSVC's default is the squared hinge);
* ``choose`` (derived, not fitted): ``graph`` or ``independent+bias``, whichever scored higher
  on C="auto"'s own hold-out (the best point of its validation curve; ties: ``graph``) — the
  rule "C='auto' also chooses the graph";
* ``choose-any`` (derived): whichever of ``graph``, ``graph+bias`` and ``independent+bias``
  scored highest on that hold-out (ties: in that order);
* ``graph+sq`` (round 5): ``graph`` with squared slacks (BCFW ``slack_norm=2``:
  ½‖w‖² + C·Σ_i ξ_i²), the structured analogue of LinearSVC's squared hinge;
* ``choose-norm`` (derived): ``graph`` or ``graph+sq``, whichever scored higher on C="auto"'s
  own hold-out (ties: ``graph``) — the rule "C='auto' also chooses the slack norm";
* ``ovr``: one-vs-rest LinearSVC, C chosen on the same hold-out by the same key
  (``bench_manylabels._ovr``), for reference;
* ``ovr-hinge``: the same with ``loss="hinge"`` (LinearSVC's default is the squared hinge): how
  much of a gap is the loss's form, which no hinge-type structured surrogate shares.

    python benches/learners/graph_choice_study.py --sets emotions,birds --seeds 1
    python benches/learners/graph_choice_study.py --table
    python benches/learners/graph_choice_study.py \
        --table-sq benches/learners/results/graph_choice_study*.jsonl

Rows: ``benches/learners/results/graph_choice_study.jsonl`` (round 4: seed 1 there, seed 2 in
``graph_choice_study_seed2.jsonl``, the ``ovr-hinge`` rows in ``graph_choice_study_hinge.jsonl``;
concatenate them for ``--table``).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from bicrit._atomic import write_text

OUT = Path("benches/learners/results/graph_choice_study.jsonl")
VARIANTS = ["graph", "graph+bias", "independent+bias", "ovr"]


def _with_bias(X_fit: Any, X_ev: Any) -> tuple[Any, Any]:
    """Both parts scaled as ``MultiLabelSVM(scale=True)`` scales (moments of the fitting part),
    with a constant column of 1 appended after the scaling (a dense constant column would be
    centred to 0 by the scaling)."""
    import scipy.sparse as sp

    from bicrit.estimators.scaling import apply_scale, learn_scale

    _, mean, scale = learn_scale(X_fit)
    out = []
    for X in (X_fit, X_ev):
        Xs = apply_scale(X, mean, scale)
        ones = np.ones((Xs.shape[0], 1), dtype=np.float64)
        out.append(
            sp.csr_array(sp.hstack([Xs, sp.csr_array(ones)]))
            if sp.issparse(Xs)
            else np.hstack([Xs, ones])
        )
    return out[0], out[1]


def run(data: str, surrogate: str, variant: str, seed: int) -> dict[str, Any]:
    from types import SimpleNamespace

    from bicrit import MultiLabelSVM, datasets
    from bicrit.metrics import multilabel_report

    tr = datasets.load(data, "train")
    n = tr.X.shape[0]
    perm = np.random.default_rng([seed, 29]).permutation(n)
    k = round(0.2 * n)
    ev, fit = np.sort(perm[:k]), np.sort(perm[k:])
    X_fit, X_ev = tr.X[fit], tr.X[ev]
    Y_fit, Y_ev = np.asarray(tr.Y)[fit], np.asarray(tr.Y)[ev]
    c0 = time.process_time()
    row: dict[str, Any] = {"data": data, "surrogate": surrogate, "variant": variant, "seed": seed}
    if variant.startswith("ovr"):
        sys.path.insert(0, str(Path(__file__).parent))
        from bench_manylabels import _ovr

        loss = "hinge" if variant == "ovr-hinge" else "squared_hinge"
        P, c = _ovr(SimpleNamespace(X=X_fit, Y=Y_fit), SimpleNamespace(X=X_ev, Y=Y_ev), loss)
        row.update(C=float(c), epochs=None, validation=None)
    else:
        kw: dict[str, Any] = {"surrogate": surrogate, "C": "auto", "random_state": 0}
        if variant == "graph+sq":
            kw["slack_norm"] = 2
        elif variant != "graph":
            X_fit, X_ev = _with_bias(X_fit, X_ev)
            kw["scale"] = False
        if variant == "independent+bias":
            kw["edges"] = []
        est = MultiLabelSVM(**kw).fit(X_fit, Y_fit)
        P = est.predict(X_ev)
        row.update(
            C=float(est.C_),
            epochs=int(est.n_epochs_),
            validation=max(v for _, v in est.validation_curve_),
            edges=est.edges_kind_,
        )
    row["cpu"] = time.process_time() - c0
    r = multilabel_report(Y_ev, np.asarray(P))
    row.update(micro_f1=float(r["micro_f1"]), jaccard_acc=float(r["jaccard_accuracy"]))
    return row


def _with_choice(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Adds the derived rows: per (data, surrogate, seed), ``choose`` (``graph`` or
    ``independent+bias``) and ``choose-any`` (any of the three fitted variants), each by the
    highest best validation score (ties: the earlier in ``VARIANTS``)."""
    by: dict[tuple[str, str, int], dict[str, dict[str, Any]]] = {}
    for r in rows:
        by.setdefault((r["data"], r["surrogate"], r["seed"]), {})[r["variant"]] = r
    out = list(rows)
    for g in by.values():
        a, b = g.get("graph"), g.get("independent+bias")
        if a is None or b is None:
            continue
        pick = b if b["validation"] > a["validation"] else a
        out.append({**pick, "variant": "choose", "picked": pick["variant"]})
        cands = [g[v] for v in VARIANTS[:-1] if v in g]
        if len(cands) == 3:
            best = max(cands, key=lambda r: r["validation"])  # the first of equal scores
            out.append({**best, "variant": "choose-any", "picked": best["variant"]})
    return out


def table(rows: list[dict[str, Any]]) -> str:
    """Mean over seeds per (data, surrogate, variant): evaluation micro-F1 / Acc (the C of
    each seed); only (data, surrogate, seed) where every fitted variant ran. Summary rows: the
    mean difference to OvR (and how many (data, surrogate) meet it in both), and the mean
    difference to ``graph`` per fit (how many fits have a higher / lower accuracy)."""
    fitted = VARIANTS[:-1]
    have: dict[tuple[str, str, int], set[str]] = {}
    for r in rows:
        have.setdefault((r["data"], r["surrogate"], r["seed"]), set()).add(r["variant"])
    complete = {k for k, v in have.items() if set(fitted) <= v}  # every fitted variant ran
    seeds = {(d, s) for d, _, s in complete}
    rows = [
        r
        for r in rows
        if (r["data"], r["surrogate"], r["seed"]) in complete
        or (r["variant"].startswith("ovr") and (r["data"], r["seed"]) in seeds)
    ]
    rows = _with_choice(rows)
    names = [*VARIANTS[:-1], "choose", "choose-any", "ovr", "ovr-hinge"]
    groups: dict[tuple[str, str], dict[str, list[dict[str, Any]]]] = {}
    for r in rows:
        groups.setdefault((r["data"], r["surrogate"]), {}).setdefault(r["variant"], []).append(r)
    ovr = {r["data"]: r for r in rows if r["variant"] == "ovr"}
    out = ["| data | surrogate | " + " | ".join(names) + " |", "|---" * (2 + len(names)) + "|"]
    diffs: dict[str, list[tuple[float, float]]] = {x: [] for x in names}
    meets: dict[str, int] = {x: 0 for x in names}
    for (data, sur), g in groups.items():
        if sur == "-":
            continue
        g = {
            **g,
            **{
                o: [r for r in rows if r["variant"] == o and r["data"] == data]
                for o in ("ovr", "ovr-hinge")
            },
        }
        cells = []
        full = all(g.get(x) for x in names if x != "ovr-hinge")
        for x in names:
            rs = g.get(x, [])
            if not rs:
                cells.append("–")
                continue
            f1 = float(np.mean([r["micro_f1"] for r in rs]))
            acc = float(np.mean([r["jaccard_acc"] for r in rs]))
            cs = "/".join(f"{r['C']:g}" for r in rs)
            extra = " [" + "/".join(r["picked"][0] for r in rs) + "]" if x == "choose" else ""
            cells.append(f"{f1:.4f} / {acc:.4f} (C {cs}){extra}")
            if full:
                o = g["ovr"]
                of1 = float(np.mean([r["micro_f1"] for r in o]))
                oacc = float(np.mean([r["jaccard_acc"] for r in o]))
                diffs[x].append((f1 - of1, acc - oacc))
                meets[x] += int(f1 >= of1 and acc >= oacc)
        out.append(f"| {data} | {sur} | " + " | ".join(cells) + " |")
    del ovr
    base = {(r["data"], r["surrogate"], r["seed"]): r for r in rows if r["variant"] == "graph"}
    paired: dict[str, list[tuple[float, float]]] = {x: [] for x in names}
    for r in rows:
        b = base.get((r["data"], r["surrogate"], r["seed"]))
        if b is not None:
            paired[r["variant"]].append(
                (r["micro_f1"] - b["micro_f1"], r["jaccard_acc"] - b["jaccard_acc"])
            )
    out.append(
        "| mean − graph, per fit (Acc higher / lower) | | "
        + " | ".join(
            f"{np.mean([d[0] for d in paired[x]]):+.4f} / {np.mean([d[1] for d in paired[x]]):+.4f}"
            f" ({sum(d[1] > 0 for d in paired[x])} / {sum(d[1] < 0 for d in paired[x])})"
            if paired[x]
            else "–"
            for x in names
        )
        + " |"
    )
    out.append(
        "| mean − OvR (pairs ≥ OvR in both) | | "
        + " | ".join(
            f"{np.mean([d[0] for d in diffs[x]]):+.4f} / {np.mean([d[1] for d in diffs[x]]):+.4f}"
            f" ({meets[x]} of {len(diffs[x])})"
            if diffs[x]
            else "–"
            for x in names
        )
        + " |"
    )
    return "\n".join(out)


def table_sq(rows: list[dict[str, Any]]) -> str:
    """Round 5: ``graph`` against ``graph+sq`` and the derived ``choose-norm`` (whichever of the
    two scored higher on C="auto"'s own hold-out; ties: ``graph``), with ``ovr``: evaluation
    micro-F1 / Acc, mean over the seeds where both fitted variants ran (C of each seed; for
    ``choose-norm`` which was taken). Summary rows: the mean difference to ``graph`` per fit
    (fits with a higher / lower accuracy; hold-out score higher / lower) and to OvR (pairs
    ≥ OvR in both)."""
    by: dict[tuple[str, str, int], dict[str, dict[str, Any]]] = {}
    for r in rows:
        by.setdefault((r["data"], r["surrogate"], r["seed"]), {})[r["variant"]] = r
    ovr = {(r["data"], r["seed"]): r for r in rows if r["variant"] == "ovr"}
    names = ["graph", "graph+sq", "choose-norm", "ovr"]
    groups: dict[tuple[str, str], dict[str, list[dict[str, Any]]]] = {}
    for (data, sur, seed), g in by.items():
        if sur == "-" or "graph" not in g or "graph+sq" not in g or (data, seed) not in ovr:
            continue
        a, b = g["graph"], g["graph+sq"]
        pick = b if b["validation"] > a["validation"] else a
        cells = {"graph": a, "graph+sq": b, "choose-norm": {**pick, "picked": pick["variant"]}}
        cells["ovr"] = ovr[(data, seed)]
        for x in names:
            groups.setdefault((data, sur), {}).setdefault(x, []).append(cells[x])
    out = ["| data | surrogate | " + " | ".join(names) + " |", "|---" * (2 + len(names)) + "|"]
    per_fit: dict[str, list[tuple[float, float, float]]] = {x: [] for x in names}
    to_ovr: dict[str, list[tuple[float, float]]] = {x: [] for x in names}
    meets = dict.fromkeys(names, 0)
    for (data, sur), g in groups.items():
        cells = []
        of1 = float(np.mean([r["micro_f1"] for r in g["ovr"]]))
        oacc = float(np.mean([r["jaccard_acc"] for r in g["ovr"]]))
        for x in names:
            rs = g[x]
            f1 = float(np.mean([r["micro_f1"] for r in rs]))
            acc = float(np.mean([r["jaccard_acc"] for r in rs]))
            cs = "/".join(f"{r['C']:g}" for r in rs)
            pick = " [" + "/".join("s" if r.get("picked") == "graph+sq" else "g" for r in rs) + "]"
            cells.append(f"{f1:.4f} / {acc:.4f} (C {cs}){pick if x == 'choose-norm' else ''}")
            to_ovr[x].append((f1 - of1, acc - oacc))
            meets[x] += int(f1 >= of1 and acc >= oacc)
            if x != "ovr":
                for r, b in zip(rs, g["graph"], strict=True):
                    dv = r["validation"] - b["validation"]
                    per_fit[x].append(
                        (r["micro_f1"] - b["micro_f1"], r["jaccard_acc"] - b["jaccard_acc"], dv)
                    )
        out.append(f"| {data} | {sur} | " + " | ".join(cells) + " |")
    out.append(
        "| mean − graph, per fit (Acc higher / lower; hold-out higher / lower) | | "
        + " | ".join(
            f"{np.mean([d[0] for d in per_fit[x]]):+.4f} / "
            f"{np.mean([d[1] for d in per_fit[x]]):+.4f}"
            f" ({sum(d[1] > 0 for d in per_fit[x])} / {sum(d[1] < 0 for d in per_fit[x])};"
            f" {sum(d[2] > 0 for d in per_fit[x])} / {sum(d[2] < 0 for d in per_fit[x])})"
            if per_fit[x]
            else "–"
            for x in names
        )
        + " |"
    )
    out.append(
        "| mean − OvR (pairs ≥ OvR in both) | | "
        + " | ".join(
            f"{np.mean([d[0] for d in to_ovr[x]]):+.4f} / {np.mean([d[1] for d in to_ovr[x]]):+.4f}"
            f" ({meets[x]} of {len(to_ovr[x])})"
            for x in names
        )
        + " |"
    )
    return "\n".join(out)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sets", default="emotions,birds,genbase,medical,scene,yeast,enron")
    p.add_argument("--surrogates", default="margin,slack")
    p.add_argument("--variants", default=",".join(VARIANTS))
    p.add_argument("--seeds", default="1,2")
    p.add_argument("--out", default=str(OUT))
    p.add_argument("--table", action="store_true")
    p.add_argument("--table-sq", nargs="+", metavar="JSONL", help="round 5's table of these files")
    a = p.parse_args()
    out = Path(a.out)
    if a.table_sq:
        files = [Path(f) for f in a.table_sq]
        print(
            table_sq(
                [json.loads(x) for f in files for x in f.read_text().splitlines() if x.strip()]
            )
        )
        return 0
    if a.table:
        print(table([json.loads(x) for x in out.read_text().splitlines() if x.strip()]))
        return 0
    out.parent.mkdir(parents=True, exist_ok=True)
    for seed in (int(s) for s in a.seeds.split(",")):
        for data in a.sets.split(","):
            for variant in a.variants.split(","):
                surrogates = ["-"] if variant.startswith("ovr") else a.surrogates.split(",")
                for sur in surrogates:
                    row = run(data, sur, variant, seed)
                    old = out.read_text() if out.exists() else ""
                    write_text(out, old + json.dumps(row) + "\n")
                    print(json.dumps(row), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
