"""``C="auto"``: the regularisation path on held-out data.

C is the one hyper-parameter every estimator has, and its scale depends on the data (it
multiplies a sum over the training set; the thesis's C_t maps to C = 1/(n·C_t)), so no default
suits every set: at C = 1 slack rescaling can fall below margin rescaling on a set where a
better C puts it above. ``C="auto"``:

1. prepares the inputs once (features, scaling and vocabularies learned on the whole training
   set) and holds out a seeded ``VALIDATION`` share of the instances (``random_state``, or 0);
2. trains on the rest along the log grid ``GRID`` from the smallest C up, each fit starting from
   the previous C's weights (a warm-started path: larger C continues where the more regularised
   model stopped);
3. scores each C on the held-out part with the structure's
   :meth:`~bicrit.structures.Structure.validation_key` (the headline metric; example-based
   accuracy for multi-label) and keeps the best, the smallest C on ties;
4. refits on the whole training set at that C from the path's weights.

``history_`` holds the path as rows with ``phase="tune"`` (``C``, ``validation`` — the first
entry of the key —, the epochs and time of that fit) before the final fit's epochs; ``C_`` is
the chosen C, ``validation_curve_`` the (C, validation score) pairs, and ``fit_time_`` counts
the whole path. :func:`regularization_path` runs the same with another grid or with k folds (the
path on each fold, the key averaged over the folds).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from bicrit.errors import InvalidInputError, InvalidParameterError
from bicrit.estimators.validation import n_rows
from bicrit.structures.base import take

__all__ = ["GRID", "VALIDATION", "regularization_path", "tune_C"]

#: The C grid of ``C="auto"``: 10^-3 … 10^2.
GRID: tuple[float, ...] = tuple(10.0**k for k in range(-3, 3))

#: Share of the training instances held out to score each C.
VALIDATION = 0.2


def _folds(n: int, folds: int, seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """(train, held-out) index pairs: one seeded hold-out split (``folds`` = 1) or k folds."""
    perm = np.random.default_rng([seed, 7]).permutation(n)
    if folds == 1:
        n_val = max(1, round(VALIDATION * n))
        if n - n_val < 1:
            raise InvalidInputError(f"C='auto' needs 2 instances or more to hold some out, got {n}")
        return [(np.sort(perm[n_val:]), np.sort(perm[:n_val]))]
    if n < folds:
        raise InvalidInputError(f"{folds} folds need at least {folds} instances, got {n}")
    parts = np.array_split(perm, folds)
    return [
        (np.sort(np.concatenate(parts[:k] + parts[k + 1 :])), np.sort(parts[k]))
        for k in range(folds)
    ]


def regularization_path(
    est: Any,
    X: Any,
    Y: Any = None,
    *,
    grid: Sequence[float] = GRID,
    folds: int = 1,
    callback: Callable[[dict[str, Any]], Any] | None = None,
) -> Any:
    """Chooses C for ``est`` on held-out parts of ``(X, Y)`` along ``grid`` (see the module
    documentation), refits ``est`` on all of ``(X, Y)`` at the chosen C and returns it. ``folds``
    > 1 scores each C on k folds (averaged). The estimator's ``C`` is left as it was; the chosen
    one is ``C_``."""
    grid = sorted(float(c) for c in grid)
    if not grid or any(not (np.isfinite(c) and c > 0) for c in grid):
        raise InvalidParameterError(f"the C grid must hold finite values > 0, got {grid!r}")
    if isinstance(folds, bool) or not isinstance(folds, int) or folds < 1:
        raise InvalidParameterError(f"folds must be an int ≥ 1, got {folds!r}")
    C = est.C
    est.C = "auto"  # the path's own C is the one each fit trains with (restored below)
    try:
        return _path(est, X, Y, grid, folds, callback)
    finally:
        est.C = C


def _path(
    est: Any,
    X: Any,
    Y: Any,
    grid: list[float],
    folds: int,
    callback: Callable[[dict[str, Any]], Any] | None,
) -> Any:
    started = time.perf_counter()
    structure, Xp, Yp = est._prepared(X, Y, continuing=False)
    Xs, Ys = est._split(X, Y)
    n = int(n_rows(Yp) or 0)
    gold = est._score_labels(Xs, Ys)
    seed = 0 if est.random_state is None else int(est.random_state)
    start = getattr(est, "_alpha_now", None)  # hierarchical models restart from their α
    keys: dict[float, list[tuple[float, ...]]] = {c: [] for c in grid}
    rows: list[dict[str, Any]] = []
    weights: dict[float, np.ndarray] = {}
    warm = bool(getattr(est, "_path_warm_start", True))
    for fold, (tr, va) in enumerate(_folds(n, folds, seed)):
        X_tr, Y_tr = structure.take(Xp, tr), take(Yp, tr)
        X_va, gold_va = structure.take(Xp, va), take(gold, va)
        w = None
        for c in grid:
            est._tuned_C = c
            if start is not None:
                est._alpha_now = start
            est._train(structure, X_tr, Y_tr, None, False, w0=w if warm else None)
            if est.interrupted_:
                # Ctrl-C stops the whole path: the model is the fit it cut short (its finished
                # epochs, C_ its C, interrupted_ set; the driver has warned), not a refit
                est.validation_curve_ = [
                    (g, float(np.mean([k[0] for k in keys[g]]))) for g in grid if keys[g]
                ]
                est.fit_time_ = time.perf_counter() - started
                return est
            w = est._w
            key = tuple(structure.validation_key(gold_va, est._predict_prepared(X_va)))
            keys[c].append(key)
            if fold == 0:
                weights[c] = w
            summary = est.training_summary()
            rows.append(
                {
                    "phase": "tune",
                    "epoch": 0,
                    "C": c,
                    "fold": fold,
                    "validation": float(key[0]),
                    "tune_epochs": int(est.n_epochs_),
                    "time": float(summary["train_time"]),
                    "calls": summary["calls"],
                    "inferences": summary["inferences"],
                }
            )
    mean = {c: tuple(np.mean(np.asarray(k), axis=0).tolist()) for c, k in keys.items()}
    best = max(grid, key=lambda c: (mean[c], -c))  # the smallest C among equal keys
    est._tuned_C = best
    if start is not None:
        est._alpha_now = start
    est._train(structure, Xp, Yp, callback, False, w0=weights[best] if warm else None, history=rows)
    est.validation_curve_ = [(c, mean[c][0]) for c in grid]
    est.fit_time_ = time.perf_counter() - started  # the path included
    return est


def tune_C(  # noqa: N802 (scikit-learn's name for the parameter)
    est: Any,
    X: Any,
    Y: Any = None,
    *,
    callback: Callable[[dict[str, Any]], Any] | None = None,
    continuing: bool = False,
) -> Any:
    """``fit`` with ``C="auto"``: the path over :data:`GRID` on one hold-out split; a warm-started
    continuation (``warm_start=True`` after a fit) keeps the C chosen then."""
    if continuing:
        return est._fit(X, Y, callback, continuing)
    return regularization_path(est, X, Y, callback=callback)
