"""Helpers shared by the sequence and tree reproductions (``ner``, ``parsing``, ``searches``):
subsampling by ``scale``, the epoch loop over a :class:`bicrit.learners.Trainer` with per-epoch
evaluation, the command-line entry of each module and the convergence plots."""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from bicrit.learners import make_trainer

__all__ = [
    "EPOCH_KEYS",
    "Fit",
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


class Fit:
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
) -> Fit:
    """SGD through :func:`bicrit.learners.make_trainer` for ``epochs`` epochs; after each epoch
    ``evaluate(averaged weights)`` adds its metrics to the history row (not timed). ``fit_time``
    is the sum of the Trainer's own epoch times (inference and updates, no evaluation).

    ``warmup`` > 0: the first ``warmup`` of the ``epochs`` epochs train margin rescaling (search
    ``convex-hull``), the rest ``surrogate`` starting from the margin weights (the thesis's
    parsing experiment: margin first, then ProbLoss); the history marks each row's ``phase``."""
    warmup = min(int(warmup), int(epochs))
    rows: list[dict[str, Any]] = []
    total = 0.0
    trainer = None
    for e in range(int(epochs)):
        phase = "margin" if e < warmup else surrogate
        if e == 0 or e == warmup:
            w0 = None if trainer is None else trainer.weights(True)
            trainer = make_trainer(
                structure,
                X,
                Y,
                phase,
                "convex-hull" if e < warmup else search,
                "sgd",
                dict(params),
                w0,
            )
        assert trainer is not None
        stats = trainer.epoch()
        total += float(stats["time"])
        row = {k: stats.get(k) for k in EPOCH_KEYS}
        row["epoch"] = e + 1
        row["phase"] = phase
        row["cumulative_calls"] = sum(r["calls"] for r in rows) + stats["calls"]
        row["cumulative_time"] = total
        if evaluate is not None:
            row.update(evaluate(trainer.weights(True)))
        rows.append(row)
    assert trainer is not None
    return Fit(trainer.weights(True), rows, total)


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
    fig.savefig(path, dpi=100)
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
