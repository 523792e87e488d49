"""``StructuredSVM``: any structure × surrogate × search × learner behind the scikit-learn
estimator contract; every other estimator is a ``StructuredSVM`` over one structure.

It minimises ``½‖w‖² + C · Σ_i max_y ψ(h(y), g(y))`` with scikit-learn's C (C multiplies the
loss; the thesis's C_t of chapters 1–4 is C = 1/(n·C_t), its hierarchical λ is C = 1/(2λ)).
The path of a fit — inputs checked and converted, the pieces resolved, a plan of phases, the one
fit driver, the native trainer — is docs/architecture.md's "The path of one fit"; stopping
(``tol``), Ctrl-C and divergence are the driver's (:mod:`bicrit.learners.fit`); ``C="auto"`` is
:mod:`bicrit.estimators.tuning`. Dense features should be standardized (SGD and BCFW take steps
proportional to them): ``make_pipeline(StandardScaler(), StructuredSVM(...))``, or
:class:`MultiLabelSVM`, which scales itself; ``fit`` warns when they look unscaled.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable, Mapping
from typing import Any, ClassVar

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils._available_if import available_if
from sklearn.utils.validation import check_is_fitted

from bicrit.errors import InvalidInputError, InvalidParameterError, ModelFormatError, check_flag
from bicrit.estimators import validation
from bicrit.estimators.pieces import (
    PickledStructure,
    create_piece,
    ctor_params,
    param_config,
    param_value,
    require_installed,
    structure_config,
)
from bicrit.learners import Learner
from bicrit.learners.auto import auto_learner, auto_search
from bicrit.learners.fit import Fit, FitResult, Training, warmup_epochs

__all__ = ["StructuredSVM"]

#: Private fitted state (removed with the public ``*_`` attributes when a fit fails).
_PRIVATE_STATE = ("_w", "_trainer", "_trainer_key", "_history_rows", "_tuned_C")


def _init_params(est: Any, params: Mapping[str, Any]) -> None:
    """Stores ``__init__``'s arguments as attributes (scikit-learn's contract: nothing else)."""
    for name, value in params.items():
        if name not in ("self", "__class__"):
            setattr(est, name, value)


class StructuredSVM(BaseEstimator):  # type: ignore[misc]  # scikit-learn has no type hints
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
        Loss-augmented inference; ``"auto"`` as in the module docstring.
    learner : {"sgd", "bcfw", "cutting-plane", "cutting-plane-n", "auto"}, default "sgd"
        See :mod:`bicrit.learners`; ``learner_params`` are passed to it. ``"auto"``:
        :func:`~bicrit.learners.auto_learner` — BCFW when the surrogate allows it, else SGD; the
        learner used is ``learner_`` after fit.
    slack_norm : {1, 2}, default 1
        The power of each instance's slack ξ_i = max(0, ℓ_i(w)) in the objective: 1 minimises
        ½‖w‖² + C·Σ_i ξ_i (the hinge form of the thesis), 2 minimises ½‖w‖² + C·Σ_i ξ_i²
        (squared slacks, SVM^struct's ``-p 2``; on a binary problem LinearSVC's default squared
        hinge). The learners that train with 2 are listed by the native catalog
        (:func:`bicrit.learners.slack_norms`: ``bcfw``); another learner refuses it.
    C : float or "auto", default 1.0
        Weight of the loss (scikit-learn's sense; mapping to the thesis in the module
        docstring). ``"auto"`` chooses it on held-out data (:mod:`bicrit.estimators.tuning`).
    max_epochs : int, default 50
        Passes over the training set.
    tol : float or None, default 1e-3
        Stopping tolerance (module docstring).
    n_iter_no_change : int or None, default 3
        The fit also stops once further epochs no longer change its predictions: after each
        epoch of the main phase a seeded probe of at most 1000 training instances is decoded,
        and when at most 1 % of them changed for ``n_iter_no_change`` epochs running the fit
        ends (the share is ``history_``'s ``changed`` column). None: off (train until ``tol``
        or ``max_epochs``, e.g. to reach an optimum to high precision).
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
    check_oracle : bool, default False
        Before the first epoch, check a sample of the oracle's answers of a structure written
        in Python (a plugin) against its own ``joint_feature`` and ``terms`` (margins, loss ≥ 0;
        :func:`bicrit.structures.check.check_oracle`); the first wrong answer is a
        :class:`~bicrit.errors.PluginError` naming it.

    Attributes
    ----------
    coef_ : ndarray
        The weights in the structure's layout (``(n_classes, n_features)`` for ``multiclass``,
        node rows for ``hierarchy``, else 1-D).
    structure_ : structure object
        The initialised structure.
    history_ : polars.DataFrame
        One row per epoch: the trainer's statistics (``objective``, ``loss``, ``calls`` and calls
        by kind, ``calls_per_inference``, ``fractional``, ``time`` …, see
        :mod:`bicrit.learners`), ``task_loss``, the mean training task loss (of the stopping
        rule's probe when ``n_iter_no_change`` is set), ``epoch`` (counted
        over the whole fit), ``phase`` and ``surrogate``, the surrogate trained in that epoch
        (``"margin"`` in the ``warmup`` epochs). With ``C="auto"`` also the rows of the
        validation curve (``phase="tune"``).
    n_epochs_, converged_, interrupted_, learner_, search_, fit_time_, n_features_in_, classes_, C_
        ``learner_`` is ``learner`` with "auto" resolved, ``n_features_in_`` is set for matrix
        inputs, ``classes_`` for multiclass, ``C_`` is the C used.

    Notes
    -----
    ``score`` is the structure's headline metric (:meth:`~bicrit.structures.Structure.headline`):
    accuracy (multiclass), subset accuracy (multilabel), entity F1 or token accuracy (chain),
    UAS (dependency), hierarchical F1 or exact match (hierarchy); for other structures 1 − the
    mean task loss. ``report`` gives all the task's metrics.
    """

    # fitted state (set by fit, absent before)
    fit_time_: float
    _history_rows: list[dict[str, Any]]

    def __init__(
        self,
        structure: Any = "multilabel",
        surrogate: Any = "margin",
        search: Any = "auto",
        learner: str = "sgd",
        slack_norm: int = 1,
        C: float | str = 1.0,
        max_epochs: int = 50,
        tol: float | None = 1e-3,
        n_iter_no_change: int | None = 3,
        n_jobs: int | None = None,
        random_state: int | None = None,
        warm_start: bool = False,
        warmup: int | str = "auto",
        verbose: int = 0,
        structure_params: Mapping[str, Any] | None = None,
        surrogate_params: Mapping[str, Any] | None = None,
        search_params: Mapping[str, Any] | None = None,
        learner_params: Mapping[str, Any] | None = None,
        check_oracle: bool = False,
    ) -> None:
        _init_params(self, locals())

    # ---------------------------------------------------------------- hooks of subclasses

    #: The dataset type this estimator trains on by default (``bicrit train``), if any.
    dataset_type: ClassVar[type | None] = None

    @classmethod
    def for_dataset(cls, data: Any, **params: Any) -> StructuredSVM:
        """The estimator with ``params`` for training on the dataset object ``data``."""
        return cls(**params)

    def _structure_spec(self) -> tuple[Any, dict[str, Any]]:
        """(registry name or object, params) of the structure to build."""
        return self.structure, dict(self.structure_params or {})

    def _split(self, X: Any, Y: Any) -> tuple[Any, Any]:
        """``(X, Y)`` from what users pass: a dataset object as ``X`` carries its own labels."""
        return X, Y

    def _prepare_fit(
        self, X: Any, Y: Any, source: Any = None, shared: Mapping[str, Any] | None = None
    ) -> tuple[Any, Any]:
        """Converts user inputs to the structure's form and learns vocabularies (before the
        structure is initialised; the structure's own :meth:`prepare_labels` runs after).
        ``source`` is what the user passed as ``X`` (a dataset object carries metadata);
        ``shared``: statistics of the whole training data when ``X`` is one part of it
        (:meth:`_fit_statistics`)."""
        if Y is None:
            raise InvalidInputError("Y is required (the gold labels of X)")
        if self._takes_matrix():
            X = validation.check_matrix(X, self, fitting=True)
        return X, Y

    def _prepare_inputs(self, X: Any) -> Any:
        """Converts inputs to predict from."""
        if getattr(self.structure_, "matrix_input", False):
            return validation.check_matrix(X, self, fitting=False)
        return X

    def _structure_kind(self) -> Any:
        """The fitted structure, else the structure object or registered factory to build (None
        for an unknown name, which is reported when the structure is built)."""
        fitted = self.__dict__.get("structure_")
        if fitted is not None:
            return fitted
        spec, _ = self._structure_spec()
        if isinstance(spec, str):
            from bicrit import registry

            try:
                return registry.get("structure", spec).factory
            except Exception:
                return None
        return spec

    def _takes_matrix(self) -> bool:
        """Whether the structure (fitted, or to build) takes feature matrices."""
        return bool(getattr(self._structure_kind(), "matrix_input", False))

    def _score_labels(self, X: Any, Y: Any, P: Any = None) -> Any:
        """The gold labels to score the predictions ``P`` on ``X`` against, in the form
        ``predict`` returns."""
        if Y is None:
            raise InvalidInputError("Y is required (the gold labels of X)")
        return Y

    def _decode(self, P: Any) -> Any:
        """Structure predictions to the user's label form."""
        return self.structure_.decode(P)

    def _learner_params(self, learner: str) -> dict[str, Any]:
        """The learner's parameters: ``learner_params`` and the estimator's C, n_jobs,
        random_state, tol."""
        from bicrit.learners import LEARNERS

        params = dict(self.learner_params or {})
        params["C"] = float(self._c_value())
        params["n_jobs"] = 1 if self.n_jobs is None else int(self.n_jobs)
        if self.random_state is None:
            params["random_state"] = int(np.random.randint(0, 2**31 - 1))
        else:
            params["random_state"] = int(self.random_state)
        params.setdefault("task_loss", True)
        norm = self._slack_norm_value()
        if norm != 1:
            params["slack_norm"] = norm
        if "tol" in LEARNERS[learner].params and self.tol is not None:
            params.setdefault("tol", float(self.tol))
        return params

    def _plan(self, training: Training, surrogate: Any, search: Any, w0: Any) -> Any:
        """The phases of a fresh fit (:mod:`bicrit.learners.fit`): a warm-up of margin
        rescaling when ``warmup`` asks for one, then ``surrogate``."""
        n_warm = 0 if w0 is not None else warmup_epochs(self.warmup, surrogate, self.max_epochs)
        margin_search = None
        if n_warm:
            from bicrit.learners import resolve_surrogate

            margin_search = self._search_spec(resolve_surrogate("margin"), training.structure)
        return training.phases(
            surrogate, search, int(self.max_epochs), n_warm, w0, warmup_search=margin_search
        )

    def _finish(self, result: FitResult, training: Training) -> None:
        """Fitted attributes from the driver's result (subclasses add their own)."""
        self._set_coef(np.asarray(result.runner.weights(True), dtype=np.float64))

    # ---------------------------------------------------------------- internals

    def _slack_norm_value(self) -> int:
        """The slack norm of the next training run (``slack_norm``)."""
        return int(getattr(self, "slack_norm", 1))

    def _c_value(self) -> float:
        """The C of the next training run: ``C``, or the one ``C="auto"`` chose."""
        if isinstance(self.C, str):
            return float(self.__dict__.get("_tuned_C", 1.0))
        return float(self.C)

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
            search = auto_search(surrogate, structure)
        if isinstance(search, str):
            params = dict(self.search_params or {})
            return (search, params) if params else search
        return search

    def _check_params(self) -> None:
        validation.check_common(self)
        check_flag("check_oracle", getattr(self, "check_oracle", False))

    def _learner_name(self, surrogate: Any, distributed: bool = False) -> str:
        """``learner``, with ``"auto"`` resolved for ``surrogate`` (on a cluster when
        ``distributed``)."""
        if self.learner == "auto":
            return auto_learner(surrogate, distributed=distributed)
        return str(self.learner)

    def _cluster_refusal(self) -> str | None:
        """Why this estimator cannot train on a cluster (:mod:`bicrit.dask`), or None."""
        return None

    # ---------------------------------------------------------------- fit

    def fit(
        self, X: Any, Y: Any = None, *, callback: Callable[[dict[str, Any]], Any] | None = None
    ) -> StructuredSVM:
        """Trains on ``(X, Y)`` (or a dataset object as ``X``) and returns ``self``.

        ``callback(stats)`` is called after every epoch with that epoch's history row (a dict);
        raising ``KeyboardInterrupt`` from it stops the fit like Ctrl-C.
        """
        continuing = bool(self.warm_start) and hasattr(self, "coef_")
        try:
            if isinstance(self.C, str):
                from bicrit.estimators.tuning import tune_C

                self._check_params()
                tuned: StructuredSVM = tune_C(self, X, Y, callback=callback, continuing=continuing)
                return tuned
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
        self,
        X: Any,
        Y: Any,
        callback: Callable[[dict[str, Any]], Any] | None,
        continuing: bool,
    ) -> StructuredSVM:
        structure, X, Y = self._prepared(X, Y, continuing)
        return self._train(structure, X, Y, callback, continuing)

    def _prepared(
        self, X: Any, Y: Any, continuing: bool, shared: Mapping[str, Any] | None = None
    ) -> tuple[Any, Any, Any]:
        """``(structure, X, Y)``: the inputs checked and converted to the structure's form and
        the structure initialised on them (the fitted one when continuing). With ``shared``
        (the merged :meth:`_fit_statistics` of every part of the training data), what the fit
        learns from data — label graph, feature scaling — is learnt from all of it."""
        self._check_params()
        source = X
        X, Y = self._split(X, Y)
        validation.check_not_empty(X, None)
        if isinstance(X, np.ndarray) and np.iscomplexobj(X):
            raise InvalidInputError("Complex data not supported: X must hold real features")
        X, Y = self._prepare_fit(X, Y, source, shared)
        validation.check_not_empty(X, Y)
        if isinstance(X, np.ndarray):
            validation.check_scale(X, stacklevel=4)
        if continuing:
            structure = self.structure_
            Y = structure.known_labels(Y)
        else:
            structure = self._build_structure()
            Y = structure.prepare_labels(Y)
            counts = (shared or {}).get("labels")
            if counts is None:
                structure.initialize(X, Y)
            else:
                structure.initialize(X, Y, label_counts=counts)
            if getattr(self, "check_oracle", False):
                from bicrit.structures.check import check_oracle

                check_oracle(structure, X, Y, seed=self.random_state or 0)
        return structure, X, Y

    def _train(
        self,
        structure: Any,
        X: Any,
        Y: Any,
        callback: Callable[[dict[str, Any]], Any] | None,
        continuing: bool,
        w0: Any = None,
        history: list[dict[str, Any]] | None = None,
    ) -> StructuredSVM:
        """Trains on inputs already in the structure's form (:meth:`_prepared`), from weights
        ``w0`` when given, after the ``history`` rows (C="auto"'s validation curve)."""
        Xn, Yn = structure.native_inputs(X, Y)
        surrogate, search, learner, params = self._pieces(structure)
        rule = None if self.n_iter_no_change is None else self._stability(structure, X, Y)
        stops = [] if rule is None else [rule]
        if stops and "task_loss" not in (self.learner_params or {}):
            # the rule's probe reports the training task loss (it is decoded after every epoch
            # anyway): no second pass decoding the whole training set
            params["task_loss"] = False
        stable = dict(params)
        if self.random_state is None:  # a fresh seed per fit must not prevent continuing
            stable.pop("random_state")
        key = (
            validation.fingerprint(
                (Xn, Yn, repr(search), repr(surrogate), learner, sorted(stable.items()))
            )
            if self.warm_start
            else None
        )
        training = Training(structure, Xn, Yn, Learner(learner, **params))
        self._run(training, callback, continuing, key=key, w0=w0, history=history, stops=stops)
        self._set_n_features(Xn)
        return self

    def _pieces(
        self, structure: Any, distributed: bool = False
    ) -> tuple[Any, Any, str, dict[str, Any]]:
        """(surrogate, search, learner name, learner parameters) of a fit on ``structure`` (on
        a cluster when ``distributed``)."""
        surrogate = self._surrogate_obj()
        search = self._search_spec(surrogate, structure)
        learner = self._learner_name(surrogate, distributed)
        validation.check_slack_norm(self._slack_norm_value(), learner)
        return surrogate, search, learner, self._learner_params(learner)

    def _run(
        self,
        training: Training,
        callback: Callable[[dict[str, Any]], Any] | None,
        continuing: bool = False,
        *,
        key: Any = None,
        w0: Any = None,
        history: list[dict[str, Any]] | None = None,
        stops: list[Callable[[Any], Any]] | None = None,
    ) -> StructuredSVM:
        """Runs the plan of a fit on ``training`` (this machine's :class:`Training`, or another
        executor's, e.g. :mod:`bicrit.dask`) through the driver and sets the fitted attributes.
        ``key`` identifies the training data for ``warm_start``'s resumption; ``stops`` are
        further driver callbacks that may end the fit (:meth:`_stability`). When the runner
        lost its data after finished epochs (:class:`~bicrit.learners.fit.LostTraining`), the
        estimator is fitted with them and the error is raised."""
        import polars as pl

        surrogate, search, _, _ = self._pieces(training.structure)
        learner = training.learner.name
        trainer = getattr(self, "_trainer", None) if continuing else None
        if trainer is not None and (key is None or getattr(self, "_trainer_key", None) != key):
            trainer = None
        if trainer is not None:  # the same trainer resumes (weights, averages, warm starts)
            plan: Any = [training.resume(trainer, surrogate, int(self.max_epochs))]
        else:
            if continuing:
                w0 = self._w
            plan = self._plan(training, surrogate, search, w0)
        rows = list(self._history_rows) if continuing else list(history or [])
        fit = Fit(
            plan,
            tol=self.tol,
            certified=self.tol is not None,
            callbacks=([] if callback is None else [lambda e: callback(e.row)]) + (stops or []),
            history=rows,
            progress=f"{type(self).__name__} ({learner})" if self.verbose else None,
            total=int(self.max_epochs),
            stacklevel=6,
        )
        start = time.perf_counter()
        result = fit.run()
        self.structure_ = training.structure
        self._finish(result, training)
        self._trainer = result.runner
        self._trainer_key = key
        self._history_rows = result.rows
        self.history_ = pl.DataFrame(result.rows, infer_schema_length=None)
        self.n_epochs_ = int(result.rows[-1]["epoch"]) if result.rows else 0
        self.converged_ = result.converged
        self.interrupted_ = result.interrupted
        self.learner_ = learner
        self.search_ = search if isinstance(search, str) else getattr(search, "name", search)
        self.C_ = self._c_value()
        self.fit_time_ = (
            time.perf_counter()
            - start
            + (self.fit_time_ if continuing and hasattr(self, "fit_time_") else 0.0)
        )
        if result.lost is not None:  # fitted with the finished epochs, then the error
            raise result.lost
        return self

    def _fit_statistics(self, structure: Any) -> dict[str, Any]:
        """The statistics this fit learnt its shape from, each mergeable with those of other
        parts of the data (``a.merge(b)``): ``"labels"``, the label counts a learnt label graph
        comes from; ``"features"``, the moments of a feature scaling. A fit on several machines
        (:mod:`bicrit.dask`) merges them and prepares every part again with the result."""
        stats = {"labels": getattr(structure, "label_counts_", None)}
        stats["features"] = getattr(self, "_moments", None)
        return {k: v for k, v in stats.items() if v is not None}

    def _stability(self, structure: Any, X: Any, Y: Any) -> Callable[[Any], Any] | None:
        """The default rule that ends a fit once further epochs no longer change the
        predictions (:func:`bicrit.learners.fit.stable_predictions`) on a seeded probe of at
        most ``PROBE_SIZE`` training instances; the probe's mean task loss is the history's
        ``task_loss``."""
        from bicrit.learners.fit import PROBE_SIZE
        from bicrit.structures.base import take

        n = int(validation.n_rows(Y) or 0)  # X may be a tuple, e.g. (hashed features, offsets)
        rng = np.random.default_rng([self._probe_seed(), 11])
        idx = np.sort(rng.choice(n, size=min(n, PROBE_SIZE), replace=False)).tolist()
        return self._stability_on(structure, [structure.take(X, idx)], list(take(Y, idx)))

    def _probe_seed(self) -> int:
        return 0 if self.random_state is None else int(self.random_state)

    def _stability_on(
        self, structure: Any, probes: list[Any], gold: list[Any] | None = None
    ) -> Callable[[Any], Any] | None:
        """The stability rule on ``probes``, parts of the probe in the structure's form (one
        part here; a fit on several machines gathers one from each partition). With ``gold``,
        the probe's labels, its mean task loss is the history's ``task_loss``."""
        from bicrit.learners.fit import stable_predictions

        def predict(w: np.ndarray) -> list[Any]:
            return [
                p for probe in probes for p in structure.batch_predict(w, probe, n_jobs=self.n_jobs)
            ]

        def task_loss(P: Any) -> float:
            assert gold is not None
            return float(np.mean([structure.loss(p, g) for p, g in zip(P, gold, strict=True)]))

        return stable_predictions(
            predict,
            patience=int(self.n_iter_no_change),
            task_loss=None if gold is None else task_loss,
        )

    def _set_coef(self, w: np.ndarray) -> None:
        self._w = w
        self.coef_ = self.structure_.coef(w)
        classes = getattr(self.structure_, "classes", None)
        if classes is not None:
            self.classes_ = classes

    def _set_n_features(self, Xn: Any) -> None:
        if isinstance(Xn, tuple) and len(Xn) == 4 and isinstance(Xn[3], int):
            self.n_features_in_ = int(Xn[3])
        elif isinstance(Xn, tuple) and len(Xn) == 2 and isinstance(Xn[0], tuple):
            self.n_features_in_ = int(Xn[0][3])

    # ---------------------------------------------------------------- predict / score

    def _weights(self) -> np.ndarray:
        check_is_fitted(self, "coef_")
        return self._w

    def _predict_prepared(self, X: Any) -> Any:
        """Decoded predictions for inputs already in the structure's form."""
        return self._decode(self.structure_.batch_predict(self._weights(), X, n_jobs=self.n_jobs))

    def predict(self, X: Any) -> Any:
        """Integral predictions (the structure's ``batch_predict``; for relaxed multi-label
        inference, the rounding documented in :class:`bicrit.structures.Multilabel`), in the
        users' label form."""
        self._weights()  # fitted?
        X, _ = self._split(X, None)
        Xp = self._prepare_inputs(X)
        if validation.n_rows(Xp) == 0:
            raise InvalidInputError("X is empty: nothing to predict")
        return self._predict_prepared(Xp)

    def _has_decision_function(self) -> bool:
        return hasattr(self._structure_kind(), "decision_function")

    @available_if(_has_decision_function)  # type: ignore[untyped-decorator]  # scikit-learn's
    def decision_function(self, X: Any) -> np.ndarray:
        """Scores per class (structures that define them: multiclass, hierarchy)."""
        w = self._weights()
        X, _ = self._split(X, None)
        return np.asarray(self.structure_.decision_function(w, self._prepare_inputs(X)))

    def score(self, X: Any, Y: Any = None, *, y: Any = None) -> float:
        """The headline metric of the task on ``(X, Y)`` (see the class docstring); ``y`` is
        scikit-learn's name for ``Y``."""
        X, Y = self._split(X, y if Y is None else Y)
        P = self.predict(X)
        return float(self.structure_.headline(self._score_labels(X, Y, P), P))

    def report(self, X: Any, Y: Any = None) -> dict[str, Any]:
        """Every metric of the task on ``(X, Y)`` (the structure's
        :meth:`~bicrit.structures.Structure.report`)."""
        X, Y = self._split(X, Y)
        P = self.predict(X)
        return dict(self.structure_.report(self._score_labels(X, Y, P), P))

    def prediction_records(self, X: Any) -> list[dict[str, Any]]:
        """One JSON-able record per prediction (``bicrit predict``'s output lines)."""
        X, _ = self._split(X, None)
        return [self.structure_.record(p) for p in self.predict(X)]

    def training_summary(self) -> dict[str, Any]:
        """Totals over the fit: epochs, time, oracle calls, calls per inference, fractional."""
        check_is_fitted(self, "coef_")
        h = self.history_
        if "phase" in h.columns:
            h = h.filter(h["phase"] != "tune")
        calls, inferences, frac = (
            int(h[k].fill_null(0).sum()) if k in h.columns else 0
            for k in ("calls", "inferences", "fractional")
        )
        return {
            "epochs": self.n_epochs_,
            "fit_time": float(self.fit_time_),
            "train_time": float(h["time"].fill_null(0).sum()),
            "calls": calls,
            "inferences": inferences,
            "calls_per_inference": calls / inferences if inferences else float("nan"),
            "fractional": frac,
            "search": self.search_,
            "learner": getattr(self, "learner_", self.learner),
            "C": getattr(self, "C_", None),
            **getattr(self.structure_, "history_labels", dict)(),
        }

    # ---------------------------------------------------------------- pickling / saving

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state.pop("_trainer", None)
        if "structure_" in state:  # native structures do not pickle: keep their config
            state["structure_"] = PickledStructure(structure_config(state["structure_"]))
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        s = state.get("structure_")
        if isinstance(s, PickledStructure):
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
        return {k: param_config(k, v) for k, v in self.get_params(deep=False).items()}

    def _extra_config(self) -> dict[str, Any]:
        """Fitted attributes of subclasses, as JSON (restored by :meth:`_import_extra`)."""
        return {}

    def _extra_arrays(self) -> dict[str, np.ndarray]:
        """Fitted arrays of subclasses (restored by :meth:`_import_extra`)."""
        return {}

    def _export(self) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        check_is_fitted(self, "coef_")
        config = {
            "params": self._params_config(),
            "structure": structure_config(self.structure_),
            "attributes": {  # a search object without a registry name is not saved
                name: value if isinstance(value := getattr(self, name, None), types) else None
                for name, types in _SAVED_ATTRIBUTES.items()
            },
            "history": self._history_rows,
            **self._extra_config(),
        }
        return config, {"coef": self._w, **self._extra_arrays()}

    @classmethod
    def _import(cls, config: Mapping[str, Any], arrays: Mapping[str, np.ndarray]) -> Any:
        import polars as pl

        params = {name: param_value(value) for name, value in dict(config["params"]).items()}
        for kind in ("structure", "surrogate", "search"):
            if isinstance(params.get(kind), str):
                require_installed(kind, params[kind])
        est = cls(**params)
        est._check_params()  # as a fit checks them: a tampered file may hold any value
        structure_cfg = dict(config["structure"])
        if "classes" in config:  # format version 1 kept the classes on the estimator
            structure_cfg["params"] = {**structure_cfg["params"], "classes": config["classes"]}
        structure = create_piece("structure", structure_cfg)
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
        est._set_coef(w)
        for name, value in dict(config.get("attributes") or {}).items():
            if value is not None:
                setattr(est, name, _saved_attribute(name, value))
        rows = list(config.get("history") or [])
        if not all(isinstance(r, Mapping) for r in rows):
            raise ModelFormatError("the history is not a list of objects")
        est._history_rows = rows
        est.history_ = pl.DataFrame(rows, infer_schema_length=None)
        est._import_extra(config, arrays)
        return est

    def _import_extra(self, config: Mapping[str, Any], arrays: Mapping[str, np.ndarray]) -> None:
        """Subclasses restore their own attributes here."""

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.non_deterministic = self.random_state is None
        tags.input_tags.sparse = self._takes_matrix()
        tags.input_tags.two_d_array = self._takes_matrix()
        return tags


#: The fitted attributes a model file restores (``_export``), with the types they may have.
_SAVED_ATTRIBUTES: dict[str, tuple[type, ...]] = {
    "n_epochs_": (int,),
    "converged_": (bool,),
    "interrupted_": (bool,),
    "search_": (str,),
    "learner_": (str,),
    "fit_time_": (int, float),
    "n_features_in_": (int,),
    "C_": (int, float),
}


def _saved_attribute(name: str, value: Any) -> Any:
    """``value`` of a saved fitted attribute, refused when the name is not one that
    ``_export`` writes (it could shadow a method) or the type is wrong."""
    types = _SAVED_ATTRIBUTES.get(name)
    if types is None:
        raise ModelFormatError(f"unknown fitted attribute {name!r}")
    if not isinstance(value, types) or (isinstance(value, bool) and bool not in types):
        names = " or ".join(t.__name__ for t in types)
        raise ModelFormatError(
            f"fitted attribute {name!r} is {type(value).__name__} {value!r}, not {names}"
        )
    return value
