"""Helpers shared by the metric modules: parameter checks and guarded division."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import scipy.sparse as sp

from bicrit.errors import InvalidInputError, InvalidParameterError

__all__: list[str] = []


def check_zero_division(zero_division: float, name: str = "zero_division") -> float:
    """Return ``zero_division`` as a float after checking it lies in [0, 1] (NaN allowed)."""
    if isinstance(zero_division, bool) or not isinstance(zero_division, int | float | np.floating):
        raise InvalidParameterError(
            f"{name} must be a number in [0, 1] or NaN, got {zero_division!r}"
        )
    value = float(zero_division)
    if not (math.isnan(value) or 0.0 <= value <= 1.0):
        raise InvalidParameterError(f"{name} must be a number in [0, 1] or NaN, got {value!r}")
    return value


def divide(numerator: np.ndarray, denominator: np.ndarray, zero_value: float) -> np.ndarray:
    """Elementwise ``numerator / denominator`` in float64, ``zero_value`` where divided by 0."""
    numerator = np.asarray(numerator, dtype=np.float64)
    denominator = np.asarray(denominator, dtype=np.float64)
    out = np.full(np.broadcast(numerator, denominator).shape, zero_value, dtype=np.float64)
    np.divide(numerator, denominator, out=out, where=denominator != 0)
    return out


def divide_scalar(numerator: float, denominator: float, zero_value: float) -> float:
    """``numerator / denominator``, or ``zero_value`` when the denominator is 0."""
    return float(numerator) / float(denominator) if denominator != 0 else float(zero_value)


def check_same_count(n_gold: int, n_pred: int, gold_name: str, pred_name: str, what: str) -> None:
    """Raise when the two inputs hold a different number of ``what`` (instances, sentences…)."""
    if n_gold != n_pred:
        raise InvalidInputError(
            f"{gold_name} and {pred_name} must hold the same number of {what}: "
            f"{gold_name} has {n_gold}, {pred_name} has {n_pred}"
        )
    if n_gold == 0:
        raise InvalidInputError(f"{gold_name} and {pred_name} are empty: no {what} to score")


def as_indicator(Y: Any, name: str, columns: str = "labels") -> np.ndarray | sp.csr_array:
    """Validate one (n, K) 0/1 indicator matrix; return a bool ndarray or a CSR array of ones.

    ``columns`` names what the columns are (labels, nodes) in the error messages.
    """
    if sp.issparse(Y):
        if Y.ndim != 2:
            raise InvalidInputError(
                f"{name} must be 2-D (n_samples, n_{columns}), got shape {Y.shape}"
            )
        csr = sp.csr_array(Y, copy=True)
        csr.sum_duplicates()
        data = csr.data
        if data.dtype.kind not in "biuf":
            raise InvalidInputError(f"{name} must hold 0/1 values, got dtype {data.dtype}")
        bad = ~((data == 0) | (data == 1))
        if bad.any():
            raise InvalidInputError(
                f"{name} must hold only 0/1 values, found {data[bad][0].item()!r} "
                "(duplicate sparse entries are summed first)"
            )
        csr.eliminate_zeros()
        csr.data = np.ones_like(csr.data, dtype=np.int64)
        out: np.ndarray | sp.csr_array = csr
    else:
        try:
            arr = np.asarray(Y)
        except (TypeError, ValueError) as err:  # ragged nested lists
            raise InvalidInputError(f"{name} is not a rectangular array: {err}") from err
        if arr.ndim != 2:
            raise InvalidInputError(
                f"{name} must be 2-D (n_samples, n_{columns}), got shape {arr.shape}"
            )
        if arr.dtype.kind not in "biuf":
            raise InvalidInputError(f"{name} must hold 0/1 values, got dtype {arr.dtype}")
        if arr.dtype.kind != "b":
            bad = ~((arr == 0) | (arr == 1))
            if bad.any():
                row, col = np.argwhere(bad)[0]
                raise InvalidInputError(
                    f"{name} must hold only 0/1 values, found {arr[row, col].item()!r} "
                    f"at row {row}, column {col}"
                )
        out = arr.astype(bool, copy=False)
    n, k = out.shape
    if n == 0:
        raise InvalidInputError(f"{name} is empty: it has no instances (shape {out.shape})")
    if k == 0:
        raise InvalidInputError(f"{name} has no {columns} (shape {out.shape})")
    return out
