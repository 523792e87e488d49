"""The ``multiclass`` structure: one weight block per class, 0-1 loss, enumeration oracle
(DESIGN §4; the flat baseline). Labels are ints in ``0..n_classes``."""

from __future__ import annotations

from typing import Any

import numpy as np

from bicrit import _native
from bicrit.errors import InvalidInputError
from bicrit.structures._inputs import as_csr_tuple
from bicrit.structures.native import NativeStructure

__all__ = ["Multiclass"]


class Multiclass(NativeStructure):
    """φ(x, y) = x in block y of ``n_classes`` blocks; L(y, y_i) = [y ≠ y_i].

    Parameters
    ----------
    n_classes, n_features:
        Sizes; ``None`` means "learn from data in :meth:`initialize`".

    Terms: ``loss`` is the 0-1 loss, ``size`` is 1, ``hamming`` is 0 or 2 (between the indicator
    sets {y} and {y_i}).
    Every optional query is answered (ban list, k-best, cone).
    """

    name = "multiclass"

    def __init__(self, n_classes: int | None = None, n_features: int | None = None) -> None:
        self.n_classes = n_classes
        self.n_features = n_features
        if n_classes is not None and n_features is not None:
            self._native = _native.multiclass_structure(int(n_classes), int(n_features))

    def initialize(self, X: Any, Y: Any) -> Multiclass:
        X_csr = as_csr_tuple(X, name="X")
        Y = np.asarray(Y)
        if Y.ndim != 1 or Y.shape[0] != X_csr[0].shape[0] - 1:
            n = X_csr[0].shape[0] - 1
            raise InvalidInputError(
                f"Y must be 1-D with one class per row of X ({n}), got shape {Y.shape}"
            )
        if not np.issubdtype(Y.dtype, np.integer):
            raise InvalidInputError(f"Y must hold integer class ids, got dtype {Y.dtype}")
        if Y.size and Y.min() < 0:
            raise InvalidInputError(f"class ids must be ≥ 0, got {Y.min()}")
        n_classes = self.n_classes if self.n_classes is not None else max(int(Y.max()) + 1, 2)
        n_features = self.n_features if self.n_features is not None else X_csr[3]
        self._native = _native.multiclass_structure(int(n_classes), int(n_features))
        self.n_classes, self.n_features = n_classes, n_features
        return self

    def _x_one(self, x: Any) -> Any:
        return as_csr_tuple(x, name="x", n_features=self.n_features, one_row=True)

    def _x_many(self, X: Any) -> Any:
        return as_csr_tuple(X, name="X", n_features=self.n_features)

    def _y_one(self, y: Any) -> Any:
        if isinstance(y, bool) or not isinstance(y, int | np.integer):
            raise InvalidInputError(f"a multiclass label is an int, got {type(y).__name__}")
        return int(y)

    def _y_many(self, Y: Any) -> Any:
        A = np.asarray(Y)
        if A.size and not np.issubdtype(A.dtype, np.integer):
            raise InvalidInputError(
                f"multiclass labels must be integer class ids, got dtype {A.dtype}"
            )
        if A.ndim != 1:
            raise InvalidInputError(f"multiclass labels must be 1-D, got shape {A.shape}")
        return A.astype(np.int64)
