"""Collects the per-seed / per-head CSV files of ``bicrit reproduce parsing-bilstm`` and
``ner-bilstm`` (or ``examples/bilstm_parser.py`` run one seed per process) into
``benches/torch/RESULTS-neural.md``: test scores at the epoch chosen on dev, mean ± sd over
seeds, with the thesis's numbers and the linear model's beside them.

Run: ``python benches/torch/neural_table.py --dir OUT [--note TEXT]``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import polars as pl

from bicrit._atomic import atomic_write
from bicrit.reproduce.neural import LINEAR_EWT, THESIS_DP


def _read(folder: Path, pattern: str) -> pl.DataFrame | None:
    files = sorted(folder.glob(pattern))
    return pl.concat([pl.read_csv(f) for f in files], how="diagonal") if files else None


def _ms(s: pl.Series) -> str:
    if len(s) == 0:
        return "—"
    sd = s.std() if len(s) > 1 else None
    return f"{s.mean():.3f}" + (f" ± {sd:.3f}" if sd is not None else "")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--dir", type=Path, required=True)
    p.add_argument("--note", default="")
    p.add_argument("--out", type=Path, default=Path(__file__).with_name("RESULTS-neural.md"))
    a = p.parse_args()
    lines = ["# Neural experiments with bicrit.torch (CPU)", ""]
    if a.note:
        lines += [a.note, ""]
    parse = _read(a.dir, "parsing_bilstm_best*.csv")
    if parse is not None:
        lines += [
            "## UD English EWT, BiLSTM arc scorer (`parsing-bilstm`)",
            "",
            "Test UAS / LAS (all tokens) at the epoch of the best dev LAS; mean ± sd over seeds. "
            "Thesis: PTB, Kiperwasser & Goldberg's full parser (table `table:result_DP`); linear: "
            "bicrit's hashed arc-factored model on EWT (`bicrit reproduce parsing`).",
            "",
            "| run | seeds | epochs chosen | UAS | LAS | thesis UAS (PTB) | thesis LAS (PTB) "
            "| linear UAS | linear LAS |",
            "|---|---:|---|---:|---:|---:|---:|---:|---:|",
        ]
        for run in ("margin", "probloss"):
            d = parse.filter(pl.col("run") == run)
            if d.height == 0:
                continue
            th = THESIS_DP[run]
            ep = ",".join(str(e) for e in d["epoch"].to_list())
            lines.append(
                f"| {run} | {d.height} | {ep} | {_ms(d['test_uas'])} | {_ms(d['test_las'])} "
                f"| {th[1]} | {th[0]} (10 runs: {th[2]}) | {LINEAR_EWT[0]} | {LINEAR_EWT[1]} |"
            )
        if {"margin", "probloss"} <= set(parse["run"].to_list()):
            m = parse.filter(pl.col("run") == "margin").sort("seed")
            q = parse.filter(pl.col("run") == "probloss").sort("seed")
            diff = (q["test_las"] - m["test_las"]).to_list()
            lines += [
                "",
                "ProbLoss − margin, test LAS per seed: " + ", ".join(f"{x:+.4f}" for x in diff),
            ]
        lines.append("")
    ner = _read(a.dir, "ner_bilstm_best*.csv")
    if ner is not None:
        lines += [
            "## CoNLL-2002 Spanish, BiLSTM tagger (`ner-bilstm`)",
            "",
            "Entity F1 (conlleval) on testb at the epoch of the best testa F1; same encoder for "
            "every head; the CRF is pytorch-crf's negative log-likelihood.",
            "",
            "| head | seeds | epochs chosen | test F1 | dev F1 |",
            "|---|---:|---|---:|---:|",
        ]
        for head in ("margin", "slack", "probloss", "crf"):
            d = ner.filter(pl.col("head") == head)
            if d.height == 0:
                continue
            ep = ",".join(str(e) for e in d["epoch"].to_list())
            lines.append(
                f"| {head} | {d.height} | {ep} | {_ms(d['test_f1'])} | {_ms(d['dev_f1'])} |"
            )
        lines.append("")
    with atomic_write(a.out) as f:
        f.write("\n".join(lines))
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
