"""Learners: training structured SVMs with any bi-criteria surrogate (docs/architecture.md,
Learners).

Every learner minimises, with scikit-learn's C (it multiplies the loss)::

    P(w) = ½‖w‖² + C · Σ_i ℓ_i(w),   ℓ_i(w) = max_y ψ(h(y), g(y))

The thesis's chapters 1–4 minimise (C_t/2)‖w‖² + (1/n)Σℓ_i, so ``C = 1/(n·C_t)``; internally the
learners use λ = 1/(n·C) (Pegasos/BCFW form). Loss-augmented inference is a *search* over the
structure's λ-oracle; with a relaxed search (``convex-hull`` without recovery) ℓ_i is the maximum
of ψ over the convex hull of the labels, an upper bound of the integral loss. Every objective,
dual value and gap reported is in the scale of P.

The learners are ``sgd`` (SGD / Pegasos on the primal, every surrogate), ``bcfw``
(block-coordinate Frank–Wolfe with line search and a duality gap), ``cutting-plane`` (1-slack)
and ``cutting-plane-n`` (n-slack); the last three need a loss that is a maximum of functions
affine in w (ψ affine in h: each corner has an intercept ψ − ψ_h·h). Which surrogates and
searches each combines with is decided in the native core and listed by ``bicrit plugins``,
:data:`LEARNERS` and ``docs/capabilities.md`` (all read from :func:`bicrit._native.catalog`).
Refused combinations raise :class:`~bicrit.errors.IncompatibleError` before any epoch, naming
the pieces.

**A learner with its parameters** is a :class:`Learner` (``Learner("sgd", C=0.1)``): validated
once when made, handed to the native Trainer as it is, and copied with changes by
``replace`` (the fit driver continues SGD's step schedule that way).

**The Trainer** (``bicrit._native.Trainer``, re-exported here) is one native training run,
``Trainer(structure, X, Y, surrogate, search, learner, params=None, w0=None)``, whose
``epoch()`` runs one pass with the GIL released and returns its statistics (keys
:data:`STAT_KEYS`). The fit driver (:mod:`bicrit.learners.fit`) runs its epochs;
``docs/history.md`` documents the arguments, the methods and every statistic.

For tests and quick experiments, :func:`train` runs a whole fit and returns ``(w, history)``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from bicrit import _native, registry
from bicrit.errors import InvalidParameterError

__all__ = [
    "LEARNERS",
    "LEARNER_NAMES",
    "STAT_KEYS",
    "Learner",
    "LearnerInfo",
    "Param",
    "Trainer",
    "check",
    "make_trainer",
    "slack_norms",
    "train",
]

#: The native training run (see the module documentation).
Trainer = _native.Trainer

#: Registry names of the learners.
LEARNER_NAMES: tuple[str, ...] = tuple(_native.LEARNER_NAMES)

#: Keys of the dict ``Trainer.epoch()`` returns, in order.
STAT_KEYS: tuple[str, ...] = tuple(_native.STAT_KEYS)


@dataclass(frozen=True)
class Param:
    """One learner parameter: its default and what it does (with its domain)."""

    default: Any
    doc: str


@dataclass(frozen=True)
class LearnerInfo:
    """A learner: what it does, its parameters, and what it combines with (from the native
    catalog)."""

    name: str
    description: str
    params: dict[str, Param]
    capabilities: dict[str, Any]


def _info(entry: Mapping[str, Any]) -> LearnerInfo:
    name = entry["name"]
    params = {
        pname: Param(default, doc) for pname, default, doc in _native.learner_parameters(name)
    }
    return LearnerInfo(name, entry["description"], params, dict(entry["capabilities"]))


#: Every learner with its parameters (defaults and documentation come from the native crate).
LEARNERS: dict[str, LearnerInfo] = {e["name"]: _info(e) for e in _native.catalog()["learner"]}


class Learner(_native.LearnerSpec):
    """A learner with its parameters, validated once (unknown names and values outside their
    domain raise :class:`~bicrit.errors.InvalidParameterError` here). ``params`` holds every
    parameter with its effective value, ``given`` those passed; ``replace(changes)`` returns a
    validated copy."""

    def __new__(cls, name: str, **params: Any) -> Learner:
        return super().__new__(cls, name, params)

    def replace(self, changes: Mapping[str, Any]) -> Learner:
        """A validated copy with the parameters of ``changes`` replaced."""
        return Learner(self.name, **{**self.given, **dict(changes)})

    def __repr__(self) -> str:
        given = "".join(f", {k}={v!r}" for k, v in self.given.items())
        return f"Learner({self.name!r}{given})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (_make_learner, (self.name, self.given))


def _make_learner(name: str, params: dict[str, Any]) -> Learner:
    return Learner(name, **params)


def slack_norms(learner: str) -> tuple[int, ...]:
    """The slack norms ``learner`` trains with (its ``slack_norm`` parameter; decided in the
    native catalog): 1, ½‖w‖² + C·Σ_i ξ_i, for every learner; 2, squared slacks
    ½‖w‖² + C·Σ_i ξ_i², for ``bcfw``."""
    return tuple(int(x) for x in LEARNERS[learner].capabilities.get("slack_norms", (1,)))


def resolve_surrogate(surrogate: Any) -> Any:
    """A surrogate object from a registry name (objects unchanged)."""
    return registry.resolve("surrogate", surrogate)


def resolve_search(search: Any) -> Any:
    """A registry name or ``(name, options)`` through the registry (so plugin searches resolve
    to their objects, which the native learners then refuse clearly); objects unchanged."""
    return registry.resolve("search", search)


def check(
    learner: str, surrogate: Any = "margin", search: Any = "convex-hull", structure: Any = None
) -> None:
    """Raises :class:`~bicrit.errors.IncompatibleError` when ``learner`` cannot train with
    ``surrogate`` and ``search`` (on ``structure``, when given: its oracle's capabilities), as
    :class:`Trainer` would — without any data. Names are looked up in the registry."""
    caps = None if structure is None else dict(structure.capabilities)
    _native.check_learner(learner, resolve_surrogate(surrogate), resolve_search(search), caps)


def make_trainer(
    structure: Any,
    X: Any,
    Y: Any,
    surrogate: Any = "margin",
    search: Any = "convex-hull",
    learner: str = "sgd",
    params: Mapping[str, Any] | None = None,
    w0: Any = None,
) -> Any:
    """A :class:`Trainer` from user-facing pieces: an initialised structure (built-in or
    Python-written), ``X``/``Y`` as users pass them, a surrogate object or name, a search object,
    name or ``(name, options)``. To run its epochs, hand it to the fit driver
    (:class:`bicrit.learners.fit.Fit`) or call :func:`train`."""
    return _training(structure, X, Y, learner, params or {}).runner(surrogate, search, w0=w0)


def _training(structure: Any, X: Any, Y: Any, learner: str, params: Mapping[str, Any]) -> Any:
    """The :class:`~bicrit.learners.fit.Training` of ``structure`` on ``(X, Y)`` as users pass
    them, with the learner ``learner`` and its ``params``."""
    from bicrit.learners.fit import Training

    spec = Learner(learner, **params)  # the parameters are checked before the data
    Xn, Yn = structure.native_inputs(X, Y)
    return Training(structure, Xn, Yn, spec)


def train(
    structure: Any,
    X: Any,
    Y: Any,
    *,
    surrogate: Any = "margin",
    search: Any = "convex-hull",
    learner: str = "sgd",
    max_epochs: int = 50,
    w0: Any = None,
    averaged: bool = True,
    stop_on_convergence: bool = True,
    callback: Callable[[dict[str, Any]], Any] | None = None,
    **params: Any,
) -> tuple[np.ndarray, list[dict[str, Any]]]:
    """Trains for up to ``max_epochs`` epochs (stopping early when an epoch reports
    ``converged``); returns ``(weights, history)``, ``history`` holding each epoch's stats dict.
    A native structure that is not initialised yet is initialised on ``(X, Y)``. ``params`` are the
    learner's (see :data:`LEARNERS`); ``callback(stats)`` is called after every epoch. The epochs
    run through the fit driver (:class:`bicrit.learners.fit.Fit`)."""
    from bicrit.learners.fit import Fit

    if int(max_epochs) < 1:
        raise InvalidParameterError(f"max_epochs must be at least 1, got {max_epochs}")
    if getattr(structure, "_native", False) is None:
        structure.initialize(X, Y)
    task = _training(structure, X, Y, learner, params)
    fit = Fit(
        task.phases(surrogate, search, int(max_epochs), 0, w0),
        tol=None,
        certified=bool(stop_on_convergence),
        callbacks=[] if callback is None else [lambda e: callback(e.row)],
    )
    result = fit.run()
    return result.runner.weights(averaged), result.rows
