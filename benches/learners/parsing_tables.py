"""Markdown table of ``run_parsing_full.py``'s results (for ``benches/RESULTS-sequence.md``):
one row per method found under the folder given (``<method>/parsing.csv``), plus the per-epoch
Trainer time ratio of ProbLoss's own epochs to margin's epochs (``parsing_history.csv``).

Usage: ``python benches/learners/parsing_tables.py benches/learners/results/parsing_full``
"""

from __future__ import annotations

import sys
from pathlib import Path

import polars as pl

COLS = ("uas", "las", "uas_nopunct", "las_nopunct", "uem", "lem", "label_accuracy")


def main(folder: Path) -> None:
    print(
        "| n_train | method | search | epochs | UAS | LAS | UAS no punct. | LAS no punct. | UEM "
        "| LEM | label acc. | Trainer time (s, wall) | s / epoch of own loss | calls / inference |"
    )
    print("|" + "---|" * 14)
    for d in sorted(p for p in folder.iterdir() if (p / "parsing.csv").exists()):
        t = pl.read_csv(d / "parsing.csv")
        h = pl.read_csv(d / "parsing_history.csv")
        own = h.filter(pl.col("phase") == h["phase"][-1])
        for r in t.iter_rows(named=True):
            cells = [str(r["n_train"]), r["method"], r["search"], str(r["epochs"])]
            cells += [f"{r[c]:.3f}" for c in COLS]
            cells += [f"{r['fit_time']:.0f}", f"{own['time'].mean():.0f}"]
            cells += [f"{r['calls_per_inference']:.2f}"]
            print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else "benches/learners/results/parsing_full"))
