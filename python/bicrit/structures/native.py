"""Shared Python face of the native structures: input normalisation around a
``bicrit._native.NativeStructure``; the algorithms run in Rust with the GIL released."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from bicrit.errors import InvalidInputError
from bicrit.structures._inputs import as_csr_tuple
from bicrit.structures.base import Answer, Cone, Structure


def native_query(
    margin_coef: float, tiebreak: tuple[float, Mapping[str, float]] | None, k: int, cone: Any
) -> dict[str, Any]:
    """An oracle query's keyword arguments as the native oracles take them."""
    return {
        "margin_coef": float(margin_coef),
        "tiebreak": None if tiebreak is None else (float(tiebreak[0]), dict(tiebreak[1])),
        "k": int(k),
        "cone": None if cone is None else Cone(*cone).as_native(),
    }


class NativeStructure(Structure):
    """A structure whose oracle runs in Rust. Subclasses set ``self._native`` in ``initialize``
    and define how inputs are normalised (``_x_one``, ``_x_many``, ``_y_one``, ``_y_many``)."""

    _native: Any = None

    def _require(self) -> Any:
        if self._native is None:
            raise InvalidInputError(
                f"structure {self.name!r} is not initialised; call initialize(X, Y) first"
            )
        return self._native

    # Input normalisation hooks (identity by default).
    def _x_one(self, x: Any) -> Any:
        return x

    def _x_many(self, X: Any) -> Any:
        return X

    def _y_one(self, y: Any) -> Any:
        return y

    def _y_many(self, Y: Any) -> Any:
        return Y

    def _y_batch(self, Xn: Any, Y: Any) -> Any:
        """Labels of a batch whose inputs are ``Xn`` (already normalised)."""
        return self._y_many(Y)

    def native_inputs(self, X: Any, Y: Any) -> tuple[Any, Any]:
        """``(X, Y)`` of a training set as the native structure takes them (the wrapper's own
        normalisation, ``_x_many`` and ``_y_many``): what ``bicrit.learners.Trainer`` expects."""
        self._require()
        return self._x_many(X), self._y_many(Y)

    @property
    def capabilities(self) -> dict[str, bool]:  # type: ignore[override]
        return dict(self._require().capabilities)

    @property
    def size_joint_feature(self) -> int:
        return int(self._require().size_joint_feature)

    def _w(self, w: Any) -> np.ndarray:
        from bicrit.structures._inputs import as_weights

        return as_weights(w, self.size_joint_feature)

    def joint_feature(self, x: Any, y: Any) -> np.ndarray:
        native = self._require()
        idx, val = native.joint_feature_sparse(self._x_one(x), self._y_one(y))
        out = np.zeros(native.size_joint_feature)
        np.add.at(out, np.asarray(idx, dtype=np.int64), np.asarray(val))
        return out

    def terms(self, y: Any, y_true: Any) -> dict[str, float]:
        return dict(self._require().terms(self._y_one(y), self._y_one(y_true)))

    def instance_oracle(self, w: np.ndarray, x: Any, y_true: Any) -> Any:
        return self._require().instance_oracle(self._w(w), self._x_one(x), self._y_one(y_true))

    def predict_one(self, w: np.ndarray, x: Any) -> Any:
        return self._require().predict_one(self._w(w), self._x_one(x))

    def oracle(
        self,
        w: np.ndarray,
        x: Any,
        y_true: Any,
        coef: Mapping[str, float] | None = None,
        *,
        margin_coef: float = 1.0,
        tiebreak: tuple[float, Mapping[str, float]] | None = None,
        ban: Sequence[Any] | None = None,
        k: int = 1,
        cone: Cone | None = None,
    ) -> list[Answer]:
        native = self._require()
        found = native.oracle(
            self._w(w),
            self._x_one(x),
            self._y_one(y_true),
            dict(coef or {}),
            ban=None if ban is None else self._y_many(list(ban)),
            **native_query(margin_coef, tiebreak, k, cone),
        )
        return [Answer(label, margin, terms) for label, margin, terms in found]

    def batch_predict(self, w: np.ndarray, X: Any, n_jobs: int | None = None) -> Any:
        return self._require().batch_predict(self._w(w), self._x_many(X), n_jobs)

    def batch_oracle(
        self,
        w: np.ndarray,
        X: Any,
        Y: Any,
        coef: Mapping[str, float] | None = None,
        *,
        n_jobs: int | None = None,
        margin_coef: float = 1.0,
        tiebreak: tuple[float, Mapping[str, float]] | None = None,
        k: int = 1,
        cone: Cone | None = None,
    ) -> list[list[Answer]]:
        Xn = self._x_many(X)
        found = self._require().batch_oracle(
            self._w(w),
            Xn,
            self._y_batch(Xn, Y),
            dict(coef or {}),
            n_jobs=n_jobs,
            **native_query(margin_coef, tiebreak, k, cone),
        )
        return [[Answer(*a) for a in per] for per in found]


class MatrixStructure(NativeStructure):
    """A native structure whose instances are rows of a feature matrix ``n_features`` wide
    (dense or sparse, passed to the native code as CSR)."""

    matrix_input = True
    n_features: int | None = None

    def _x_one(self, x: Any) -> Any:
        return as_csr_tuple(x, name="x", n_features=self.n_features, one_row=True)

    def _x_many(self, X: Any) -> Any:
        return as_csr_tuple(X, name="X", n_features=self.n_features)
