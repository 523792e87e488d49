"""Feature scaling learned in ``fit`` and saved with a model (``MultiLabelSVM(scale=True)``,
``HierarchicalSVM(scale=True)``): SGD and BCFW take steps proportional to the features, so
unscaled dense features make them oscillate or diverge (docs/architecture.md, Learners).

Dense features are standardised (training mean and standard deviation); sparse ones are divided
by their largest absolute value, which keeps them sparse. A constant column gets scale 1.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

from bicrit.errors import InvalidInputError, ModelFormatError

__all__ = [
    "FeatureMoments",
    "apply_scale",
    "learn_scale",
    "learn_scaling",
    "saved_scale",
    "scale_arrays",
]


@dataclass(frozen=True)
class FeatureMoments:
    """What the scaling needs of training features, mergeable over parts of the data (a fit
    on several machines, :mod:`bicrit.dask`): the row count and, for dense ``X``, the column
    means and sums of squared deviations; for sparse ``X``, the column largest absolute values."""

    n: int
    mean: np.ndarray | None = None
    m2: np.ndarray | None = None
    max_abs: np.ndarray | None = None

    @classmethod
    def of(cls, X: Any) -> FeatureMoments:
        if X.shape[0] == 0:
            raise InvalidInputError("X is empty: fit needs at least one instance")
        if sp.issparse(X):
            return cls(X.shape[0], max_abs=np.asarray(abs(X).max(axis=0).toarray()).ravel())
        if not np.all(np.isfinite(X)):
            raise InvalidInputError("X contains NaN or infinite values")
        mean = X.mean(axis=0)
        return cls(X.shape[0], mean=mean, m2=((X - mean) ** 2).sum(axis=0))

    def merge(self, other: FeatureMoments) -> FeatureMoments:
        """The moments of both parts together (Chan, Golub & LeVeque's pairwise update)."""
        n = self.n + other.n
        if self.max_abs is not None and other.max_abs is not None:
            return FeatureMoments(n, max_abs=np.maximum(self.max_abs, other.max_abs))
        if self.mean is None or other.mean is None or self.m2 is None or other.m2 is None:
            raise InvalidInputError("dense and sparse features cannot be scaled together")
        delta = other.mean - self.mean
        mean = self.mean + delta * (other.n / n)
        m2 = self.m2 + other.m2 + delta**2 * (self.n * other.n / n)
        return FeatureMoments(n, mean=mean, m2=m2)

    def scale(self) -> tuple[np.ndarray | None, np.ndarray]:
        """``(mean, scale)``: the column means (``None`` for sparse features) and the column
        standard deviations (largest absolute values for sparse features); a constant column
        gets scale 1."""
        if self.max_abs is not None:
            m = self.max_abs
        else:
            assert self.m2 is not None  # dense moments hold m2 (of)
            m = np.sqrt(self.m2 / self.n)
        return self.mean, np.where(np.isfinite(m) & (m > 0), m, 1.0)


def learn_scale(
    X: Any, shared: FeatureMoments | None = None
) -> tuple[FeatureMoments, np.ndarray | None, np.ndarray]:
    """``(moments of X, mean, scale)``: the scaling a fit learns from its training features
    ``X`` — from the ``shared`` moments of all the training data when ``X`` is one part of it
    (:meth:`StructuredSVM._fit_statistics`)."""
    moments = FeatureMoments.of(X)
    return (moments, *(shared or moments).scale())


def apply_scale(X: Any, mean: np.ndarray | None, scale: np.ndarray | None) -> Any:
    """``X`` scaled as :func:`learn_scale` learned (unchanged when ``scale`` is ``None``)."""
    if scale is None:
        return X
    if X.shape[1] != scale.shape[0]:
        raise InvalidInputError(f"X has {X.shape[1]} features, expected {scale.shape[0]}")
    if sp.issparse(X):
        return sp.csr_array(X @ sp.diags_array(1.0 / scale))
    return (X - mean) / scale if mean is not None else X / scale


def learn_scaling(est: Any, X: Any, shared: Mapping[str, Any] | None) -> None:
    """Sets the scaling of the estimator ``est`` (``scale_mean_``, ``scale_std_`` and the
    ``_moments`` they come from) learnt from its training features ``X`` — from the moments of
    all the training data in ``shared`` (:meth:`StructuredSVM._fit_statistics`) when ``X`` is
    one part of it —; none when its ``scale`` is off."""
    est._moments = est.scale_mean_ = est.scale_std_ = None
    if est.scale:
        est._moments, est.scale_mean_, est.scale_std_ = learn_scale(
            X, (shared or {}).get("features")
        )


def scale_arrays(mean: Any, scale: Any) -> dict[str, np.ndarray]:
    """The scaling as a model file's float64 arrays (none when there is no scaling)."""
    if scale is None:
        return {}
    arrays = {"scale_std": np.asarray(scale, dtype=np.float64)}
    if mean is not None:
        arrays["scale_mean"] = np.asarray(mean, dtype=np.float64)
    return arrays


def saved_scale(arrays: Mapping[str, Any], n_features: int | None) -> tuple[Any, Any]:
    """``(mean, scale)`` of a model file's arrays (:func:`scale_arrays`), checked against the
    width of ``X`` it was fitted on (``n_features``; None: unknown, shapes only), as a one-line
    ``ModelFormatError``."""
    mean, scale = arrays.get("scale_mean"), arrays.get("scale_std")
    for name, a in (("scale_mean", mean), ("scale_std", scale)):
        if a is None:
            continue
        d = a.shape[0] if n_features is None and a.ndim == 1 else n_features
        if a.shape != (d,) or a.dtype.kind != "f":
            raise ModelFormatError(f"{name} is {a.dtype} {a.shape}, expected float ({d},)")
    if mean is not None and scale is None:
        raise ModelFormatError("scale_mean without scale_std")
    return mean, scale
