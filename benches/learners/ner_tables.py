"""Markdown tables of a ``bicrit.reproduce.ner`` run (for ``benches/RESULTS-sequence.md``).

Reads ``ner.csv`` (one row per dataset × method × seed) from the folder given and prints, per
dataset, mean ± sd over seeds of the test scores of the dev-chosen models, the chosen
configuration (seed 0), the CPU time and its ratio to margin rescaling with SGD.

Usage: ``python benches/learners/ner_tables.py benches/learners/results/ner_full``
"""

from __future__ import annotations

import sys
from pathlib import Path

import polars as pl

from bicrit.reproduce.ner import chosen_history

COLS = ("dev_f1", "f1_micro", "f1_macro", "sentence_f1", "token_accuracy")


def _pm(values: pl.Series) -> str:
    m = float(values.mean())
    if len(values) < 2:
        return f"{m:.3f}"
    return f"{m:.3f} ± {float(values.std()):.3f}"


def tables(folder: Path) -> str:
    t = pl.read_csv(folder / "ner.csv")
    out = []
    head = (
        "| dataset | n_train | method | learner | search | config (seed 0) | seeds | epochs "
        "| dev entity F1 | test entity F1 | macro F1 | sentence F1 | token acc. | CPU (s) "
        "| CPU ratio | calls / inf. |"
    )
    out += [head, "|" + "---|" * (head.count("|") - 1)]
    for (name,), part in t.group_by(["dataset"], maintain_order=True):
        ref = part.filter(pl.col("method") == "margin")["cpu_time"].mean()
        for (method,), g in part.group_by(["method"], maintain_order=True):
            first = g.filter(pl.col("seed") == g["seed"].min()).row(0, named=True)
            cpu = float(g["cpu_time"].mean())
            ratio = f"{cpu / ref:.2f}×" if ref else "–"
            calls = g["calls_per_inference"].drop_nulls()
            out.append(
                "| "
                + " | ".join(
                    [
                        name,
                        str(first["n_train"]),
                        method,
                        first["learner"],
                        first["search"],
                        first["config"],
                        str(len(g)),
                        " / ".join(str(e) for e in g["epochs"].to_list()),
                        *(_pm(g[c]) for c in COLS),
                        f"{cpu:.1f}",
                        ratio,
                        f"{float(calls.mean()):.2f}" if len(calls) else "–",
                    ]
                )
                + " |"
            )
    return "\n".join(out)


def epoch_costs(folder: Path) -> str:
    """Per-epoch CPU time of each method's own phase (mean over the epochs after the first of
    the phase, all seeds, the chosen configurations) and its ratio to margin rescaling (SGD)."""
    t = pl.read_csv(folder / "ner.csv").filter(pl.col("method") != "crfsuite")
    h = pl.read_csv(folder / "ner_history.csv", infer_schema_length=None)
    out = [
        "| dataset | method | CPU per epoch (s) | ratio to margin (SGD) | calls / inference "
        "(own epochs) | fractional (own epochs) |",
        "|---|---|---|---|---|---|",
    ]
    for (name,), part in t.group_by(["dataset"], maintain_order=True):
        per: dict[str, tuple[float, float, float]] = {}
        for r in part.iter_rows(named=True):
            g = chosen_history(h, r)
            d = g["cpu_time"].diff().drop_nulls()
            calls = float(g["calls"].sum()) / max(float(g["inferences"].sum()), 1.0)
            frac = float(g["fractional"].fill_null(0).sum()) / max(
                float(g["inferences"].sum()), 1.0
            )
            per.setdefault(r["method"], [])  # type: ignore[arg-type]
            per[r["method"]].append((float(d.mean()), calls, frac))  # type: ignore[union-attr]
        ref = sum(x[0] for x in per["margin"]) / len(per["margin"]) if "margin" in per else None
        for method, xs in per.items():
            cpu = sum(x[0] for x in xs) / len(xs)
            calls = sum(x[1] for x in xs) / len(xs)
            frac = sum(x[2] for x in xs) / len(xs)
            ratio = f"{cpu / ref:.2f}×" if ref else "–"
            out.append(f"| {name} | {method} | {cpu:.2f} | {ratio} | {calls:.2f} | {frac:.3f} |")
    return "\n".join(out)


if __name__ == "__main__":
    folder = Path(sys.argv[1] if len(sys.argv) > 1 else "benches/learners/results/ner_full")
    print(tables(folder))
    print()
    print(epoch_costs(folder))
