"""Feature scaling learned in ``fit`` and saved with a model (``MultiLabelSVM(scale=True)``,
``HierarchicalSVM(scale=True)``): SGD and BCFW take steps proportional to the features, so
unscaled dense features make them oscillate or diverge (docs/architecture.md, Learners).

Dense features are standardised (training mean and standard deviation); sparse ones are divided
by their largest absolute value, which keeps them sparse. A constant column gets scale 1.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

from bicrit.errors import InvalidInputError

__all__ = ["apply_scale", "fit_scale"]


def fit_scale(X: Any) -> tuple[np.ndarray | None, np.ndarray]:
    """``(mean, scale)`` of the training features ``X``: the column means (``None`` for sparse
    ``X``) and the column standard deviations (largest absolute values for sparse ``X``)."""
    if X.shape[0] == 0:
        raise InvalidInputError("X is empty: fit needs at least one instance")
    if sp.issparse(X):
        m = np.asarray(abs(X).max(axis=0).toarray()).ravel()
        mean = None
    else:
        if not np.all(np.isfinite(X)):
            raise InvalidInputError("X contains NaN or infinite values")
        mean = X.mean(axis=0)
        m = X.std(axis=0)
    return mean, np.where(np.isfinite(m) & (m > 0), m, 1.0)


def apply_scale(X: Any, mean: np.ndarray | None, scale: np.ndarray | None) -> Any:
    """``X`` scaled as :func:`fit_scale` learned (unchanged when ``scale`` is ``None``)."""
    if scale is None:
        return X
    if X.shape[1] != scale.shape[0]:
        raise InvalidInputError(f"X has {X.shape[1]} features, expected {scale.shape[0]}")
    if sp.issparse(X):
        return sp.csr_array(X @ sp.diags_array(1.0 / scale))
    return (X - mean) / scale if mean is not None else X / scale
