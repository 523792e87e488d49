"""``StructuredSVM``: any structure × surrogate × search × learner behind the scikit-learn
estimator contract.

It minimises, with scikit-learn's C (C multiplies the loss)::

    P(w) = ½‖w‖² + C · Σ_i ℓ_i(w),    ℓ_i(w) = max_y ψ(h(y), g(y))

**C and the thesis.** Chapters 1–4 of the thesis minimise (C_t/2)‖w‖² + (1/n)Σℓ_i, so
``C = 1/(n·C_t)``; the hierarchical chapter minimises λΣ‖W_n‖² + Σℓ_i, so ``C = 1/(2λ)``.
Larger C fits the training data harder, as in ``LinearSVC``.

**search="auto"** picks the warm-started convex hull search (``convex-hull``) for every
surrogate, structure and learner it can pair with — the one search that needs nothing beyond the
λ-oracle and works for every quasi-concave increasing ψ:

=========================== =================== =============================================
surrogate                   structure oracle    ``auto`` gives
=========================== =================== =============================================
margin                      any                 ``convex-hull``: one λ = 1 query (exact)
slack, β, generalized,      integral (ban,      ``convex-hull``: exact over the convex hull of
ProbLoss, log, Micro-F1     k-best)             the labels, fractional answers on hull edges
same                        relaxed (LP)        ``convex-hull`` (ban lists are unavailable)
=========================== =================== =============================================

``search="frontier"`` is the exact alternative for surrogates whose g is the task loss (all but
Micro-F1) on structures with the frontier query (chains with the Hamming loss, multiclass): the
integral optimum in one call. ``auto`` does not pick it: on CoNLL-2002 (ProbLoss, 500 sentences,
after 3 margin epochs) a frontier SGD epoch took 1.14× the fractional ``convex-hull`` epoch (and
0.68× the ban-list loop capped at 20 calls, which missed the optimum on 0.4 % of the sentences) —
exact, but not cheaper (``benches/RESULTS-sequence.md``).

The hull loss is an upper bound of the integral loss. Measured on standardized ``emotions``
(SGD, 20 epochs): slack rescaling costs 1.42 oracle calls per inference with ``convex-hull`` and
2.17 with ``convex-hull-ban`` (exact integral answers), for the same test Hamming loss (.210 vs
.205). Pass ``search="convex-hull-ban"`` (or ``-kbest``) for the exact integral loss, or
``"angular"`` for slack rescaling on a structure with a cone oracle.

**Stopping (tol).** After each epoch the fit stops when the learner certifies convergence
(``bcfw``: duality gap ≤ tol·|P|; cutting plane: its eps test) or, for every learner, when the
epoch's objective changed by at most ``tol·|P|`` from the previous epoch's. ``tol=None`` runs
``max_epochs`` epochs. ``converged_`` says whether the fit stopped on tol.

**Ctrl-C (KeyboardInterrupt).** The native trainer abandons the running epoch and restores the
previous one; the estimator then keeps every finished epoch: it warns
(:class:`bicrit.estimators.FitInterruptedWarning`), sets ``interrupted_ = True`` and returns a
usable model. Only when no epoch finished (nothing learned) is the KeyboardInterrupt re-raised,
and a fresh fit leaves the estimator unfitted (a warm-started one keeps its previous model).

**Feature scale.** SGD and BCFW steps are proportional to the features: unscaled dense features
(e.g. ``emotions``, whose columns range over several orders of magnitude) make training
oscillate or diverge (DESIGN §9). Standardize dense features — ``make_pipeline(StandardScaler(),
StructuredSVM(...))`` — or use :class:`MultiLabelSVM`, which does it by default (``scale=True``).
``fit`` warns when dense features look unscaled. Sparse hashed features (sequences, trees) need
nothing.
"""

from __future__ import annotations

import copy
import hashlib
import inspect
import math
import sys
import time
import warnings
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from bicrit.errors import InvalidInputError, InvalidParameterError, ModelFormatError

__all__ = [
    "FeatureScaleWarning",
    "FitInterruptedWarning",
    "StructuredSVM",
    "auto_learner",
    "auto_search",
]


class FitInterruptedWarning(UserWarning):
    """``fit`` was interrupted (Ctrl-C) and kept the epochs that had finished."""


class FeatureScaleWarning(UserWarning):
    """Dense features look unscaled: SGD/BCFW may oscillate or diverge (DESIGN §9)."""


def auto_search(surrogate: Any, capabilities: Mapping[str, Any], learner: str) -> str:
    """The search ``search="auto"`` picks (see the module docstring's table)."""
    return "convex-hull"


def auto_learner(surrogate: Any) -> str:
    """The learner ``learner="auto"`` picks: ``bcfw`` for the surrogates that are a maximum of
    functions affine in w (``affine_in_h``: margin, slack, β, generalized, Micro-F1 — what BCFW
    needs, DESIGN §3), ``sgd`` otherwise (ProbLoss, log loss, surrogates that do not say)."""
    return "bcfw" if bool(getattr(surrogate, "affine_in_h", False)) else "sgd"


# ------------------------------------------------------------------ pieces ↔ JSON configs


def ctor_params(obj: Any) -> dict[str, Any]:
    """Constructor parameters of ``obj`` read back from its attributes (scikit-learn style),
    or ``obj.get_config()`` when it defines one."""
    get_config = getattr(obj, "get_config", None)
    if callable(get_config):
        return dict(get_config())
    out: dict[str, Any] = {}
    try:
        sig = inspect.signature(type(obj).__init__)
    except (TypeError, ValueError):
        return out
    for name, p in sig.parameters.items():
        if name == "self" or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        if hasattr(obj, name):
            out[name] = getattr(obj, name)
    return out


def structure_config(s: Any) -> dict[str, Any]:
    """``{"name", "params"}`` from which the registry rebuilds a fitted structure, sizes
    included, with no data."""
    from bicrit.structures import Chain, Dependency, Multiclass, Multilabel

    if isinstance(s, Multiclass):
        params: dict[str, Any] = {"n_classes": s.n_classes, "n_features": s.n_features}
    elif isinstance(s, Multilabel):
        edges = s.edges
        if not isinstance(edges, str) or edges == "tree":
            edges = np.asarray(s.edges_).tolist()
        params = {
            "edges": edges,
            "inference": s.inference,
            "n_labels": s.n_labels,
            "n_features": s.n_features,
            "relaxed_solver": s.relaxed_solver,
        }
    elif isinstance(s, Chain):
        params = {
            "n_states": s.n_states,
            "n_features": s.n_features,
            "outside": None if s.outside is None else [int(o) for o in s.outside],
            "loss": s.loss_name,
            "tag_names": None if s.tag_names is None else [str(t) for t in s.tag_names],
            "scheme": s.scheme,
        }
    elif isinstance(s, Dependency):
        params = {
            "n_features": int(s.n_features),
            "projective": bool(s.projective),
            "labeled": bool(s.labeled),
            "relations": s.relations,
            "label_weight": float(s.label_weight),
        }
    else:
        params = ctor_params(s)
    name = getattr(s, "name", None) or type(s).__name__
    return {"name": name, "params": params}


def piece_config(kind: str, obj: Any, params: Mapping[str, Any] | None) -> dict[str, Any]:
    """A structure/surrogate/search parameter as stored in a model file: a registry name with
    its parameters (plugins included)."""
    if isinstance(obj, str):
        return {"name": obj, "params": dict(params or {})}
    if isinstance(obj, tuple) and len(obj) == 2 and isinstance(obj[0], str):
        return {"name": obj[0], "params": dict(obj[1] or {})}
    if kind == "surrogate" and hasattr(obj, "params") and hasattr(obj, "name"):
        return {"name": obj.name, "params": dict(obj.params)}
    if kind == "search" and hasattr(obj, "options") and hasattr(obj, "name"):
        return {"name": obj.name, "params": dict(obj.options)}
    name = getattr(obj, "name", None)
    if not isinstance(name, str) or not name:
        raise InvalidParameterError(
            f"cannot save {kind} {obj!r}: it has no registry name (register it as a plugin)"
        )
    return {"name": name, "params": ctor_params(obj)}


def create_piece(kind: str, config: Mapping[str, Any]) -> Any:
    """Rebuilds a piece through the registry; a missing plugin is a :class:`ModelFormatError`."""
    from bicrit import registry
    from bicrit.errors import UnknownNameError

    try:
        return registry.create(kind, config["name"], **dict(config.get("params") or {}))
    except UnknownNameError as exc:
        raise ModelFormatError(
            f"the model needs the {kind} {config['name']!r}, which is not installed "
            f"(install the plugin that provides it): {exc}"
        ) from None


# ------------------------------------------------------------------ helpers


class _PickledStructure:
    """Stand-in for a fitted structure inside a pickle: its registry config."""

    def __init__(self, config: dict[str, Any]) -> None:
        self.config = config


def _fingerprint(obj: Any, h: Any = None) -> str:
    """A digest of training data (arrays, strings, nested tuples/lists) for warm starts."""
    top = h is None
    h = hashlib.sha1() if top else h
    if isinstance(obj, np.ndarray):
        h.update(str((obj.dtype.str, obj.shape)).encode())
        h.update(np.ascontiguousarray(obj).tobytes())
    elif isinstance(obj, list | tuple):
        h.update(f"[{len(obj)}".encode())
        for x in obj:
            _fingerprint(x, h)
    elif hasattr(obj, "_fields"):
        _fingerprint(tuple(obj), h)
    else:
        h.update(repr(obj).encode())
    return h.hexdigest() if top else ""


def _n_rows(X: Any) -> int | None:
    shape = getattr(X, "shape", None)
    if shape is not None and len(shape) >= 1:
        return int(shape[0])
    try:
        return len(X)
    except TypeError:
        return None


def _check_scale(X: Any) -> None:
    """Warns when dense features have columns far from unit scale."""
    if sp.issparse(X) or not isinstance(X, np.ndarray) or X.ndim != 2 or X.size == 0:
        return
    if not np.issubdtype(X.dtype, np.number):
        return
    with np.errstate(all="ignore"):
        big = float(np.nanmax(np.abs(X)))
    if math.isfinite(big) and big > 50.0:
        warnings.warn(
            f"features reach |x| = {big:.3g}: SGD and BCFW may oscillate or diverge on unscaled "
            "features; standardize them (e.g. make_pipeline(StandardScaler(), ...)) — "
            "DESIGN §9",
            FeatureScaleWarning,
            stacklevel=3,
        )


def _new_trainer(
    structure: Any,
    Xn: Any,
    Yn: Any,
    surrogate: Any,
    search: Any,
    learner: str,
    params: Any,
    w0: Any,
) -> Any:
    """A native Trainer on inputs already normalised by ``structure.native_inputs``."""
    from bicrit.learners import Trainer, _search, _surrogate
    from bicrit.structures.base import as_native

    if w0 is not None:
        w0 = np.ascontiguousarray(w0, dtype=np.float64)
    return Trainer(
        as_native(structure), Xn, Yn, _surrogate(surrogate), _search(search), learner, params, w0
    )


_PRIVATE_STATE = ("_w", "_trainer", "_trainer_key", "_history_rows", "_fit_tags", "_fit_scheme")

_COMMON = (
    "surrogate",
    "search",
    "learner",
    "C",
    "max_epochs",
    "tol",
    "n_jobs",
    "random_state",
    "warm_start",
    "warmup",
    "verbose",
    "surrogate_params",
    "search_params",
    "learner_params",
)


class _Diverged(Exception):
    """The objective became non-finite: stop training (a warning was issued)."""


def _is_count(v: Any) -> bool:
    return not isinstance(v, bool) and isinstance(v, int | np.integer) and v >= 0


def _continued_t0(prev: Any) -> float | None:
    """SGD's ``t0`` that continues ``prev``'s Pegasos schedule after its steps (one step per
    ``batch_size`` instances), so the surrogate does not restart with the largest steps; None
    for the other schedules, which do not read ``t0``."""
    p = dict(prev.params)
    if p.get("schedule") != "pegasos":
        return None
    steps = int(prev.n_epochs) * math.ceil(int(prev.n_instances) / int(p["batch_size"]))
    return float(p["t0"]) + steps


class StructuredSVM(BaseEstimator):
    """A structured SVM with any bi-criteria surrogate (see the module docstring).

    Parameters
    ----------
    structure : str or structure object, default "multilabel"
        A registry name (``bicrit plugins`` lists them; plugins included) built with
        ``structure_params``, or a structure object (copied, then initialised on the data).
    surrogate : str or surrogate object, default "margin"
        ``margin``, ``slack``, ``beta``, ``generalized``, ``log``, ``probloss``,
        ``probloss-convex``, ``microf1`` or a plugin's; built with ``surrogate_params``.
    search : str, (name, options) or search object, default "auto"
        Loss-augmented inference; ``"auto"`` as in the module docstring's table.
    learner : {"sgd", "bcfw", "cutting-plane", "cutting-plane-n", "auto"}, default "sgd"
        See :mod:`bicrit.learners`; ``learner_params`` are passed to it. ``"auto"``:
        :func:`auto_learner` — BCFW when the surrogate allows it, else SGD; the learner used
        is ``learner_`` after fit.
    C : float, default 1.0
        Weight of the loss (scikit-learn's sense; mapping to the thesis in the module docstring).
    max_epochs : int, default 50
        Passes over the training set.
    tol : float or None, default 1e-3
        Stopping tolerance (module docstring).
    n_jobs : int or None, default None
        Threads for the parallel inferences (None: 1, -1: all cores). The model does not depend
        on it.
    random_state : int or None, default None
        Seed of the instance order; a fixed value gives identical models on repeat fits.
    warm_start : bool, default False
        Continue from the previous fit: on the same training data the same trainer resumes
        (weights, averaging and per-instance search warm starts); on other data training starts
        from the previous weights.
    warmup : int or "auto", default "auto"
        Epochs of margin rescaling (same learner and search) before ``surrogate`` takes over
        from its averaged weights, within ``max_epochs`` (a fresh fit only; SGD's step schedule
        continues across the switch). ``"auto"``: ``max_epochs // 2`` when the surrogate's loss
        is not convex in w (``convex_in_h`` False: ProbLoss, whose slope vanishes once margins
        are large, so SGD from w = 0 stalls — entity F1 0 on CoNLL), else 0. This is the
        thesis's recipe for ProbLoss (§"Dependency Parsing": margin first, then ProbLoss).
    verbose : int, default 0
        ``> 0`` shows a tqdm progress bar (only when stderr is a terminal).

    Attributes
    ----------
    coef_ : ndarray
        The weights (``(n_classes, n_features)`` for ``multiclass``, else 1-D).
    structure_ : the initialised structure.
    history_ : polars.DataFrame
        One row per epoch: the trainer's statistics (``objective``, ``loss``, ``calls`` and calls
        by kind, ``calls_per_inference``, ``fractional``, ``time`` …, see
        :mod:`bicrit.learners`), ``task_loss``, the mean training task loss, and ``surrogate``,
        the surrogate trained in that epoch (``"margin"`` in the ``warmup`` epochs).
    n_epochs_, converged_, interrupted_, learner_ (``learner`` with "auto" resolved), search_,
    fit_time_, n_features_in_ (matrix inputs),
    classes_ (multiclass).

    ``score`` is the structure's headline metric: accuracy (multiclass), subset accuracy
    (multilabel), token accuracy (chain), UAS (dependency), exact-match accuracy (hierarchy);
    for other structures 1 − the mean task loss.
    """

    def __init__(
        self,
        structure: Any = "multilabel",
        surrogate: Any = "margin",
        search: Any = "auto",
        learner: str = "sgd",
        C: float = 1.0,
        max_epochs: int = 50,
        tol: float | None = 1e-3,
        n_jobs: int | None = None,
        random_state: int | None = None,
        warm_start: bool = False,
        warmup: int | str = "auto",
        verbose: int = 0,
        structure_params: Mapping[str, Any] | None = None,
        surrogate_params: Mapping[str, Any] | None = None,
        search_params: Mapping[str, Any] | None = None,
        learner_params: Mapping[str, Any] | None = None,
    ) -> None:
        self.structure = structure
        self.surrogate = surrogate
        self.search = search
        self.learner = learner
        self.C = C
        self.max_epochs = max_epochs
        self.tol = tol
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.warm_start = warm_start
        self.warmup = warmup
        self.verbose = verbose
        self.structure_params = structure_params
        self.surrogate_params = surrogate_params
        self.search_params = search_params
        self.learner_params = learner_params

    # ---------------------------------------------------------------- hooks of subclasses

    def _structure_spec(self) -> tuple[Any, dict[str, Any]]:
        """(registry name or object, params) of the structure to build."""
        return self.structure, dict(self.structure_params or {})

    def _prepare_fit(self, X: Any, Y: Any) -> tuple[Any, Any]:
        """Converts user inputs to the structure's form and learns vocabularies."""
        if Y is None:
            raise InvalidInputError("Y is required (the gold labels of X)")
        if self._structure_name() == "multiclass":
            Y = np.asarray(Y)
            if Y.ndim != 1:
                raise InvalidInputError(f"Y must be 1-D (one class per row), got {Y.shape}")
            self.classes_, Y = np.unique(Y, return_inverse=True)
        return X, Y

    def _prepare_inputs(self, X: Any) -> Any:
        """Converts inputs to predict from."""
        return X

    def _prepare_labels(self, Y: Any) -> Any:
        return Y

    def _decode(self, P: Any) -> Any:
        """Structure predictions to the user's label form."""
        if hasattr(self, "classes_"):
            return self.classes_[np.asarray(P, dtype=np.int64)]
        return P

    def _headline(self, Y: Any, P: Any) -> float:
        """The headline metric (higher is better) of predictions ``P`` against ``Y``."""
        from bicrit import metrics

        name = self._structure_name()
        if name == "multiclass":
            return float(np.mean(np.asarray(Y) == np.asarray(P)))
        if name == "multilabel":
            return metrics.subset_accuracy(Y, P)
        if name == "chain":
            g = np.concatenate([np.asarray(y).ravel() for y in Y])
            p = np.concatenate([np.asarray(y).ravel() for y in P])
            if g.shape != p.shape:
                raise InvalidInputError(f"Y has {g.size} tokens but X has {p.size}")
            return float(np.mean(g == p))
        if name == "dependency":
            s = self.structure_
            gold = [s._label(y) for y in Y]
            pred = [s._label(y) for y in P]
            if s.labeled:
                gold, pred = [g[0] for g in gold], [p[0] for p in pred]
            return float(metrics.uas(gold, pred))
        if name == "hierarchy":
            return float(metrics.hierarchical_accuracy(Y, P))
        s = self.structure_
        return 1.0 - float(np.mean([s.loss(p, y) for p, y in zip(P, Y, strict=True)]))

    # ---------------------------------------------------------------- internals

    def _structure_name(self) -> str:
        fitted = self.__dict__.get("structure_")
        if fitted is not None and isinstance(getattr(fitted, "name", None), str):
            return fitted.name
        spec, _ = self._structure_spec()
        if isinstance(spec, str):
            return spec
        return str(getattr(spec, "name", type(spec).__name__))

    def _build_structure(self) -> Any:
        spec, params = self._structure_spec()
        if isinstance(spec, str):
            from bicrit import registry

            return registry.create("structure", spec, **params)
        if params:
            raise InvalidParameterError(
                "structure_params applies to a structure given by registry name, got "
                f"structure={spec!r} and structure_params={params!r}"
            )
        try:
            return copy.deepcopy(spec)
        except Exception:  # native objects may not copy: rebuild from their parameters
            try:
                return type(spec)(**ctor_params(spec))
            except Exception:
                return spec

    def _surrogate_obj(self) -> Any:
        if isinstance(self.surrogate, str):
            from bicrit import surrogate as make

            return make(self.surrogate, **dict(self.surrogate_params or {}))
        if self.surrogate_params:
            raise InvalidParameterError(
                "surrogate_params applies to a surrogate given by registry name, got "
                f"surrogate={self.surrogate!r}"
            )
        return self.surrogate

    def _search_spec(self, surrogate: Any, structure: Any) -> Any:
        search = self.search
        if isinstance(search, str) and search == "auto":
            caps = dict(getattr(structure, "capabilities", {}) or {})
            search = auto_search(surrogate, caps, self._learner_name(surrogate))
        if isinstance(search, str):
            params = dict(self.search_params or {})
            return (search, params) if params else search
        return search

    def _check_params(self) -> None:
        from bicrit.learners import LEARNER_NAMES

        if not isinstance(self.learner, str) or self.learner not in (*LEARNER_NAMES, "auto"):
            raise InvalidParameterError(
                f"learner must be one of {', '.join(LEARNER_NAMES)} or 'auto', got {self.learner!r}"
            )
        c = self.C
        if isinstance(c, bool) or not isinstance(c, int | float | np.number) or not c > 0:
            raise InvalidParameterError(f"C must be a float > 0, got {c!r}")
        if not math.isfinite(float(c)):
            raise InvalidParameterError(f"C must be finite, got {c!r}")
        m = self.max_epochs
        if isinstance(m, bool) or not isinstance(m, int | np.integer) or m < 1:
            raise InvalidParameterError(f"max_epochs must be an int ≥ 1, got {m!r}")
        if self.tol is not None and (
            isinstance(self.tol, bool)
            or not isinstance(self.tol, int | float | np.number)
            or not self.tol >= 0
        ):
            raise InvalidParameterError(f"tol must be a float ≥ 0 or None, got {self.tol!r}")
        if self.n_jobs is not None and (
            isinstance(self.n_jobs, bool)
            or not isinstance(self.n_jobs, int | np.integer)
            or not (self.n_jobs == -1 or self.n_jobs >= 1)
        ):
            raise InvalidParameterError(f"n_jobs must be None, -1 or ≥ 1, got {self.n_jobs!r}")
        rs = self.random_state
        if rs is not None and (
            isinstance(rs, bool) or not isinstance(rs, int | np.integer) or rs < 0
        ):
            raise InvalidParameterError(f"random_state must be None or an int ≥ 0, got {rs!r}")
        for name in ("structure_params", "surrogate_params", "search_params", "learner_params"):
            v = getattr(self, name, None)
            if v is not None and not isinstance(v, Mapping):
                raise InvalidParameterError(f"{name} must be a dict or None, got {v!r}")
        wu = self.warmup
        if not (wu == "auto" if isinstance(wu, str) else _is_count(wu)):
            raise InvalidParameterError(f"warmup must be 'auto' or an int ≥ 0, got {wu!r}")
        if not isinstance(wu, str) and wu >= m:
            raise InvalidParameterError(
                f"warmup ({wu}) must be smaller than max_epochs ({m}): the surrogate needs an epoch"
            )
        reserved = {"C", "n_jobs", "random_state"} & set(self.learner_params or {})
        if reserved:
            raise InvalidParameterError(
                f"learner_params must not set {sorted(reserved)}: they are estimator parameters"
            )

    def _warmup_epochs(self, surrogate: Any) -> int:
        """Margin-rescaling epochs before ``surrogate`` (``warmup`` with "auto" resolved)."""
        if self.warmup != "auto":
            return int(self.warmup)
        convex = bool(getattr(surrogate, "convex_in_h", True))
        return 0 if convex else int(self.max_epochs) // 2

    def _learner_name(self, surrogate: Any) -> str:
        """``learner``, with ``"auto"`` resolved for ``surrogate`` (:func:`auto_learner`)."""
        return auto_learner(surrogate) if self.learner == "auto" else str(self.learner)

    def _learner_params(self, learner: str | None = None) -> dict[str, Any]:
        from bicrit.learners import LEARNERS

        learner = str(self.learner) if learner is None else learner
        params = dict(self.learner_params or {})
        params["C"] = float(self.C)
        params["n_jobs"] = 1 if self.n_jobs is None else int(self.n_jobs)
        if self.random_state is None:
            params["random_state"] = int(np.random.randint(0, 2**31 - 1))
        else:
            params["random_state"] = int(self.random_state)
        params.setdefault("task_loss", True)
        if "tol" in LEARNERS[learner].params and self.tol is not None:
            params.setdefault("tol", float(self.tol))
        return params

    def _validate_inputs(self, X: Any, Y: Any) -> None:
        n = _n_rows(X)
        if n == 0:
            raise InvalidInputError("X is empty: fit needs at least one instance")
        if Y is not None:
            ny = _n_rows(Y)
            if ny == 0:
                raise InvalidInputError("Y is empty: fit needs at least one label")

    # ---------------------------------------------------------------- fit

    def fit(
        self, X: Any, Y: Any = None, *, callback: Callable[[dict[str, Any]], Any] | None = None
    ) -> StructuredSVM:
        """Trains on ``(X, Y)`` and returns ``self``.

        ``callback(stats)`` is called after every epoch with that epoch's statistics (a dict);
        raising ``KeyboardInterrupt`` from it stops the fit like Ctrl-C.
        """
        continuing = bool(self.warm_start) and hasattr(self, "coef_")
        try:
            return self._fit(X, Y, callback, continuing)
        except BaseException:
            if not continuing:  # a failed fresh fit leaves no half-fitted state behind
                self._forget()
            raise

    def _forget(self) -> None:
        """Removes every fitted attribute (the estimator is then unfitted)."""
        for name in list(vars(self)):
            if (name.endswith("_") and not name.startswith("__")) or name in _PRIVATE_STATE:
                delattr(self, name)

    def _fit(
        self, X: Any, Y: Any, callback: Callable[[dict[str, Any]], Any] | None, continuing: bool
    ) -> StructuredSVM:
        import polars as pl
        from tqdm.auto import tqdm

        self._check_params()
        self._validate_inputs(X, None)
        if np.iscomplexobj(X) if isinstance(X, np.ndarray) else False:
            raise InvalidInputError("Complex data not supported: X must hold real features")
        X, Y = self._prepare_fit(X, Y)
        self._validate_inputs(X, Y)
        if isinstance(X, np.ndarray):
            _check_scale(X)
        if continuing:
            structure = self.structure_
        else:
            structure = self._build_structure()
            structure.initialize(X, Y)
        Xn, Yn = structure.native_inputs(X, Y)
        surrogate = self._surrogate_obj()
        search = self._search_spec(surrogate, structure)
        learner = self._learner_name(surrogate)
        params = self._learner_params(learner)
        stable = dict(params)
        if self.random_state is None:  # a fresh seed per fit must not prevent continuing
            stable.pop("random_state")
        key = (
            _fingerprint((Xn, Yn, repr(search), repr(surrogate), learner, sorted(stable.items())))
            if self.warm_start
            else None
        )
        trainer = getattr(self, "_trainer", None) if continuing else None
        if trainer is not None and (key is None or getattr(self, "_trainer_key", None) != key):
            trainer = None
        rows: list[dict[str, Any]] = list(self._history_rows) if continuing else []
        name = str(getattr(surrogate, "name", type(surrogate).__name__))
        # phases: (surrogate name, trainer factory, epochs); a warm-up of margin rescaling first
        # when asked (``warmup``), the surrogate then continuing from its averaged weights
        phases: list[tuple[str, Callable[[Any], Any], int]] = []
        n_warm = 0 if (continuing or trainer is not None) else self._warmup_epochs(surrogate)
        if n_warm:
            from bicrit import surrogate as make_surrogate
            from bicrit.learners import check

            caps_of = structure if hasattr(structure, "capabilities") else None
            check(learner, surrogate, search, caps_of)  # refused before the warm-up runs

            margin = make_surrogate("margin")
            m_search = self._search_spec(margin, structure)
            phases.append(
                (
                    "margin",
                    lambda _: _new_trainer(
                        structure, Xn, Yn, margin, m_search, learner, params, None
                    ),
                    n_warm,
                )
            )
        if trainer is None:
            w_prev = np.ravel(self.coef_) if continuing else None

            def main_trainer(prev: Any) -> Any:
                p, w0 = dict(params), w_prev
                if prev is not None:  # after the warm-up: its weights, SGD's schedule continues
                    w0 = np.asarray(prev.weights(True), dtype=np.float64)
                    t0 = _continued_t0(prev) if learner == "sgd" else None
                    if t0 is not None:
                        p["t0"] = t0
                return _new_trainer(structure, Xn, Yn, surrogate, search, learner, p, w0)

        else:
            resumed = trainer

            def main_trainer(prev: Any) -> Any:
                return resumed

        phases.append((name, main_trainer, int(self.max_epochs) - n_warm))
        show = bool(self.verbose) and sys.stderr.isatty()
        bar = tqdm(
            total=int(self.max_epochs),
            desc=f"{type(self).__name__} ({learner})",
            unit="epoch",
            disable=not show,
            leave=False,
        )
        done = 0
        converged = interrupted = False
        start = time.perf_counter()
        trainer = None
        try:
            for k, (phase, factory, n_epochs) in enumerate(phases):
                trainer = factory(trainer)
                last = k == len(phases) - 1
                prev_obj = rows[-1]["objective"] if (continuing and rows) else None
                for _ in range(n_epochs):
                    stats = dict(trainer.epoch())
                    stats["surrogate"] = phase
                    rows.append(stats)
                    done += 1
                    bar.update(1)
                    obj = stats.get("objective")
                    bar.set_postfix(objective=obj, task_loss=stats.get("task_loss"))
                    if callback is not None:
                        callback(stats)
                    if obj is not None and not math.isfinite(obj):
                        warnings.warn(
                            f"the objective became {obj} at epoch {stats.get('epoch')}: training "
                            "diverged; standardize the features or lower C (DESIGN §9)",
                            FeatureScaleWarning,
                            stacklevel=2,
                        )
                        raise _Diverged
                    if self.tol is not None:
                        stop = bool(stats.get("converged"))
                        if not stop and obj is not None and prev_obj is not None:
                            stop = abs(obj - prev_obj) <= float(self.tol) * max(abs(obj), 1e-12)
                        if stop:  # a converged warm-up hands over early
                            converged = last
                            break
                    prev_obj = obj
        except _Diverged:
            pass
        except KeyboardInterrupt:
            if done == 0 or trainer is None:
                raise
            interrupted = True
            warnings.warn(
                f"fit interrupted: keeping the {done} finished epoch(s) of this fit",
                FitInterruptedWarning,
                stacklevel=2,
            )
        finally:
            bar.close()
        w = np.asarray(trainer.weights(True), dtype=np.float64)
        self.structure_ = structure
        self._set_coef(w)
        self._trainer = trainer
        self._trainer_key = key
        self._history_rows = rows
        self.history_ = pl.DataFrame(rows, infer_schema_length=None)
        self.n_epochs_ = len(rows)
        self.converged_ = converged
        self.interrupted_ = interrupted
        self.learner_ = learner
        self.search_ = search if isinstance(search, str) else getattr(search, "name", search)
        self.fit_time_ = (
            time.perf_counter()
            - start
            + (self.fit_time_ if continuing and hasattr(self, "fit_time_") else 0.0)
        )
        self._set_n_features(Xn)
        return self

    def _set_coef(self, w: np.ndarray) -> None:
        self._w = w
        if self._structure_name() == "multiclass":
            s = self.structure_
            self.coef_ = w.reshape(int(s.n_classes), int(s.n_features))
        else:
            self.coef_ = w

    def _set_n_features(self, Xn: Any) -> None:
        if isinstance(Xn, tuple) and len(Xn) == 4 and isinstance(Xn[3], int):
            self.n_features_in_ = int(Xn[3])
        elif isinstance(Xn, tuple) and len(Xn) == 2 and isinstance(Xn[0], tuple):
            self.n_features_in_ = int(Xn[0][3])

    # ---------------------------------------------------------------- predict / score

    def _weights(self) -> np.ndarray:
        check_is_fitted(self, "coef_")
        return self._w

    def predict(self, X: Any) -> Any:
        """Integral predictions (the structure's ``batch_predict``; for relaxed multi-label
        inference, the rounding documented in :class:`bicrit.structures.Multilabel`)."""
        w = self._weights()
        Xp = self._prepare_inputs(X)
        if _n_rows(Xp) == 0:
            raise InvalidInputError("X is empty: nothing to predict")
        native = getattr(self.structure_, "_native", None)
        if native is not None and hasattr(self.structure_, "_x_many"):
            # a native structure: normalise once, then predict natively (GIL released)
            P = native.batch_predict(w, self.structure_._x_many(Xp), self.n_jobs)
        else:  # a structure written in Python (plugin): its own batch_predict
            P = self.structure_.batch_predict(w, Xp, n_jobs=self.n_jobs)
        return self._decode(P)

    def decision_function(self, X: Any) -> np.ndarray:
        """Per-class scores ``X @ coef_.T`` (multiclass only)."""
        w = self._weights()
        if self._structure_name() != "multiclass":
            raise AttributeError("decision_function is defined for the multiclass structure only")
        from bicrit.structures._inputs import as_csr_tuple

        indptr, indices, data, d = as_csr_tuple(X, name="X", n_features=self.n_features_in_)
        M = sp.csr_array((data, indices, indptr), shape=(len(indptr) - 1, d))
        return np.asarray(M @ w.reshape(-1, d).T)

    def score(self, X: Any, Y: Any = None) -> float:
        """The headline metric of the task on ``(X, Y)`` (see the class docstring)."""
        P = self.predict(X)
        return float(self._headline(self._prepare_labels(Y), P))

    def training_summary(self) -> dict[str, Any]:
        """Totals over the fit: epochs, time, oracle calls, calls per inference, fractional."""
        check_is_fitted(self, "coef_")
        h = self.history_
        calls = int(h["calls"].sum())
        inferences = int(h["inferences"].sum())
        return {
            "epochs": self.n_epochs_,
            "fit_time": float(self.fit_time_),
            "train_time": float(h["time"].sum()),
            "calls": calls,
            "inferences": inferences,
            "calls_per_inference": calls / inferences if inferences else float("nan"),
            "fractional": int(h["fractional"].fill_null(0).sum()),
            "search": self.search_,
            "learner": getattr(self, "learner_", self.learner),
        }

    # ---------------------------------------------------------------- pickling / saving

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state.pop("_trainer", None)
        if "structure_" in state:  # native structures do not pickle: keep their config
            state["structure_"] = _PickledStructure(structure_config(state["structure_"]))
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        s = state.get("structure_")
        if isinstance(s, _PickledStructure):
            state["structure_"] = create_piece("structure", s.config)
        self.__dict__.update(state)

    def save(self, path: Any) -> Any:
        """Writes the fitted model in bicrit's pickle-free format (``docs/model-format.md``)."""
        from bicrit.estimators.model_format import save_model

        check_is_fitted(self, "coef_")
        return save_model(path, self)

    @classmethod
    def load(cls, path: Any) -> Any:
        """Reads a model file; raises when it holds another estimator class."""
        from bicrit.estimators.model_format import load_model

        est = load_model(path)
        if not isinstance(est, cls):
            raise ModelFormatError(f"{path} holds a {type(est).__name__}, not a {cls.__name__}")
        return est

    def _params_config(self) -> dict[str, Any]:
        params = self.get_params(deep=False)
        out: dict[str, Any] = {}
        for name, value in params.items():
            if name in ("structure", "surrogate", "search") and not isinstance(value, str):
                kind = name
                extra = params.get(f"{name}_params") if isinstance(value, str) else None
                out[name] = {"piece": kind, **piece_config(kind, value, extra)}
            else:
                out[name] = value
        return out

    def _extra_config(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if hasattr(self, "classes_"):
            classes = self.classes_
            if classes.dtype.kind not in "iub" and classes.dtype.kind != "U":
                classes = classes.astype(str)
            out["classes"] = {"dtype": classes.dtype.str, "values": classes.tolist()}
        return out

    def _export(self) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        check_is_fitted(self, "coef_")
        config = {
            "params": self._params_config(),
            "structure": structure_config(self.structure_),
            "attributes": {
                "n_epochs_": self.n_epochs_,
                "converged_": self.converged_,
                "interrupted_": self.interrupted_,
                "search_": self.search_ if isinstance(self.search_, str) else None,
                "learner_": getattr(self, "learner_", None),
                "fit_time_": self.fit_time_,
                "n_features_in_": getattr(self, "n_features_in_", None),
            },
            "history": self._history_rows,
            **self._extra_config(),
        }
        return config, {"coef": self._w}

    @classmethod
    def _import(cls, config: Mapping[str, Any], arrays: Mapping[str, np.ndarray]) -> Any:
        import polars as pl

        params = {}
        for name, value in dict(config["params"]).items():
            if isinstance(value, Mapping) and "piece" in value:
                value = create_piece(value["piece"], value)
            params[name] = value
        est = cls(**params)
        structure = create_piece("structure", config["structure"])
        if getattr(structure, "_native", True) is None:
            raise ModelFormatError(
                f"structure {config['structure']['name']!r} cannot be rebuilt without data"
            )
        est.structure_ = structure
        w = np.asarray(arrays["coef"])
        if w.shape != (int(structure.size_joint_feature),):
            raise ModelFormatError(
                f"coef has shape {w.shape}, the structure needs ({structure.size_joint_feature},)"
            )
        if "classes" in config:
            c = config["classes"]
            est.classes_ = np.asarray(c["values"], dtype=np.dtype(c["dtype"]))
        est._set_coef(w)
        for name, value in dict(config.get("attributes") or {}).items():
            if value is not None:
                setattr(est, name, value)
        rows = list(config.get("history") or [])
        est._history_rows = rows
        est.history_ = pl.DataFrame(rows, infer_schema_length=None)
        est._import_extra(config, arrays)
        return est

    def _import_extra(self, config: Mapping[str, Any], arrays: Mapping[str, np.ndarray]) -> None:
        """Subclasses restore their own attributes here."""

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.non_deterministic = self.random_state is None
        return tags
