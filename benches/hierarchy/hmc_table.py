"""The Markdown tables of ``benches/hierarchy/RESULTS-hmc.md`` from the per-set CSV files that
``bicrit reproduce hmc --out benches/hierarchy/hmc`` (or :func:`bicrit.reproduce.hmc.run_set`)
writes: the test AU(PRC) summary beside C-HMCNN, and the hyper-parameters chosen on valid.

Run ``python benches/hierarchy/hmc_table.py [--dir benches/hierarchy/hmc]``; it prints the
tables (paste them into the results page).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import polars as pl

from bicrit.reproduce.hmc import MODELS, OTHERS, SETS, summary

COLUMNS = ("prior", "logistic", *MODELS)


def _md(df: pl.DataFrame) -> str:
    head = "| " + " | ".join(df.columns) + " |"
    rule = "|" + "|".join("---" for _ in df.columns) + "|"
    body = ["| " + " | ".join("" if v is None else str(v) for v in r) + " |" for r in df.rows()]
    return "\n".join([head, rule, *body])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", default=str(Path(__file__).parent / "hmc"))
    args = ap.parse_args()
    d = Path(args.dir)
    frames = [pl.read_csv(d / f"{s}.csv") for s in (*SETS, *OTHERS) if (d / f"{s}.csv").exists()]
    per_seed = pl.concat(frames, how="diagonal_relaxed")
    table = summary(per_seed)
    cols = [
        "set",
        *COLUMNS,
        "C-HMCNN",
        "best",
        "best − prior",
        "best / C-HMCNN",
        "valid's pick",
        "pick / C-HMCNN",
    ]
    table = table.select([c for c in cols if c in table.columns])
    print(_md(table))
    print()
    chosen = (
        per_seed.filter(pl.col("seed") == 0)
        .select(["set", "method", "params", "valid", "test_raw"])
        .with_columns(pl.col("valid").round(4), pl.col("test_raw").round(4))
    )
    print(_md(chosen))


if __name__ == "__main__":
    main()
