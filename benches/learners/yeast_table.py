"""The yeast multi-label table of benches/RESULTS.md (issue 5, Done-when 1), generated from the
per-seed rows of ``bicrit reproduce yeast`` (``<out>/yeast_seeds.csv``, ``<out>/yeast_cv.csv``).

    python benches/learners/yeast_table.py DIR [DIR ...] [--write benches/learners/results]

Several DIRs (runs that split the seeds with ``first_seed``) are concatenated. Prints, as
Markdown: the table of ours (mean ± sd over seeds) beside the thesis's and the peers' numbers,
the verdict per (method, metric) — "reached" (the thesis's number met), "beats every peer"
(strictly better mean than every peer measured on the split, our own one-vs-rest included) or
"neither" — and the mean cross-validation score per C_t (the selection curve). With ``--write``
the concatenated CSV files are written there.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import polars as pl

from bicrit._atomic import atomic_write
from bicrit.reproduce import multilabel as ml

#: Lower is better for these metrics.
LOWER = {"hamming"}
COMPARED = ("acc", "hamming", "micro_f1")


def load(dirs: list[Path], stem: str) -> pl.DataFrame:
    """The concatenated ``<dir>/yeast_<stem>.csv`` files, sorted by method and seed."""
    frames = [
        pl.read_csv(d / f"yeast_{stem}.csv") for d in dirs if (d / f"yeast_{stem}.csv").exists()
    ]
    return pl.concat(frames, how="diagonal_relaxed").sort("method", "seed")


def fmt(mean: float | None, sd: float | None = None) -> str:
    if mean is None:
        return "–"
    return f"{mean:.3f}" if sd is None else f"{mean:.3f} ± {sd:.3f}"


def _opt(x: float | None, digits: int) -> str:
    return "–" if x is None else f"{x:.{digits}f}"


def table(per_seed: pl.DataFrame) -> str:
    """The Markdown table: ours, then the reference rows."""
    s = ml.summarize(per_seed)
    head = (
        "| method | source | seeds | Acc (example-based) | subset acc | Hamming | micro-F1 pooled "
        "| micro-F1 per instance | C_t chosen (per seed) | epochs (final fit) | max rel. gap "
        "| final fit CPU s | calls/inference |"
    )
    lines = [head, "|" + "---|" * 13]
    for r in s.iter_rows(named=True):
        ours = r["source"] == "bicrit"
        cts = (
            ", ".join(
                f"{c:g}"
                for c in per_seed.filter(pl.col("method") == r["method"])["C_thesis"].to_list()
            )
            if ours
            else "–"
        )
        cells = [
            r["method"],
            r["source"],
            str(r["seeds"]) if ours else "–",
            *(fmt(r[m], r.get(f"{m}_sd") if ours else None) for m in ml.METRICS),
            cts,
            f"{r['epochs']:.1f}" if ours and r["epochs"] is not None else "–",
            f"{r['gap_max']:.3f}" if ours and r["gap_max"] is not None else "–",
            f"{r['fit_cpu_s']:.1f}" if ours else "–",
            f"{r['calls_per_inference']:.2f}" if ours and r["calls_per_inference"] else "–",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def verdicts(per_seed: pl.DataFrame) -> str:
    """One line per (method, metric) for margin and slack against the thesis and the peers."""
    s = ml.summarize(per_seed)
    ref = ml.REFERENCE
    lines = []
    for method in ("margin", "slack"):
        mine = s.filter((pl.col("method") == method) & (pl.col("source") == "bicrit"))
        if mine.height == 0:
            continue
        thesis = ref.filter((pl.col("method") == method) & (pl.col("source") == "thesis"))
        for metric in COMPARED:
            ours = mine[metric][0]
            better = (lambda a, b: a < b) if metric in LOWER else (lambda a, b: a > b)
            target = thesis[metric][0]
            peers = {
                p: v
                for p, v in zip(
                    ref.filter(pl.col("source") == "peer")["method"],
                    ref.filter(pl.col("source") == "peer")[metric],
                    strict=True,
                )
                if v is not None
            }
            ovr = s.filter((pl.col("method") == "ovr") & (pl.col("source") == "bicrit"))
            if ovr.height:
                peers["ovr (measured here)"] = ovr[metric][0]
            reached = not better(target, ours)  # ours at least as good as the thesis
            beats = all(better(ours, v) for v in peers.values())
            verdict = "reached" if reached else ("beats every peer" if beats else "neither")
            peer_txt = ", ".join(f"{p} {v:.3f}" for p, v in peers.items())
            lines.append(
                f"* {method} {metric}: ours {ours:.3f} vs thesis {target:.3f}; peers {peer_txt}"
                f" → **{verdict}**"
            )
    return "\n".join(lines)


def cv_curve(cv: pl.DataFrame) -> str:
    """Mean (over seeds and folds) validation Acc / Hamming / micro-F1 and mean epochs and gap
    per method and C_t."""
    g = (
        cv.group_by("method", "C_thesis")
        .agg(
            pl.col("acc").mean(),
            pl.col("hamming").mean(),
            pl.col("micro_f1").mean(),
            pl.col("epochs").mean(),
            pl.col("gap").mean(),
            pl.len().alias("fits"),
        )
        .sort("method", "C_thesis")
    )
    lines = [
        "| method | C_t | fits | val Acc | val Hamming | val micro-F1 | epochs | rel. gap |",
        "|" + "---|" * 8,
    ]
    for r in g.iter_rows(named=True):
        lines.append(
            f"| {r['method']} | {r['C_thesis']:g} | {r['fits']} | {r['acc']:.4f} | "
            f"{r['hamming']:.4f} | {r['micro_f1']:.4f} | {_opt(r['epochs'], 1)} | "
            f"{_opt(r['gap'], 3)} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("dirs", nargs="+", type=Path)
    p.add_argument("--write", type=Path, default=None)
    a = p.parse_args(argv)
    per_seed, cv = load(a.dirs, "seeds"), load(a.dirs, "cv")
    print(table(per_seed), "", verdicts(per_seed), "", cv_curve(cv), sep="\n")
    if a.write is not None:
        a.write.mkdir(parents=True, exist_ok=True)
        with atomic_write(a.write / "yeast_seeds.csv") as f:
            per_seed.write_csv(f)
        with atomic_write(a.write / "yeast_cv.csv") as f:
            cv.write_csv(f)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
