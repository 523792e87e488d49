"""The ``assignment`` structure: bipartite perfect matchings (labels are permutations).

An input x is an array of shape (n, n, d): x[i, j] holds the d features of the pair (item i,
slot j). A label y is a permutation of range(n) — y[i] is the slot of item i — and

* φ(x, y) = Σ_i x[i, y[i]] (length d), so the score w·φ(x, y) = Σ_i S[i, y[i]] with S = x·w;
* the task loss L(y, y_i) = #{i : y[i] ≠ y_i[i]} (Hamming loss over positions, not normalised);
* terms: ``loss`` = L, ``size`` = n (every label has n pairs: constant), ``hamming`` = 2·L (the
  Hamming distance between the pair sets {(i, y[i])} and {(i, y_i[i])}: each differing position
  adds one pair and removes another);
* the λ-oracle argmax_y m(y) + λ L(y, y_i) is a max-weight perfect matching of
  S[i, j] + λ·[j ≠ y_i[i]]: ``scipy.optimize.linear_sum_assignment``; λ = 0 and λ = ∞ are exact
  lexicographic queries; k-best and ban lists by Murty's algorithm (:mod:`bicrit_assignment.murty`);
  no constrained (cone) oracle — a slope constraint is not an assignment problem, so bicrit's
  angular search refuses this structure.

Labels are returned as int64 numpy arrays; any sequence of ints is accepted as a label. Instances
may have different n; every instance of a dataset has the same d.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import numpy as np
from bicrit.errors import InvalidInputError, UnsupportedQueryError
from bicrit.structures.base import Answer, Cone, Structure

from bicrit_assignment.murty import best_assignment, ranked_assignments

__all__ = ["Assignment"]


class Assignment(Structure):
    """Bipartite perfect matching / assignment (see the module docstring).

    Parameters
    ----------
    n_features:
        d, the number of features of a pair; ``None`` means "learn from data in
        :meth:`initialize`".
    """

    name = "assignment"
    capabilities: ClassVar[Mapping[str, bool]] = {
        "ban": True,
        "kbest": True,
        "cone": False,
        "relaxed": False,
        "frontier": False,
    }

    def __init__(self, n_features: int | None = None) -> None:
        if n_features is not None and (
            isinstance(n_features, bool) or not isinstance(n_features, int | np.integer)
        ):
            raise InvalidInputError(f"n_features must be an int or None, got {n_features!r}")
        if n_features is not None and n_features < 1:
            raise InvalidInputError(f"n_features must be ≥ 1, got {n_features}")
        self.n_features = None if n_features is None else int(n_features)

    # --- sizes and data --------------------------------------------------------------------------

    @property
    def size_joint_feature(self) -> int:
        """d (one weight per pair feature)."""
        if self.n_features is None:
            raise InvalidInputError(
                "structure 'assignment' is not initialised; call initialize(X, Y) first "
                "(or pass n_features)"
            )
        return self.n_features

    def initialize(self, X: Any, Y: Any) -> Assignment:
        """Reads d from the data and checks every instance and label; returns ``self``."""
        X, Y = list(X), list(Y)
        if not X:
            raise InvalidInputError("X is empty: the assignment structure needs instances")
        if len(X) != len(Y):
            raise InvalidInputError(f"X has {len(X)} instances but Y has {len(Y)} labels")
        dims = {self._x(x, i).shape[2] for i, x in enumerate(X)}
        if len(dims) != 1:
            raise InvalidInputError(f"instances have different feature counts d: {sorted(dims)}")
        (d,) = dims
        if self.n_features is not None and self.n_features != d:
            raise InvalidInputError(
                f"n_features = {self.n_features} but the instances have d = {d}"
            )
        self.n_features = int(d)
        for i, (x, y) in enumerate(zip(X, Y, strict=True)):
            self._label(y, np.shape(x)[0], f"Y[{i}]")
        return self

    def _x(self, x: Any, where: int | None = None) -> np.ndarray:
        x = np.asarray(x, dtype=float)
        what = "x" if where is None else f"X[{where}]"
        if x.ndim != 3 or x.shape[0] != x.shape[1] or x.shape[0] < 1:
            raise InvalidInputError(
                f"{what} must have shape (n, n, d) — the features of each (item, slot) pair — "
                f"got {x.shape}"
            )
        if where is None and self.n_features is not None and x.shape[2] != self.n_features:
            raise InvalidInputError(
                f"{what} has d = {x.shape[2]} features, expected {self.n_features}"
            )
        if not np.all(np.isfinite(x)):
            raise InvalidInputError(f"{what} holds NaN or infinite features")
        return x

    @staticmethod
    def _label(y: Any, n: int, what: str = "y") -> np.ndarray:
        try:
            arr = np.asarray(y)
        except Exception as exc:  # pragma: no cover - exotic inputs
            raise InvalidInputError(f"{what} is not a permutation: {exc}") from exc
        if arr.ndim != 1 or arr.shape[0] != n:
            raise InvalidInputError(f"{what} must be a permutation of range({n}), got {y!r}")
        if arr.dtype.kind not in "iu" and not (
            arr.dtype.kind == "f" and np.all(arr == np.round(arr))
        ):
            raise InvalidInputError(f"{what} must hold integer slots, got dtype {arr.dtype}")
        arr = arr.astype(np.int64)
        if not np.array_equal(np.sort(arr), np.arange(n)):
            raise InvalidInputError(
                f"{what} must be a permutation of range({n}), got {arr.tolist()}"
            )
        return arr

    def check_label(self, x: Any, y: Any) -> None:
        """Raises :class:`~bicrit.errors.InvalidInputError` unless ``y`` is a permutation of
        range(n) for the instance ``x`` (called by bicrit's native code on gold labels)."""
        self._label(y, np.shape(x)[0])

    # --- φ, loss and terms ---------------------------------------------------------------------

    def joint_feature(self, x: Any, y: Any) -> np.ndarray:
        """φ(x, y) = Σ_i x[i, y[i]]."""
        x = self._x(x)
        y = self._label(y, x.shape[0])
        return x[np.arange(x.shape[0]), y].sum(axis=0)

    def terms(self, y: Any, y_true: Any) -> dict[str, float]:
        """``loss`` = positions that differ, ``size`` = n, ``hamming`` = 2 × loss."""
        yt = self._label(y_true, len(y_true), "y_true")
        y = self._label(y, len(yt))
        diff = float(np.count_nonzero(y != yt))
        return {"loss": diff, "size": float(len(yt)), "hamming": 2.0 * diff}

    # --- inference -----------------------------------------------------------------------------

    def _scores(self, w: np.ndarray, x: np.ndarray) -> np.ndarray:
        w = np.asarray(w, dtype=float)
        if w.shape != (self.size_joint_feature,):
            raise InvalidInputError(
                f"w must have shape ({self.size_joint_feature},), got {w.shape}"
            )
        return x @ w

    def predict_one(self, w: np.ndarray, x: Any) -> np.ndarray:
        """argmax_y w·φ(x, y): a max-weight perfect matching of x·w."""
        x = self._x(x)
        perm = best_assignment(self._scores(w, x))
        assert perm is not None  # a complete finite bipartite graph always has one
        return perm

    @staticmethod
    def _objective(
        S: np.ndarray, mismatch: np.ndarray, margin_coef: float, coef: Mapping[str, float]
    ) -> np.ndarray:
        """Per-pair weights of margin_coef·m(y) + Σ_t coef[t]·term_t(y), up to a constant
        (−margin_coef·score(y_i) and coef[size]·n do not depend on y)."""
        unknown = set(coef) - {"loss", "size", "hamming"}
        if unknown:
            raise InvalidInputError(
                f"unknown terms {sorted(unknown)}; the terms are loss, size, hamming"
            )
        per_mismatch = float(coef.get("loss", 0.0)) + 2.0 * float(coef.get("hamming", 0.0))
        return margin_coef * S + per_mismatch * mismatch

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
        """The ``k`` best permutations under ``margin_coef·m(y) + Σ_t coef[t]·term_t(y)``, best
        first, ties broken by ``tiebreak`` exactly, skipping the labels in ``ban``."""
        if cone is not None:
            raise UnsupportedQueryError("structure 'assignment' has no constrained λ-oracle (cone)")
        if k < 1:
            raise InvalidInputError(f"k must be at least 1, got {k}")
        x = self._x(x)
        n = x.shape[0]
        yt = self._label(y_true, n, "y_true")
        S = self._scores(w, x)
        mismatch = np.ones((n, n))
        mismatch[np.arange(n), yt] = 0.0
        primary = self._objective(S, mismatch, float(margin_coef), dict(coef or {}))
        secondary = (
            None
            if tiebreak is None
            else self._objective(S, mismatch, float(tiebreak[0]), dict(tiebreak[1]))
        )
        banned = [tuple(self._label(b, n, "a banned label").tolist()) for b in (ban or ())]
        if k == 1 and not banned:
            best = best_assignment(primary, secondary)
            found = [] if best is None else [best]
        else:
            found = ranked_assignments(primary, k, secondary, banned)
        rows = np.arange(n)
        gold = float(S[rows, yt].sum())
        out = []
        for perm in found:
            diff = float(np.count_nonzero(perm != yt))
            terms = {"loss": diff, "size": float(n), "hamming": 2.0 * diff}
            out.append(Answer(perm, float(S[rows, perm].sum()) - gold, terms))
        return out

    def __repr__(self) -> str:
        return f"Assignment(n_features={self.n_features!r})"
