"""Markdown table of ``bicrit reproduce multilabel --out DIR`` (one row per dataset × method).

Usage: ``python benches/learners/multilabel_table.py DIR [--write RESULTS_DIR]`` — reads every
``DIR/<dataset>_seeds.csv``, prints the mean over seeds of each metric per (dataset, method) and,
for each dataset, which method is best on each metric; ``--write`` copies the merged per-seed rows
to ``RESULTS_DIR/multilabel_seeds.csv``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import polars as pl

from bicrit._atomic import atomic_write

METRICS = ("acc", "subset_acc", "hamming", "micro_f1", "example_f1")
LOWER_IS_BETTER = {"hamming"}


def load(folder: Path) -> pl.DataFrame:
    """Every per-seed CSV of ``folder`` (yeast's own table comes from yeast_table.py)."""
    files = sorted(p for p in folder.glob("*_seeds.csv") if not p.name.startswith("yeast"))
    if not files:
        raise SystemExit(f"no <dataset>_seeds.csv in {folder}")
    return pl.concat([pl.read_csv(p) for p in files], how="diagonal_relaxed")


def markdown(rows: pl.DataFrame) -> str:
    """One Markdown row per (dataset, method): mean metrics, C_t, epochs, calls per inference;
    the best value of each metric within a dataset in bold."""
    agg = rows.group_by("dataset", "method", maintain_order=True).agg(
        pl.len().alias("seeds"),
        *[pl.col(m).mean() for m in METRICS],
        pl.col("C_thesis").median(),
        pl.col("epochs").mean(),
        pl.col("calls_per_inference").mean(),
    )
    lines = [
        "| data | method | seeds | Acc | subset acc | Hamming | micro-F1 | example F1 | C_t | "
        "epochs | calls/inference |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for (dataset,), part in agg.group_by("dataset", maintain_order=True):
        best = {m: (part[m].min() if m in LOWER_IS_BETTER else part[m].max()) for m in METRICS}
        for r in part.iter_rows(named=True):
            cells = [f"**{r[m]:.4f}**" if r[m] == best[m] else f"{r[m]:.4f}" for m in METRICS]
            epochs = "–" if r["epochs"] is None else f"{r['epochs']:.0f}"
            calls = "–" if r["calls_per_inference"] is None else f"{r['calls_per_inference']:.2f}"
            lines.append(
                f"| {dataset} | {r['method']} | {r['seeds']} | {' | '.join(cells)} | "
                f"{r['C_thesis']:g} | {epochs} | {calls} |"
            )
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", type=Path)
    ap.add_argument("--write", type=Path, default=None)
    args = ap.parse_args()
    rows = load(args.folder)
    print(markdown(rows))
    if args.write is not None:
        args.write.mkdir(parents=True, exist_ok=True)
        with atomic_write(args.write / "multilabel_seeds.csv") as f:
            rows.write_csv(f)


if __name__ == "__main__":
    main()
