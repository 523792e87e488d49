"""Full-scale UD English EWT parsing over several seeds, with a control for ProbLoss's averaging
restart (``benches/RESULTS-sequence.md``, "Dependency parsing at full scale"):

* ``margin`` — margin rescaling, 4 SGD epochs;
* ``margin-restart`` — 2 margin epochs, then a new margin trainer from the averaged weights for
  2 more: the same restart of the weight averaging as ProbLoss's warm start, without ProbLoss;
* ``probloss`` — 2 margin epochs, then 2 ProbLoss epochs (capped k-best recovery).

The seeds change the SGD order (all 12,544 training sentences are used). Rows are written after
each run, so an interrupted run keeps what finished.

Usage: ``python benches/learners/run_parsing_seeds.py OUT SEEDS [SKIP]``, e.g.
``... benches/learners/results/parsing_seeds 0,1,2 0:probloss`` (SKIP: ``seed:method`` pairs
measured elsewhere; seed 0's ProbLoss is ``results/parsing_full/probloss``).
"""

from __future__ import annotations

import sys
from pathlib import Path

import polars as pl

from bicrit._atomic import atomic_write
from bicrit.reproduce import parsing
from bicrit.reproduce.ner import _search_name

#: label → (method of :data:`parsing.METHODS`, margin epochs before the switch)
RUNS = {"margin": ("margin", 0), "margin-restart": ("margin", 2), "probloss": ("probloss", 2)}
EPOCHS = 4


def main(out: Path, seeds: list[int], skip: set[str]) -> None:
    out.mkdir(parents=True, exist_ok=True)
    rows, hist = [], []
    for seed in seeds:
        tb = parsing.prepare(1.0, seed)
        base = {"dataset": parsing.DATASET, "seed": seed, "n_train": tb.n_train}
        for label, (method, warm) in RUNS.items():
            if f"{seed}:{label}" in skip:
                continue
            result, scores = parsing.train_method(tb, method, epochs=EPOCHS, seed=seed, warmup=warm)
            rows.append(
                {
                    **base,
                    "method": label,
                    "search": _search_name(parsing.METHODS[method][1]),
                    "epochs": EPOCHS,
                    **scores,
                    "fit_time": result.fit_time,
                    "calls_per_inference": result.calls_per_inference,
                }
            )
            hist += [{**base, "method": label, **h} for h in result.history]
            with atomic_write(out / "parsing_seeds.csv") as f:
                pl.DataFrame(rows).write_csv(f)
            with atomic_write(out / "parsing_history.csv") as f:
                pl.DataFrame(hist).write_csv(f)
            print(rows[-1], flush=True)


if __name__ == "__main__":
    main(
        Path(sys.argv[1]),
        [int(s) for s in sys.argv[2].split(",")],
        set(sys.argv[3].split(",")) if len(sys.argv) > 3 else set(),
    )
