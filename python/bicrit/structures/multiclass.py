"""The ``multiclass`` structure: one weight block per class, 0-1 loss, enumeration oracle
(docs/architecture.md, Structures;
the flat baseline). Labels are ints in ``0..n_classes``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from bicrit import _native
from bicrit.errors import InvalidInputError, InvalidParameterError
from bicrit.structures._inputs import as_csr_tuple
from bicrit.structures.native import MatrixStructure

__all__ = ["Multiclass"]


class Multiclass(MatrixStructure):
    """φ(x, y) = x in block y of ``n_classes`` blocks; L(y, y_i) = [y ≠ y_i].

    Parameters
    ----------
    n_classes, n_features:
        Sizes; ``None`` means "learn from data in :meth:`initialize`".
    classes:
        The users' class labels, class ``k`` being ``classes[k]`` (learned by
        :meth:`prepare_labels`); ``None``: the class ids themselves. A ``{"dtype", "values"}``
        mapping (a model file's form) is accepted.

    Terms: ``loss`` is the 0-1 loss, ``size`` is 1, ``hamming`` is 0 or 2 (between the indicator
    sets {y} and {y_i}).
    Every optional query is answered (ban list, k-best, cone).
    """

    name = "multiclass"

    report_names = (("accuracy", "accuracy"),)

    def __init__(
        self, n_classes: int | None = None, n_features: int | None = None, classes: Any = None
    ) -> None:
        self.n_classes = n_classes
        self.n_features = n_features
        if isinstance(classes, Mapping):  # as a model file stores them
            dtype = np.dtype(classes["dtype"])
            if dtype.kind not in "biufUS" or not isinstance(classes["values"], list):
                raise InvalidParameterError(
                    f"classes must be numbers or strings, got dtype {classes['dtype']!r}"
                )
            classes = np.asarray(classes["values"], dtype=dtype)
        self.classes = None if classes is None else np.asarray(classes)
        if self.classes is not None and n_classes is not None and len(self.classes) != n_classes:
            raise InvalidParameterError(
                f"{len(self.classes)} classes given for n_classes={n_classes}"
            )
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
        if self.n_classes is not None:
            n_classes = self.n_classes
        elif self.classes is not None:
            n_classes = len(self.classes)
        else:
            n_classes = max(int(Y.max()) + 1, 2)
        n_features = self.n_features if self.n_features is not None else X_csr[3]
        self._native = _native.multiclass_structure(int(n_classes), int(n_features))
        self.n_classes, self.n_features = n_classes, n_features
        return self

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

    # -- task behaviour (bicrit.structures.base) --------------------------------------------------

    def prepare_labels(self, Y: Any) -> np.ndarray:
        """Learns ``classes`` (sorted unique labels) and returns the class ids of ``Y``."""
        A = np.asarray(Y)
        if A.ndim != 1:
            raise InvalidInputError(f"Y must be 1-D (one class per row), got shape {A.shape}")
        classes, ids = np.unique(A, return_inverse=True)
        if classes.size < 2:
            raise InvalidInputError(
                f"multiclass needs at least two classes; Y holds one class ({classes.tolist()})"
            )
        self.classes = classes
        return ids.astype(np.int64)

    def decode(self, P: Sequence[Any]) -> np.ndarray:
        ids = np.asarray(P, dtype=np.int64)
        return ids if self.classes is None else self.classes[ids]

    def headline(self, Y: Any, P: Any) -> float:
        """Accuracy."""
        y, p = np.asarray(Y), np.asarray(P)
        if y.shape != p.shape:
            raise InvalidInputError(f"Y has shape {y.shape} but there are {p.shape} predictions")
        return float(np.mean(y == p))

    def report(self, Y: Any, P: Any) -> dict[str, Any]:
        return {"accuracy": self.headline(Y, P)}

    def record(self, p: Any) -> dict[str, Any]:
        return {"class": p.item() if isinstance(p, np.generic) else p}

    def coef(self, w: np.ndarray) -> np.ndarray:
        """One row of weights per class: ``(n_classes, n_features)``."""
        assert self.n_classes is not None and self.n_features is not None  # initialised
        return w.reshape(self.n_classes, self.n_features)

    def decision_function(self, w: np.ndarray, X: Any) -> np.ndarray:
        """Per-class scores ``X @ coef.T`` (columns in class order)."""
        import scipy.sparse as sp

        indptr, indices, data, d = self._x_many(X)
        M = sp.csr_array((data, indices, indptr), shape=(len(indptr) - 1, d))
        return np.asarray(M @ self.coef(w).T)

    def get_config(self) -> dict[str, Any]:
        classes = None
        if self.classes is not None:
            c = self.classes
            if c.dtype.kind not in "iubU":
                c = c.astype(str)
            classes = {"dtype": c.dtype.str, "values": c.tolist()}
        return {"n_classes": self.n_classes, "n_features": self.n_features, "classes": classes}
