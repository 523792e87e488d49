"""The ``bicrit reproduce`` subcommand (registered by :mod:`bicrit.cli`)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

__all__ = ["add_reproduce_parser", "run_reproduce"]


def add_reproduce_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Adds ``reproduce NAME [--scale S] [--seeds N] [--out DIR]`` and ``reproduce --list``."""
    p = subparsers.add_parser(
        "reproduce",
        help="reproduce a thesis experiment (bicrit reproduce --list)",
        description="Run one of the thesis's experiments and print its table beside the thesis's "
        "and the peers' numbers. Data: BICRIT_DATA (default ../shared/data).",
    )
    p.add_argument("name", nargs="?", help="experiment name (see --list)")
    p.add_argument("--list", action="store_true", help="list the experiments and exit")
    p.add_argument(
        "--scale",
        type=float,
        default=1.0,
        help="fraction in (0, 1] of the training set and epochs (default 1: the full experiment)",
    )
    p.add_argument("--seeds", type=int, default=5, help="repetitions, mean ± sd (default 5)")
    p.add_argument("--out", default=None, help="folder for CSV files and plots (optional)")
    p.set_defaults(func=run_reproduce)
    return p


def run_reproduce(args: argparse.Namespace) -> int:
    """Runs the experiment ``args.name`` (or lists them with ``--list``); prints its table."""
    import polars as pl

    from bicrit.errors import BicritError
    from bicrit.reproduce import EXPERIMENTS, describe, run

    if args.list or not args.name:
        for name in EXPERIMENTS:
            print(f"{name:<12} {describe(name)}")
        return 0 if args.list else 2
    if not 0.0 < args.scale <= 1.0:
        print(
            f"bicrit reproduce: error: --scale must be in (0, 1], got {args.scale}", file=sys.stderr
        )
        return 2
    if args.seeds < 1:
        print(f"bicrit reproduce: error: --seeds must be ≥ 1, got {args.seeds}", file=sys.stderr)
        return 2
    if args.out is not None:  # before the run, which can take hours
        from bicrit._atomic import check_output_folder

        check_output_folder(args.out)
    try:
        table = run(args.name, scale=args.scale, seeds=args.seeds, out=args.out)
    except BicritError as exc:
        print(f"bicrit reproduce: error: {' '.join(str(exc).split())}", file=sys.stderr)
        return 2
    with pl.Config(tbl_rows=-1, tbl_cols=-1, tbl_width_chars=200, fmt_str_lengths=40):
        print(table)
    return 0
