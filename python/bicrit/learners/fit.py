"""The fit driver: the one loop that runs training epochs, for every estimator, every
hierarchical model, :func:`bicrit.learners.train` and every reproduction protocol.

A fit is a sequence of **phases**. A phase is a stretch of epochs of one *runner* — an object
with ``epoch() -> stats`` and ``weights(averaged) -> ndarray``: the native
:class:`~bicrit.learners.Trainer`, the NHSVM3 trainer, or a runner of another executor (the seam
where a cluster plugs in: weights in, statistics out). A phase's runner is built from the previous
phase's runner (its weights, its step schedule), so a warm-up of margin rescaling hands over to the
surrogate, and Shared SVM's α steps sit between its phases (docs/architecture.md, "The path of
one fit").

The driver owns, once for everyone:

* **stopping** — a phase ends after its epochs, when the learner certifies convergence
  (``converged`` in the stats: BCFW gap, cutting-plane eps; ``certified``) or when the objective
  changed by at most ``tol·|objective|`` from the previous epoch; a callback may stop the fit
  (early stopping on a validation metric). The estimators' default stop is here too,
  :func:`stable_predictions` (a training probe whose predictions no longer change), for every
  fit, ``C="auto"``'s path and refit included. Two alternatives were measured on training data
  only and not adopted (``benches/learners/stop_rule_study.py``, ``stop_rule_protocol.py``,
  benches/RESULTS.md "Choosing the stopping rule"): requiring BCFW's relative duality gap to be
  small as well — at the epoch of the best held-out score it was still 0.5–0.8 on the CoNLL
  chains and ≈ 1 at large C, so such fits run to ``max_epochs`` for no better held-out score;
  and, for ``C="auto"``, stopping each fit of the path on its held-out score and refitting for
  its best epoch count — lower example accuracy on data no rule saw (the best epoch of a
  held-out part of 60–300 instances is noise);
* **divergence** — a non-finite objective stops the fit with a :class:`FeatureScaleWarning`;
* **Ctrl-C** — the native runners roll an interrupted epoch back, so the driver keeps every
  finished epoch and reports ``interrupted``; with no finished epoch the ``KeyboardInterrupt``
  propagates;
* **lost training data** — a runner whose data is gone (:class:`LostTraining`: a cluster lost a
  partition it cannot rebuild) ends the fit the same way: the finished epochs are kept and the
  error is handed back in the result (``lost``) for the caller to raise once the model is set;
* **history** — one row per epoch (the runner's stats, the phase's labels, the epoch number
  counted over the whole fit, ``cpu``: the process CPU time of the epoch, all threads) and the
  rows that steps between phases add;
* **the progress bar** and **per-epoch callbacks** (:class:`Epoch` events).

Phases come from a *plan*: an iterable of :class:`Phase`, or a generator that reads the fit's
state between phases (:class:`FitState`: the last runner, the rows) to decide the next one.
"""

from __future__ import annotations

import math
import sys
import time
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

__all__ = [
    "Epoch",
    "FeatureScaleWarning",
    "Fit",
    "FitInterruptedWarning",
    "FitResult",
    "FitState",
    "Fixed",
    "LostTraining",
    "Phase",
    "Runner",
    "Training",
    "continued",
    "early_stopping",
    "evaluate",
    "warmup_epochs",
]


class FitInterruptedWarning(UserWarning):
    """A fit was interrupted (Ctrl-C) and kept the epochs that had finished."""


class LostTraining(RuntimeError):
    """A runner lost the data it trains on (e.g. a cluster partition that cannot be rebuilt):
    the fit ends with its finished epochs kept (:attr:`FitResult.lost`)."""


class FeatureScaleWarning(UserWarning):
    """Training diverged or dense features look unscaled: SGD and BCFW take steps proportional
    to the features, so unscaled columns make them oscillate or diverge."""


class Runner(Protocol):
    """What the driver needs of a training run: one epoch at a time."""

    def epoch(self) -> Mapping[str, Any]:
        """One pass over the training set; its statistics (``objective``, ``converged`` …)."""
        ...

    def weights(self, averaged: bool = True) -> Any:
        """The current (averaged) weights."""
        ...


@dataclass
class Phase:
    """A stretch of at most ``epochs`` epochs of one runner.

    ``start(previous)`` builds the phase's runner from the previous phase's runner (None for the
    first phase); ``labels`` are constant columns added to the phase's history rows (e.g. the
    surrogate trained)."""

    name: str
    start: Callable[[Runner | None], Runner]
    epochs: int
    labels: Mapping[str, Any] = field(default_factory=dict)


@dataclass
class FitState:
    """The fit as a plan sees it between phases."""

    runner: Runner | None = None
    rows: list[dict[str, Any]] = field(default_factory=list)
    #: Epochs run so far (rows of earlier fits that this one continues included).
    epochs: int = 0

    def record(self, row: Mapping[str, Any]) -> None:
        """Adds a row that is not an epoch (e.g. Shared SVM's α step), numbered with the epochs
        run so far."""
        self.rows.append({"epoch": self.epochs, **row})


def evaluate(
    fn: Callable[[np.ndarray], Mapping[str, Any]], prefix: str = ""
) -> Callable[[Epoch], None]:
    """A callback adding ``fn(averaged weights)``'s metrics to each epoch's row (as
    ``prefix + key``): evaluation on a validation set after every epoch."""

    def callback(event: Epoch) -> None:
        scores = fn(averaged_weights(event.runner))
        event.row.update({f"{prefix}{k}": v for k, v in scores.items()})

    return callback


def early_stopping(metric: str, patience: int = 3) -> Callable[[Epoch], None]:
    """A callback ending the fit once the row's ``metric`` (higher is better, e.g. a validation
    score that :func:`evaluate` adds) has not improved for ``patience`` epochs."""
    if patience < 1:
        raise ValueError(f"patience must be ≥ 1, got {patience}")
    best = {"value": -math.inf, "since": 0}

    def callback(event: Epoch) -> None:
        value = float(event.row[metric])
        if value > best["value"]:
            best["value"], best["since"] = value, 0
        else:
            best["since"] += 1
        event.stop = event.stop or best["since"] >= patience

    return callback


#: The default stability rule: at most this share of the probe's predictions changed …
STABLE_SHARE = 0.01
#: … in this many epochs running.
STABLE_PATIENCE = 3
#: Training instances decoded after each epoch to see whether the predictions still change.
PROBE_SIZE = 1000


def stable_predictions(
    predict: Callable[[np.ndarray], Sequence[Any]],
    share: float = STABLE_SHARE,
    patience: int = STABLE_PATIENCE,
    phases: Sequence[str] = ("main",),
    task_loss: Callable[[Sequence[Any]], float] | None = None,
) -> Callable[[Epoch], None]:
    """A callback ending the fit once further epochs no longer change the predictions:
    ``predict(averaged weights)`` (a fixed probe of the training data, decoded) differs from the
    previous epoch's on at most ``share`` of the probe for ``patience`` epochs running, after
    they have moved (more than ``share`` changed in some epoch): predictions that never moved
    from the first epoch's — a model still predicting nothing, e.g. at a small C — have not
    settled. It adds ``changed`` (that share) to each row, and acts in the listed ``phases``
    only (a warm-up is never ended by it). With ``task_loss`` (the mean task loss of the probe's
    predictions) it also adds ``task_loss`` to every row that has none, from the same decode —
    what the estimators report instead of a pass decoding the whole training set after every
    epoch."""
    if patience < 1:
        raise ValueError(f"patience must be ≥ 1, got {patience}")
    state: dict[str, Any] = {"prev": None, "calm": 0, "moved": False}

    def callback(event: Epoch) -> None:
        if event.phase.name not in phases:
            state["prev"], state["calm"], state["moved"] = None, 0, False
            if task_loss is not None and event.row.get("task_loss") is None:
                event.row["task_loss"] = task_loss(predict(averaged_weights(event.runner)))
            return
        now = list(predict(averaged_weights(event.runner)))
        if task_loss is not None and event.row.get("task_loss") is None:
            event.row["task_loss"] = task_loss(now)
        prev = state["prev"]
        state["prev"] = now
        if prev is None or not now:
            return
        changed = sum(not _same(a, b) for a, b in zip(prev, now, strict=True)) / len(now)
        event.row["changed"] = changed
        state["moved"] = state["moved"] or changed > share
        state["calm"] = state["calm"] + 1 if changed <= share and state["moved"] else 0
        event.stop = event.stop or state["calm"] >= patience

    return callback


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, tuple | list) and isinstance(b, tuple | list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return bool(np.array_equal(np.asarray(a), np.asarray(b)))


@dataclass
class Epoch:
    """What a callback receives after each epoch: the epoch's history ``row`` (add entries to it
    to record them), the ``runner`` (for its weights) and ``stop`` (set it to end the fit)."""

    row: dict[str, Any]
    runner: Runner
    phase: Phase
    stop: bool = False


@dataclass
class FitResult:
    """The outcome of :meth:`Fit.run`."""

    runner: Runner
    rows: list[dict[str, Any]]
    #: The last phase ended on its stopping test (convergence certificate or tol).
    converged: bool
    interrupted: bool
    diverged: bool
    #: A callback ended the fit.
    stopped: bool
    epochs: int
    #: The error that ended the fit after finished epochs (:class:`LostTraining`), if any.
    lost: LostTraining | None = None


Plan = Iterable[Phase] | Callable[[FitState], Iterator[Phase]]


class Fit:
    """Runs the phases of ``plan`` (see the module documentation).

    Parameters
    ----------
    plan:
        Phases, or a function of the :class:`FitState` returning an iterator of phases (a
        generator that inspects the state between phases).
    tol:
        Relative objective change that ends a phase (None: never on the objective).
    certified:
        Whether a phase ends when the learner certifies convergence (``converged``).
    callbacks:
        Called with an :class:`Epoch` after every epoch.
    history:
        Rows of an earlier fit that this one continues (epochs are numbered after them).
    progress:
        A label shows a tqdm bar (on a terminal only); ``total`` its length in epochs.
    stacklevel:
        Where the driver's warnings point, counted from :meth:`run` (3: the caller of the
        function that called ``run``, e.g. the user's ``fit`` call).
    """

    def __init__(
        self,
        plan: Plan,
        *,
        tol: float | None = None,
        certified: bool = True,
        callbacks: Sequence[Callable[[Epoch], Any]] = (),
        history: Sequence[Mapping[str, Any]] = (),
        progress: str | None = None,
        total: int | None = None,
        stacklevel: int = 3,
    ) -> None:
        self.plan = plan
        self.stacklevel = stacklevel
        self.tol = tol
        self.certified = certified
        self.callbacks = list(callbacks)
        rows = [dict(r) for r in history]
        self.state = FitState(rows=rows, epochs=int(rows[-1].get("epoch") or 0) if rows else 0)
        self.progress = progress
        self.total = total

    def _phases(self) -> Iterator[Phase]:
        plan = self.plan
        return iter(plan(self.state)) if callable(plan) else iter(plan)

    def run(self) -> FitResult:
        """Runs the plan; returns the last runner and the history."""
        from tqdm.auto import tqdm

        state = self.state
        bar = tqdm(
            total=self.total,
            desc=self.progress,
            unit="epoch",
            disable=self.progress is None or not sys.stderr.isatty(),
            leave=False,
        )
        done = 0
        converged = interrupted = diverged = stopped = False
        lost: LostTraining | None = None
        # a continued fit compares its first epoch with the last one of the fit it continues;
        # every later phase starts afresh (a new runner's first objective compares with nothing)
        prev_obj = state.rows[-1].get("objective") if state.rows else None
        try:
            for phase in self._phases():
                state.runner = phase.start(state.runner)
                converged = False
                for _ in range(int(phase.epochs)):
                    cpu = time.process_time()
                    stats = state.runner.epoch()
                    cpu = time.process_time() - cpu
                    done += 1
                    state.epochs += 1
                    row = {
                        **stats,
                        "epoch": state.epochs,
                        "cpu": cpu,
                        "phase": phase.name,
                        **phase.labels,
                    }
                    state.rows.append(row)
                    obj = row.get("objective")
                    bar.update(1)
                    bar.set_postfix(objective=obj, task_loss=row.get("task_loss"))
                    event = Epoch(row, state.runner, phase)
                    for cb in self.callbacks:
                        cb(event)
                    if obj is not None and not math.isfinite(obj):
                        warnings.warn(
                            f"the objective became {obj} at epoch {state.epochs}: training "
                            "diverged; standardize the features or lower C",
                            FeatureScaleWarning,
                            stacklevel=self.stacklevel,
                        )
                        diverged = True
                        break
                    if event.stop:
                        stopped = True
                        break
                    if self._settled(row, prev_obj):
                        converged = True
                        break
                    prev_obj = obj
                if diverged or stopped:
                    break
                prev_obj = None
        except KeyboardInterrupt:
            if done == 0 or state.runner is None:
                raise
            interrupted = True
            warnings.warn(
                f"fit interrupted: keeping the {done} finished epoch(s) of this fit",
                FitInterruptedWarning,
                stacklevel=self.stacklevel,
            )
        except LostTraining as exc:
            if done == 0 or state.runner is None:
                raise
            lost = exc
        finally:
            bar.close()
        result = self._result(converged, interrupted, diverged, stopped, done)
        result.lost = lost
        if lost is not None:
            result.converged = False
        return result

    def _settled(self, row: Mapping[str, Any], prev_obj: float | None) -> bool:
        if self.certified and row.get("converged"):
            return True
        if self.tol is None:
            return False
        obj = row.get("objective")
        if obj is None or prev_obj is None:
            return False
        return bool(abs(obj - prev_obj) <= float(self.tol) * max(abs(obj), 1e-12))

    def _result(
        self, converged: bool, interrupted: bool, diverged: bool, stopped: bool, done: int
    ) -> FitResult:
        if self.state.runner is None:
            raise RuntimeError("the plan had no phase: nothing was trained")
        return FitResult(
            runner=self.state.runner,
            rows=self.state.rows,
            converged=converged and not (interrupted or diverged or stopped),
            interrupted=interrupted,
            diverged=diverged,
            stopped=stopped,
            epochs=done,
        )


# ---------------------------------------------------------------- warm-up and schedules


def warmup_epochs(warmup: int | str, surrogate: Any, max_epochs: int) -> int:
    """Margin-rescaling epochs before ``surrogate`` takes over: ``warmup`` itself, or for
    ``"auto"`` half of ``max_epochs`` when the surrogate's loss is not convex in w (ProbLoss:
    its slope vanishes at large margins, so SGD from w = 0 stalls — the thesis trains margin
    first, §"Dependency Parsing"), else none."""
    if warmup != "auto":
        return int(warmup)
    convex = bool(getattr(surrogate, "convex_in_h", True))
    return 0 if convex else int(max_epochs) // 2


def continued(previous: Any, learner: Any) -> Any:
    """``learner`` continuing ``previous``'s step schedule: SGD's Pegasos step 1/(λ(t + t0))
    resumes after the ``previous`` runner's steps (one per ``batch_size`` instances) instead of
    restarting with the largest steps. Other schedules and learners are returned unchanged."""
    p = dict(getattr(previous, "params", {}) or {})
    if learner.name != "sgd" or p.get("schedule") != "pegasos" or "t0" not in p:
        return learner
    n = int(getattr(previous, "n_instances", 0))
    steps = int(getattr(previous, "n_epochs", 0)) * math.ceil(n / int(p["batch_size"]))
    return learner.replace({"t0": float(p["t0"]) + steps})


class Fixed:
    """A runner that only holds weights: what a step between phases leaves (Shared SVM's α step
    rescales the weights). It carries the schedule of the runner it replaced (``params``,
    ``n_instances``, ``n_epochs``) so the next phase can continue it."""

    def __init__(self, w: np.ndarray, like: Any = None) -> None:
        self.w = np.asarray(w, dtype=np.float64)
        self.params = dict(getattr(like, "params", {}) or {})
        self.n_instances = int(getattr(like, "n_instances", 0) or 0)
        self.n_epochs = int(getattr(like, "n_epochs", 0) or 0)

    def epoch(self) -> Mapping[str, Any]:
        raise RuntimeError("fixed weights do not train: start a phase from them")

    def weights(self, averaged: bool = True) -> np.ndarray:
        return self.w


def averaged_weights(runner: Runner) -> np.ndarray:
    """The runner's averaged weights as a float64 array."""
    return np.asarray(runner.weights(True), dtype=np.float64)


# ---------------------------------------------------------------- the local executor


@dataclass
class Training:
    """A training set on an initialised structure with a learner: builds the runners of a fit's
    phases on this machine (the native :class:`~bicrit.learners.Trainer`, GIL released, rayon
    over ``n_jobs`` threads) — the seam where another executor builds its own runners. ``X``/``Y``
    are the structure's native inputs (``structure.native_inputs``); ``learner`` a
    :class:`~bicrit.learners.Learner` (or a learner name)."""

    structure: Any
    X: Any
    Y: Any
    learner: Any

    def __post_init__(self) -> None:
        if isinstance(self.learner, str):
            from bicrit.learners import Learner

            self.learner = Learner(self.learner)

    def runner(
        self,
        surrogate: Any,
        search: Any,
        learner: Any = None,
        w0: Any = None,
        structure: Any = None,
    ) -> Any:
        """A native Trainer for ``surrogate`` and ``search`` from weights ``w0``; ``learner``
        replaces the training's (e.g. a continued schedule), ``structure`` its structure (same
        inputs, e.g. new node weights)."""
        from bicrit.learners import Trainer, resolve_search, resolve_surrogate
        from bicrit.structures.base import as_native

        if w0 is not None:
            w0 = np.ascontiguousarray(w0, dtype=np.float64)
        return Trainer(
            as_native(self.structure if structure is None else structure),
            self.X,
            self.Y,
            resolve_surrogate(surrogate),
            resolve_search(search),
            self.learner if learner is None else learner,
            None,
            w0,
        )

    def phases(
        self,
        surrogate: Any,
        search: Any,
        epochs: int,
        warmup: int = 0,
        w0: Any = None,
        warmup_search: Any = "convex-hull",
    ) -> list[Phase]:
        """A warm-up of ``warmup`` margin-rescaling epochs (search ``warmup_search``), then
        ``surrogate`` from its averaged weights with the step schedule continued, ``epochs`` in
        all. The main combination is checked before the warm-up runs."""
        from bicrit.learners import check

        name = str(getattr(surrogate, "name", surrogate))
        extra = self._structure_labels()
        if warmup <= 0:
            return [
                Phase(
                    "main",
                    lambda _: self.runner(surrogate, search, w0=w0),
                    epochs,
                    {"surrogate": name, **extra},
                )
            ]
        check(self.learner.name, surrogate, search, self.structure)
        if warmup >= epochs:
            raise ValueError(f"warmup ({warmup}) must leave epochs to the surrogate ({epochs})")

        def main(previous: Runner | None) -> Any:
            assert previous is not None
            learner = continued(previous, self.learner)
            return self.runner(surrogate, search, learner, averaged_weights(previous))

        return [
            Phase(
                "warmup",
                lambda _: self.runner("margin", warmup_search, w0=w0),
                warmup,
                {"surrogate": "margin", **extra},
            ),
            Phase("main", main, epochs - warmup, {"surrogate": name, **extra}),
        ]

    def _structure_labels(self) -> dict[str, Any]:
        labels = getattr(self.structure, "history_labels", None)
        return dict(labels()) if callable(labels) else {}

    def resume(self, runner: Any, surrogate: Any, epochs: int) -> Phase:
        """A phase that continues ``runner`` itself (weights, averages, warm starts)."""
        name = str(getattr(surrogate, "name", surrogate))
        return Phase(
            "main", lambda _: runner, epochs, {"surrogate": name, **self._structure_labels()}
        )
