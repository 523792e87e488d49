"""Helpers shared by the sequence and tree reproductions (``ner``, ``parsing``, ``searches``):
subsampling by ``scale``, an SGD fit through the fit driver with per-epoch evaluation, the
command-line entry of each module and the convergence plots."""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from bicrit._atomic import atomic_write
from bicrit.learners import Learner
from bicrit.learners.fit import Epoch, Fit, Training, averaged_weights

__all__ = [
    "EPOCH_KEYS",
    "Outcome",
    "fit",
    "main",
    "plot_convergence",
    "sklearn_c",
    "subsample",
]

#: The per-epoch stats of the Trainer kept in the histories.
EPOCH_KEYS = (
    "epoch",
    "objective",
    "loss",
    "calls",
    "calls_lambda",
    "calls_extreme",
    "calls_ban",
    "calls_kbest",
    "inferences",
    "calls_per_inference",
    "fractional",
    "gold",
    "time",
)


def subsample(n: int, scale: float, seed: int, *, minimum: int = 20) -> np.ndarray:
    """Sorted indices of ``max(minimum, round(scale·n))`` of ``n`` items (all when scale ≥ 1),
    drawn without replacement with ``seed``."""
    if not scale > 0:
        raise ValueError(f"scale must be > 0, got {scale}")
    k = n if scale >= 1 else min(n, max(minimum, round(scale * n)))
    if k == n:
        return np.arange(n)
    return np.sort(np.random.default_rng(seed).choice(n, size=k, replace=False))


def sklearn_c(lam: float, n: int) -> float:
    """scikit-learn's C of the thesis's ``(λ/2)‖w‖² + (1/n)Σℓ`` (chapters 1–4): C = 1/(n·λ)."""
    return 1.0 / (n * lam)


class Outcome:
    """The outcome of :func:`fit`: final weights, per-epoch history rows and totals."""

    def __init__(self, w: np.ndarray, history: list[dict[str, Any]], fit_time: float) -> None:
        self.w = w
        self.history = history
        self.fit_time = fit_time

    @property
    def calls_per_inference(self) -> float:
        calls = sum(h["calls"] for h in self.history)
        inf = sum(h["inferences"] for h in self.history)
        return calls / max(inf, 1)

    @property
    def fractional_rate(self) -> float:
        frac = sum(h["fractional"] or 0 for h in self.history)
        inf = sum(h["inferences"] for h in self.history)
        return frac / max(inf, 1)


def fit(
    structure: Any,
    X: Any,
    Y: Any,
    *,
    surrogate: str,
    search: Any,
    epochs: int,
    params: Mapping[str, Any],
    evaluate: Callable[[np.ndarray], Mapping[str, float]] | None = None,
    warmup: int = 0,
) -> Outcome:
    """SGD for ``epochs`` epochs in the fit driver (:mod:`bicrit.learners.fit`, every epoch
    runs); after each epoch ``evaluate(averaged weights)`` adds its metrics to the history row
    (not timed). ``fit_time`` is the sum of the Trainer's own epoch times (inference and
    updates, no evaluation).

    ``warmup`` > 0: the first ``warmup`` of the ``epochs`` epochs train margin rescaling (search
    ``convex-hull``), the rest ``surrogate`` starting from the margin weights (the thesis's
    parsing experiment: margin first, then ProbLoss), SGD's step schedule continued across the
    switch as in every fit; the history marks each row's ``phase``."""
    warmup = min(int(warmup), int(epochs))
    if warmup >= int(epochs):  # margin rescaling only
        surrogate, search, warmup = "margin", "convex-hull", 0
    training = Training(structure, *structure.native_inputs(X, Y), Learner("sgd", **params))
    rows: list[dict[str, Any]] = []
    totals = {"time": 0.0, "calls": 0}

    def record(event: Epoch) -> None:
        stats = event.row
        totals["time"] += float(stats["time"])
        totals["calls"] += int(stats["calls"])
        row = {k: stats.get(k) for k in EPOCH_KEYS}
        row["phase"] = stats["surrogate"]
        row["cumulative_calls"] = totals["calls"]
        row["cumulative_time"] = totals["time"]
        if evaluate is not None:
            row.update(evaluate(averaged_weights(event.runner)))
        rows.append(row)

    phases = training.phases(surrogate, search, int(epochs), warmup)
    result = Fit(phases, tol=None, certified=False, callbacks=[record]).run()
    return Outcome(averaged_weights(result.runner), rows, totals["time"])


def timed(fn: Callable[[], Any]) -> tuple[Any, float]:
    """``(fn(), seconds)`` by the wall clock."""
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


def plot_convergence(
    history: pl.DataFrame,
    metric: str,
    group: Sequence[str],
    path: Path,
    title: str = "",
) -> Path | None:
    """Two panels — ``metric`` vs epochs and vs cumulative oracle calls — one line per group;
    returns the file written, or None when matplotlib is not installed."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:  # pragma: no cover - optional
        return None
    fig, axes = plt.subplots(1, 2, figsize=(10, 4), sharey=True)
    for key, part in history.group_by(list(group), maintain_order=True):
        label = " / ".join(str(k) for k in key)
        part = part.sort("epoch")
        axes[0].plot(part["epoch"], part[metric], marker="o", label=label)
        axes[1].plot(part["cumulative_calls"], part[metric], marker="o", label=label)
    axes[0].set_xlabel("epoch")
    axes[1].set_xlabel("oracle calls (cumulative)")
    axes[1].set_xscale("log")
    axes[0].set_ylabel(metric)
    axes[0].legend(fontsize="small")
    fig.suptitle(title)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_write(path, "wb") as f:
        fig.savefig(f, dpi=100, format=path.suffix.lstrip(".") or "png")
    plt.close(fig)
    return path


def main(
    run: Callable[..., pl.DataFrame],
    description: str,
    argv: Sequence[str] | None = None,
    *,
    default_scale: float = 0.05,
    default_seeds: int = 1,
):
    """``python -m bicrit.reproduce.<name> [--scale S] [--seeds N] [--out DIR]``: runs and prints
    the table (and writes it, the histories and plots under ``--out``)."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument(
        "--scale", type=float, default=default_scale, help="fraction of the training set"
    )
    parser.add_argument(
        "--seeds", type=int, default=default_seeds, help="number of seeds (subsample, order)"
    )
    parser.add_argument("--out", type=Path, default=None, help="folder for tables and plots")
    args = parser.parse_args(argv)
    table = run(args.scale, args.seeds, args.out)
    with pl.Config(tbl_rows=200, tbl_cols=40, tbl_width_chars=250, float_precision=4):
        print(table)
    return table
