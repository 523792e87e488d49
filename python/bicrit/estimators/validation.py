"""Checks of the estimators' parameters and inputs, shared by every estimator (one message per
problem, naming the parameter and the value received)."""

from __future__ import annotations

import hashlib
import math
import warnings
from collections.abc import Mapping
from typing import Any

import numpy as np
import scipy.sparse as sp

from bicrit.errors import InvalidInputError, InvalidParameterError, check_choice
from bicrit.learners.fit import FeatureScaleWarning

__all__ = [
    "check_common",
    "check_counts",
    "check_matrix",
    "check_not_empty",
    "check_scale",
    "fingerprint",
    "is_count",
    "n_rows",
]


def is_count(v: Any) -> bool:
    """An int ≥ 0 (not a bool)."""
    return not isinstance(v, bool) and isinstance(v, int | np.integer) and bool(v >= 0)


def _is_number(v: Any) -> bool:
    return not isinstance(v, bool) and isinstance(v, int | float | np.number)


def check_counts(est: Any, *names: str, optional: bool = False) -> None:
    """The parameters ``names`` of ``est`` are ints ≥ 1 (or None when ``optional``)."""
    for name in names:
        v = getattr(est, name)
        if not (v is None and optional) and (not is_count(v) or v < 1):
            none = " or None" if optional else ""
            raise InvalidParameterError(f"{name} must be an int ≥ 1{none}, got {v!r}")


#: The most threads ``n_jobs`` may ask for (the native thread pools are sized by it).
MAX_JOBS = 4096


def check_common(est: Any) -> None:
    """The parameters every estimator shares: learner, C, max_epochs, tol, n_jobs,
    random_state, warmup and the ``*_params`` dicts."""
    from bicrit.learners import LEARNER_NAMES

    check_choice("learner", est.learner, (*LEARNER_NAMES, "auto"))
    c = est.C
    if not (isinstance(c, str) and c == "auto"):
        if not _is_number(c) or not c > 0:
            raise InvalidParameterError(f"C must be a float > 0 or 'auto', got {c!r}")
        if not math.isfinite(float(c)):
            raise InvalidParameterError(f"C must be finite, got {c!r}")
    check_counts(est, "max_epochs")
    check_counts(est, "n_iter_no_change", optional=True)
    if est.tol is not None and (not _is_number(est.tol) or not est.tol >= 0):
        raise InvalidParameterError(f"tol must be a float ≥ 0 or None, got {est.tol!r}")
    n_jobs = est.n_jobs
    if n_jobs is not None and n_jobs != -1 and not (is_count(n_jobs) and 1 <= n_jobs <= MAX_JOBS):
        raise InvalidParameterError(
            f"n_jobs must be None, -1 or between 1 and {MAX_JOBS}, got {n_jobs!r}"
        )
    rs = est.random_state
    if rs is not None and not (is_count(rs) and rs < 2**64):
        raise InvalidParameterError(
            f"random_state must be None or an int in [0, 2**64), got {rs!r}"
        )
    for name in ("structure_params", "surrogate_params", "search_params", "learner_params"):
        v = getattr(est, name, None)
        if v is not None and not isinstance(v, Mapping):
            raise InvalidParameterError(f"{name} must be a dict or None, got {v!r}")
    wu = est.warmup
    if not (wu == "auto" if isinstance(wu, str) else is_count(wu)):
        raise InvalidParameterError(f"warmup must be 'auto' or an int ≥ 0, got {wu!r}")
    if not isinstance(wu, str) and wu >= est.max_epochs:
        raise InvalidParameterError(
            f"warmup ({wu}) must be smaller than max_epochs ({est.max_epochs}): the surrogate "
            "needs an epoch"
        )
    norm = getattr(est, "slack_norm", 1)
    if isinstance(norm, bool) or norm not in (1, 2):
        raise InvalidParameterError(f"slack_norm must be 1 or 2, got {norm!r}")
    reserved = {"C", "n_jobs", "random_state", "slack_norm"} & set(est.learner_params or {})
    if reserved:
        raise InvalidParameterError(
            f"learner_params must not set {sorted(reserved)}: they are estimator parameters"
        )


def check_slack_norm(norm: int, learner: str) -> None:
    """Refuses a slack norm the learner does not train with (the native catalog decides)."""
    from bicrit.learners import LEARNERS, slack_norms

    if norm != 1 and norm not in slack_norms(learner):
        able = [name for name in LEARNERS if norm in slack_norms(name)]
        raise InvalidParameterError(
            f"slack_norm={norm} (squared slacks) needs learner {' or '.join(map(repr, able))}; "
            f"learner {learner!r} trains with slack_norm=1 only"
        )


def fingerprint(obj: Any, h: Any = None) -> str:
    """A digest of training data (arrays, strings, nested tuples/lists) for warm starts."""
    top = h is None
    h = hashlib.sha1() if top else h
    if isinstance(obj, np.ndarray):
        h.update(str((obj.dtype.str, obj.shape)).encode())
        h.update(np.ascontiguousarray(obj).tobytes())
    elif isinstance(obj, list | tuple):
        h.update(f"[{len(obj)}".encode())
        for x in obj:
            fingerprint(x, h)
    elif hasattr(obj, "_fields"):
        fingerprint(tuple(obj), h)
    else:
        h.update(repr(obj).encode())
    return h.hexdigest() if top else ""


def n_rows(X: Any) -> int | None:
    """Number of instances of ``X`` (rows of a matrix, items of a sequence), None if unknown."""
    shape = getattr(X, "shape", None)
    if shape is not None and len(shape) >= 1:
        return int(shape[0])
    try:
        return len(X)
    except TypeError:
        return None


def check_scale(X: Any, stacklevel: int = 4) -> None:
    """Warns (:class:`FeatureScaleWarning`) when dense features have columns far from unit
    scale: SGD and BCFW take steps proportional to the features and oscillate or diverge on
    them."""
    if sp.issparse(X) or not isinstance(X, np.ndarray) or X.ndim != 2 or X.size == 0:
        return
    if not np.issubdtype(X.dtype, np.number):
        return
    with np.errstate(all="ignore"):
        big = float(np.nanmax(np.abs(X)))
    if math.isfinite(big) and big > 50.0:
        warnings.warn(
            f"features reach |x| = {big:.3g}: SGD and BCFW may oscillate or diverge on unscaled "
            "features; standardize them (e.g. make_pipeline(StandardScaler(), ...))",
            FeatureScaleWarning,
            stacklevel=stacklevel,
        )


def check_matrix(X: Any, est: Any, *, fitting: bool) -> Any:
    """``X`` as a 2-D float64/float32 matrix (dense, or CSR), with scikit-learn's checks and
    messages (a 1-D array, no instance or no feature, NaN or infinity, an object dtype — a
    TypeError) and, when predicting, the number of features seen in ``fit``."""
    from sklearn.utils.validation import check_array

    try:
        X = check_array(
            X, accept_sparse="csr", dtype=(np.float64, np.float32), input_name="X", estimator=est
        )
    except ValueError as exc:
        msg = " ".join(str(exc).split())
        if "convert" in msg:
            msg = f"X must be numeric: {msg}"
        raise InvalidInputError(msg) from None
    n = getattr(est, "n_features_in_", None)
    if not fitting and n is not None and X.shape[1] != n:
        raise InvalidInputError(
            f"X has {X.shape[1]} features, but {type(est).__name__} is expecting {n} features "
            "as input"
        )
    return X


def check_not_empty(X: Any, Y: Any) -> None:
    """``X`` (and ``Y`` when given) hold at least one instance."""
    if n_rows(X) == 0:
        raise InvalidInputError("X is empty: fit needs at least one instance")
    if Y is not None and n_rows(Y) == 0:
        raise InvalidInputError("Y is empty: fit needs at least one label")
