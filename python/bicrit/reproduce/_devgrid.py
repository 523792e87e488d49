"""Hyper-parameter selection on a development split for the sequence reproductions.

A *curve* is one training run (one configuration: surrogate, search, learner, parameters,
optional starting weights) evaluated on the dev and the test split after every epoch. A
configuration and its number of epochs are chosen on the dev score only; the test scores of the
chosen epoch are then read off the same curve (the test split never takes part in the choice).
CPU time is the process CPU time of the epochs as the fit driver measures it (``cpu``, one
thread with ``n_jobs=1``), so it is steadier than wall time on a shared machine. The epochs run
in the fit driver (:mod:`bicrit.learners.fit`) with no stopping rule: every epoch is evaluated.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from bicrit.learners import Learner
from bicrit.learners.fit import Epoch, Fit, Training, averaged_weights
from bicrit.reproduce._seq_common import EPOCH_KEYS

__all__ = ["Curve", "best", "curve"]


@dataclass
class Curve:
    """Per-epoch rows of one run (``dev_*`` and test metrics, cumulative CPU time and oracle
    calls) and the averaged weights saved at the epochs asked for."""

    config: dict[str, Any]
    rows: list[dict[str, Any]]
    saved: dict[int, np.ndarray] = field(default_factory=dict)


def curve(
    structure: Any,
    X: Any,
    Y: Any,
    *,
    surrogate: str,
    search: Any,
    learner: str,
    params: Mapping[str, Any],
    epochs: int,
    evaluate_dev: Callable[[np.ndarray], Mapping[str, float]],
    evaluate_test: Callable[[np.ndarray], Mapping[str, float]],
    w0: np.ndarray | None = None,
    first_epoch: int = 1,
    start_cpu: float = 0.0,
    start_calls: int = 0,
    start_inferences: int = 0,
    save: Iterable[int] = (),
    config: Mapping[str, Any] | None = None,
) -> Curve:
    """Trains ``epochs`` epochs from ``w0`` and evaluates the averaged weights on dev and test
    after each. ``first_epoch``/``start_*`` continue the numbering and the totals of an earlier
    phase (a warm start); ``save``: epoch numbers whose averaged weights are kept."""
    if epochs < 1:
        raise ValueError(f"epochs must be ≥ 1, got {epochs}")
    training = Training(structure, *structure.native_inputs(X, Y), Learner(learner, **params))
    keep = set(save)
    rows: list[dict[str, Any]] = []
    saved: dict[int, np.ndarray] = {}
    totals = {"cpu": float(start_cpu), "calls": int(start_calls), "inf": int(start_inferences)}

    def record(event: Epoch) -> None:
        stats = event.row
        totals["cpu"] += stats["cpu"]
        totals["calls"] += int(stats["calls"])
        totals["inf"] += int(stats["inferences"])
        w = averaged_weights(event.runner)
        epoch = first_epoch + int(stats["epoch"]) - 1
        row = {key: stats.get(key) for key in EPOCH_KEYS}
        row.update(
            epoch=epoch,
            phase=surrogate,
            cpu_time=totals["cpu"],
            cumulative_calls=totals["calls"],
            cumulative_inferences=totals["inf"],
            calls_per_inference_total=totals["calls"] / max(totals["inf"], 1),
        )
        row.update({f"dev_{k2}": v for k2, v in evaluate_dev(w).items()})
        row.update(evaluate_test(w))
        rows.append(row)
        if epoch in keep:
            saved[epoch] = w.copy()

    # every epoch runs (no stopping): the dev score chooses the epoch afterwards
    phases = training.phases(surrogate, search, epochs, 0, w0)
    Fit(phases, tol=None, certified=False, callbacks=[record]).run()
    return Curve(dict(config or {}), rows, saved)


def best(curves: Iterable[Curve], metric: str) -> tuple[Curve, dict[str, Any]]:
    """The curve and row with the highest dev ``metric`` (``dev_<metric>``); ties go to the
    earlier curve, then the earlier epoch (fewer epochs, cheaper)."""
    choice: tuple[Curve, dict[str, Any]] | None = None
    for c in curves:
        for row in c.rows:
            if choice is None or row[f"dev_{metric}"] > choice[1][f"dev_{metric}"]:
                choice = (c, row)
    if choice is None:
        raise ValueError("no curve to choose from")
    return choice
