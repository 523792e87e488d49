"""Reproductions of the thesis's experiments (issue 5 item 4): ``bicrit reproduce NAME``.

Each experiment is a function ``f(scale: float, seeds: int, out: Path | None) ->
polars.DataFrame`` in one module of this package (``multilabel.py``: the multi-label table).
``scale`` in (0, 1] shrinks the run (fraction of the training set and of the epochs; 1 is the
full experiment), ``seeds`` is the number of repetitions reported as mean ± sd, and ``out``
(optional) a folder for the per-seed CSV files, the summary and the plots.

:data:`EXPERIMENTS` maps each name to ``"module:function"``; modules are imported only when their
experiment runs, so adding one is a one-line change here.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from bicrit.errors import UnknownNameError

__all__ = ["EXPERIMENTS", "describe", "get", "main", "run"]

#: Experiment name → ``"module:function"`` (resolved lazily by :func:`get`).
EXPERIMENTS: dict[str, str] = {
    "yeast": "bicrit.reproduce.multilabel:yeast",
    "scene": "bicrit.reproduce.multilabel:scene",
    "multilabel": "bicrit.reproduce.multilabel:all_multilabel",
    "ner": "bicrit.reproduce.ner:run",
    "parsing": "bicrit.reproduce.parsing:run",
    "searches": "bicrit.reproduce.searches:run",
    "parsing-bilstm": "bicrit.reproduce.neural:parsing_bilstm",
    "ner-bilstm": "bicrit.reproduce.neural:ner_bilstm",
    "hmc": "bicrit.reproduce.hmc:hmc",
    "hmc-fun": "bicrit.reproduce.hmc:hmc_fun",
    "hmc-go": "bicrit.reproduce.hmc:hmc_go",
    "hmc-others": "bicrit.reproduce.hmc:hmc_others",
}


def get(name: str) -> Callable[..., Any]:
    """The experiment function registered as ``name``."""
    try:
        target = EXPERIMENTS[name]
    except KeyError:
        known = ", ".join(sorted(EXPERIMENTS))
        raise UnknownNameError(f"no experiment {name!r}; experiments: {known}") from None
    module, _, attr = target.partition(":")
    return getattr(importlib.import_module(module), attr)


def describe(name: str) -> str:
    """First line of the experiment's docstring."""
    doc = (get(name).__doc__ or "").strip()
    return doc.splitlines()[0] if doc else ""


def run(name: str, scale: float = 1.0, seeds: int = 5, out: Path | str | None = None) -> Any:
    """Runs experiment ``name`` and returns its polars DataFrame."""
    return get(name)(scale=scale, seeds=seeds, out=None if out is None else Path(out))


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m bicrit.reproduce NAME [--scale S] [--seeds N] [--out DIR]`` (also
    ``bicrit reproduce``)."""
    import argparse

    from bicrit.reproduce.cli import add_reproduce_parser, run_reproduce

    parser = argparse.ArgumentParser(prog="python -m bicrit.reproduce")
    sub = parser.add_subparsers(dest="command")
    add_reproduce_parser(sub)
    args = parser.parse_args(["reproduce", *(argv or [])])
    return run_reproduce(args)
