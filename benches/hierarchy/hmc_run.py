"""One Clus HMC set, some methods: :func:`bicrit.reproduce.hmc.run_set` from the command line,
writing into the same resumable per-set CSV files as ``bicrit reproduce hmc --out DIR`` (which
runs every set and every method in one go).

    BICRIT_DATA=/work/shared/data nice -n 10 python benches/hierarchy/hmc_run.py gasch2_GO \
        --models hsvm --baselines

``--models`` / ``--baselines`` name the methods to run (methods already in ``<set>.csv`` are
reused, not rerun); ``--C`` and ``--loss`` replace the C and ``multilabel_loss`` values of the
set's default grid (``GRID`` on trees, ``GRID_DAG`` on DAGs; a cut grid must be stated with its
rows in benches/hierarchy/RESULTS.md); ``--calibration`` overrides the default by hierarchy kind
(``valid`` only reproduces old rows); ``--rerun`` drops the named models' rows from ``<set>.csv``
and runs their final fits again, reusing their selection rows from ``<set>_valid.csv``. A
model's selection row is written after each grid point and its rows after each seed, so a run
stopped within a grid resumes at the next point (the points done are not refitted), and one
stopped between seeds keeps the seeds done.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from bicrit.reproduce.hmc import CALIBRATIONS, GRID, GRID_DAG, MODELS, run_set


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("set", help="e.g. gasch2_GO, Diatoms")
    ap.add_argument("--models", nargs="*", default=list(MODELS))
    ap.add_argument("--baselines", nargs="*", default=["prior", "logistic"])
    ap.add_argument("--C", nargs="*", type=float, default=None, help="C values of the grid")
    ap.add_argument("--loss", nargs="*", default=None, help="multilabel_loss values of the grid")
    ap.add_argument("--calibration", choices=CALIBRATIONS, default=None)
    ap.add_argument("--rerun", nargs="*", default=[], help="models whose rows are redone")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--out", default=str(Path(__file__).parent / "hmc"))
    args = ap.parse_args()
    grid = None
    if args.C is not None or args.loss is not None:
        grid = dict(GRID_DAG if args.set.endswith("_GO") else GRID)
        if args.C is not None:
            grid["C"] = tuple(args.C)
        if args.loss is not None:
            grid["multilabel_loss"] = tuple(args.loss)
    run_set(
        args.set,
        seeds=args.seeds,
        models=args.models,
        baselines=args.baselines,
        grid=grid,
        calibration=args.calibration,
        out=Path(args.out),
        rerun=args.rerun,
        log=lambda s: print(s, flush=True),
    )


if __name__ == "__main__":
    main()
