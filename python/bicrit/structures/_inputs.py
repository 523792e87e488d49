"""Input normalisation for the native structures: feature matrices to validated CSR tuples."""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

from bicrit.errors import InvalidInputError

CsrTuple = tuple[np.ndarray, np.ndarray, np.ndarray, int]


def as_csr_tuple(
    X: Any, *, name: str = "X", n_features: int | None = None, one_row: bool = False
) -> CsrTuple:
    """``(indptr int64, indices int32, data float64, n_cols)`` of a dense or sparse matrix.

    A 1-D array is one row. NaN or infinite values, a wrong number of columns, or (with
    ``one_row``) several rows raise :class:`InvalidInputError` naming ``name``.
    """
    if sp.issparse(X):
        M = sp.csr_array(X, dtype=np.float64)
    else:
        try:
            A = np.asarray(X, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise InvalidInputError(
                f"{name} must be a numeric array or sparse matrix ({exc})"
            ) from None
        if A.ndim == 1:
            A = A[None, :]
        if A.ndim != 2:
            raise InvalidInputError(f"{name} must be 2-D (instances × features), got {A.ndim}-D")
        M = sp.csr_array(A)
    M.sum_duplicates()
    M.sort_indices()
    if M.data.size and not np.all(np.isfinite(M.data)):
        bad = np.flatnonzero(~np.isfinite(M.data))[0]
        row = int(np.searchsorted(M.indptr, bad, side="right") - 1)
        raise InvalidInputError(f"{name} contains NaN or infinite values (first in row {row})")
    if n_features is not None and M.shape[1] != n_features:
        raise InvalidInputError(f"{name} has {M.shape[1]} features, expected {n_features}")
    if one_row and M.shape[0] != 1:
        raise InvalidInputError(f"{name} must be a single instance, got {M.shape[0]} rows")
    return (
        M.indptr.astype(np.int64, copy=False),
        M.indices.astype(np.int32, copy=False),
        M.data.astype(np.float64, copy=False),
        int(M.shape[1]),
    )


def as_weights(w: Any, size: int) -> np.ndarray:
    """A contiguous float64 weight vector of length ``size`` (checked again natively)."""
    v: np.ndarray = np.ascontiguousarray(w, dtype=np.float64)
    if v.ndim != 1 or v.shape[0] != size:
        raise InvalidInputError(f"w must have shape ({size},), got {v.shape}")
    return v
