"""The Markdown tables of the Clus HMC section of ``benches/hierarchy/RESULTS.md`` from the
per-set CSV files that ``bicrit reproduce hmc --out benches/hierarchy/hmc`` (or
:func:`bicrit.reproduce.hmc.run_set`) writes: the test AU(PRC) summary beside C-HMCNN, the
issue's two criteria for the model chosen on valid, and the hyper-parameters chosen on valid.

Run ``python benches/hierarchy/hmc_table.py [--dir benches/hierarchy/hmc]``; it prints the
tables (paste them into the results page).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import polars as pl

from bicrit.reproduce.hmc import MODELS, OTHERS, OURS, PUBLISHED, SETS, summary

COLUMNS = ("prior", "logistic", *OURS)


def _md(df: pl.DataFrame) -> str:
    head = "| " + " | ".join(df.columns) + " |"
    rule = "|" + "|".join("---" for _ in df.columns) + "|"
    body = ["| " + " | ".join("" if v is None else str(v) for v in r) + " |" for r in df.rows()]
    return "\n".join([head, rule, *body])


def _criteria(per_seed: pl.DataFrame) -> str:
    """The issue's criteria for valid's pick (the bicrit model with the best valid AU(PRC)):
    above the prior on every set, ≥ 0.8 × C-HMCNN on at least half of the sets."""
    lines, beats, close, n = [], 0, 0, 0
    for name in per_seed["set"].unique(maintain_order=True).to_list():
        d = per_seed.filter(pl.col("set") == name)
        ours = d.filter(pl.col("method").is_in(OURS))
        if ours.is_empty():
            lines.append(f"- {name}: no bicrit model run")
            continue
        means = ours.group_by("method").agg(pl.col("valid").mean(), pl.col("test").mean())
        pick = means.sort("valid", descending=True).row(0, named=True)
        prior = float(d.filter(pl.col("method") == "prior")["test"].mean())
        ratio = pick["test"] / PUBLISHED[name]
        n += 1
        beats += pick["test"] > prior
        close += ratio >= 0.8
        lines.append(
            f"- {name}: {pick['method']} {pick['test']:.3f} vs prior {prior:.3f} "
            f"({'above' if pick['test'] > prior else 'NOT above'}); "
            f"{ratio:.2f} × C-HMCNN ({'≥' if ratio >= 0.8 else '<'} 0.8)"
        )
    lines.append(
        f"\nvalid's pick above the prior on {beats} of {n} sets; ≥ 0.8 × C-HMCNN on {close} of {n}"
    )
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", default=str(Path(__file__).parent / "hmc"))
    args = ap.parse_args()
    d = Path(args.dir)
    frames = [pl.read_csv(d / f"{s}.csv") for s in (*SETS, *OTHERS) if (d / f"{s}.csv").exists()]
    per_seed = pl.concat(frames, how="diagonal_relaxed")
    if "calibration" not in per_seed.columns:
        per_seed = per_seed.with_columns(pl.lit(None, dtype=pl.String).alias("calibration"))
    # rows written before the calibration column existed were all cross-fitted
    per_seed = per_seed.with_columns(
        pl.when(pl.col("method").is_in(MODELS) & pl.col("calibration").is_null())
        .then(pl.lit("crossfit"))
        .otherwise(pl.col("calibration"))
        .alias("calibration")
    )
    if "score" not in per_seed.columns:
        per_seed = per_seed.with_columns(pl.lit(None, dtype=pl.String).alias("score"))
    # rows written before the score was chosen on valid report the calibrated probabilities;
    # the rule would have chosen the same wherever the raw margins are not better on valid
    old = per_seed.filter(pl.col("method").is_in(MODELS) & pl.col("score").is_null())
    for name, method in old.select("set", "method").unique().rows():
        v = pl.read_csv(d / f"{name}_valid.csv").filter(pl.col("method") == method)
        if v["valid_raw"].max() > v["valid"].max():
            print(f"WARNING: {name} {method}: raw margins better on valid; rerun under the rule")
    per_seed = per_seed.with_columns(
        pl.when(pl.col("method").is_in(MODELS) & pl.col("score").is_null())
        .then(pl.lit("calibrated"))
        .otherwise(pl.col("score"))
        .alias("score")
    )
    table = summary(per_seed)
    cols = [
        "set",
        *COLUMNS,
        "C-HMCNN",
        "valid's pick",
        "pick / C-HMCNN",
        "best",
        "best − prior",
        "best / C-HMCNN",
    ]
    table = table.select([c for c in cols if c in table.columns])
    print(_md(table))
    print()
    print(_criteria(per_seed))
    print()
    chosen = (
        per_seed.filter(pl.col("seed") == 0)
        .select(["set", "method", "params", "calibration", "score", "valid", "test_raw", "fit_s"])
        .with_columns(
            pl.col("valid").round(4),
            pl.col("test_raw").cast(pl.Float64).round(4),
            pl.col("fit_s").round(0),
        )
    )
    print(_md(chosen))


if __name__ == "__main__":
    main()
