"""The structure protocol: what every label structure provides, native or written in Python.

A structure knows its joint feature map φ(x, y), its task loss, the decomposable *terms* its
oracle can add to the margin, and an oracle (docs/architecture.md, Structures)::

    s = bicrit.structure("multiclass")
    s.initialize(X, Y)                    # fixes sizes from data
    s.joint_feature(x, y)                 # 1-D array of length s.size_joint_feature
    s.loss(y, y_true)
    s.predict_one(w, x)                   # argmax_y w·φ(x, y), always integral
    s.oracle(w, x, y_true, {"loss": lam}) # argmax_y m(y) + Σ_t coef[t]·term_t(y), best first
    s.lambda_oracle(w, x, y_true, lam)    # shorthand for coef = {"loss": lam}; lam may be 0 or inf

Terms are ``loss`` (the task loss), ``size`` (the label size |y|) and ``hamming`` (the Hamming
distance between indicator sets, which the Micro-F1 surrogate needs). ``capabilities`` says which
optional queries the oracle answers: ``ban`` (exclude labels), ``kbest``, ``cone`` (restrict the
slope loss/(1 + m) to an interval), and whether answers may be ``relaxed`` (fractional).

**Task behaviour.** A structure also says what its task means to a user, so that the estimators
and the command line need no case per structure: ``prepare_labels``/``decode`` (labels as users
write them ↔ the structure's labels), ``headline`` and ``report`` (metrics, with
``report_names`` for display), ``record`` (one prediction as JSON for ``bicrit predict``),
``coef`` (the weight vector in the layout users read) and ``get_config`` (the parameters that
rebuild the fitted structure without data, for model files). The defaults below suit any
structure; the built-ins refine them.

A structure written in Python subclasses :class:`Structure` (or follows the same protocol) and
works with every search and learner — only slower, since it runs under the GIL.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np

from bicrit.errors import InvalidInputError

__all__ = [
    "TERMS",
    "Answer",
    "Cone",
    "Structure",
    "as_native",
    "jsonable",
    "labels_equal",
    "take",
]

#: Names of the decomposable terms an oracle can weight.
TERMS: tuple[str, ...] = ("loss", "size", "hamming")


class Answer(NamedTuple):
    """One label returned by an oracle, with its margin m(y) and its term values."""

    label: Any
    margin: float
    terms: dict[str, float]


class Cone(NamedTuple):
    """A slope interval ``lo ≤ L/(1 + m) ≤ hi`` for the constrained λ-oracle, with open or
    closed ends; in linear form ``lo·(1 + m) ≤ L`` and ``L ≤ hi·(1 + m)`` (thesis eq.
    ``constrained_oracle``)."""

    lo: float
    hi: float = math.inf
    lo_closed: bool = True
    hi_closed: bool = False

    def contains(self, margin: float, loss: float) -> bool:
        """Whether a label with margin ``margin`` and loss ``loss`` — a point (h, g) of slack
        rescaling's plane — lies in the cone (tested on (1 + m, L))."""
        big_h = 1.0 + margin
        lo_ok = self.lo * big_h <= loss if self.lo_closed else self.lo * big_h < loss
        if math.isinf(self.hi):
            return lo_ok
        hi_ok = loss <= self.hi * big_h if self.hi_closed else loss < self.hi * big_h
        return lo_ok and hi_ok

    def as_native(self) -> tuple[float, bool, float, bool]:
        """The tuple the native oracles take."""
        return (float(self.lo), bool(self.lo_closed), float(self.hi), bool(self.hi_closed))


def lambda_query(lam: float) -> dict[str, Any]:
    """Oracle arguments of the λ-oracle ``argmax m + λ·L``; λ = 0 and λ = ∞ are lexicographic."""
    lam = float(lam)
    if math.isnan(lam) or lam < 0:
        raise ValueError(f"lam must be ≥ 0 (0 and inf allowed), got {lam}")
    if lam == 0.0:
        return {"coef": {}, "margin_coef": 1.0, "tiebreak": (0.0, {"loss": 1.0})}
    if math.isinf(lam):
        return {"coef": {"loss": 1.0}, "margin_coef": 0.0, "tiebreak": (1.0, {})}
    return {"coef": {"loss": lam}, "margin_coef": 1.0, "tiebreak": None}


class Structure(ABC):
    """Base class of label structures (the protocol; see the module docstring)."""

    #: Registry name.
    name: str = ""
    #: Optional oracle queries answered.
    capabilities: Mapping[str, bool] = {
        "ban": False,
        "kbest": False,
        "cone": False,
        "relaxed": False,
        "frontier": False,
    }

    @property
    @abstractmethod
    def size_joint_feature(self) -> int:
        """Length of φ(x, y)."""

    @abstractmethod
    def initialize(self, X: Any, Y: Any) -> Structure:
        """Fixes sizes from data and returns ``self``."""

    @abstractmethod
    def joint_feature(self, x: Any, y: Any) -> np.ndarray:
        """φ(x, y) as a dense 1-D float64 array."""

    @abstractmethod
    def terms(self, y: Any, y_true: Any) -> dict[str, float]:
        """Values of the decomposable terms of ``y`` against ``y_true``."""

    def loss(self, y: Any, y_true: Any) -> float:
        """Task loss L(y, y_true)."""
        return float(self.terms(y, y_true)["loss"])

    @abstractmethod
    def predict_one(self, w: np.ndarray, x: Any) -> Any:
        """argmax_y w·φ(x, y) (integral)."""

    @abstractmethod
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
        """The ``k`` best labels under ``margin_coef·m(y) + Σ_t coef[t]·term_t(y)``, best first.

        ``tiebreak = (margin_coef', coef')`` breaks exact ties lexicographically (λ = 0 and
        λ = ∞ queries); ``ban`` excludes labels; ``cone`` restricts to a slope interval. An empty
        list means no label satisfies ``ban`` and ``cone``.
        """

    def native_inputs(self, X: Any, Y: Any) -> tuple[Any, Any]:
        """``(X, Y)`` of a whole training set in the form the native structure of
        :func:`as_native` takes them (what ``bicrit.learners.Trainer`` expects). For a structure
        written in Python: the list of instances (rows of a matrix) and the list of labels."""
        xs = _rows(X)
        try:
            ys = list(Y)
        except TypeError:
            raise InvalidInputError(
                f"Y must be a sequence of labels, got {type(Y).__name__}"
            ) from None
        return xs, ys

    def lambda_oracle(self, w: np.ndarray, x: Any, y_true: Any, lam: float) -> Any:
        """``argmax_y m(y) + λ·L(y, y_true)``; λ = 0 and λ = inf are lexicographic queries."""
        return self.oracle(w, x, y_true, **lambda_query(lam))[0].label

    def instance_oracle(self, w: np.ndarray, x: Any, y_true: Any) -> Any:
        """Instance ``x`` with gold ``y_true`` under ``w`` as an oracle for :func:`bicrit.search`,
        which then runs natively over this structure's oracle (through the plugin adapter for a
        structure written in Python)."""
        w = np.ascontiguousarray(w, dtype=np.float64)
        return as_native(self).instance_oracle(w, x, y_true)

    def batch_predict(self, w: np.ndarray, X: Any, n_jobs: int | None = None) -> list[Any]:
        """``predict_one`` over many instances."""
        return [self.predict_one(w, x) for x in _rows(X)]

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
        """``oracle`` over many instances with the same query."""
        given = {
            "margin_coef": (margin_coef, 1.0),
            "tiebreak": (tiebreak, None),
            "k": (k, 1),
            "cone": (cone, None),
        }
        query: dict[str, Any] = {k: v for k, (v, default) in given.items() if v != default}
        return [self.oracle(w, x, y, coef, **query) for x, y in zip(_rows(X), Y, strict=True)]

    # ------------------------------------------------------------ task behaviour

    #: Whether instances are rows of a feature matrix (estimators then check ``X`` as
    #: scikit-learn does).
    matrix_input: bool = False

    #: The metrics of :meth:`report` as ``(key, display name)``, the headline first.
    report_names: tuple[tuple[str, str], ...] = (("score", "1 − mean task loss"),)

    def prepare_labels(self, Y: Any) -> Any:
        """Training labels as users write them → the structure's labels, learning any
        vocabulary (e.g. class names) before :meth:`initialize`. Default: unchanged."""
        return Y

    def known_labels(self, Y: Any) -> Any:
        """Labels of a continued fit (``warm_start``) in the vocabulary learnt in the first: the
        ids of :attr:`classes` when the structure has them (a class unseen then is an error),
        else :meth:`prepare_labels`."""
        classes = getattr(self, "classes", None)
        if classes is None:
            return self.prepare_labels(Y)
        Y = np.asarray(Y)
        ids = np.clip(np.searchsorted(classes, Y), 0, len(classes) - 1)
        unknown = classes[ids] != Y
        if np.any(unknown):
            raise InvalidInputError(
                f"Y holds classes unseen in the first fit: {np.unique(Y[unknown]).tolist()}"
            )
        return ids.astype(np.int64)

    def decode(self, P: Sequence[Any]) -> Any:
        """Predicted labels → the form users write them (the inverse of
        :meth:`prepare_labels`). Default: unchanged."""
        return P

    def headline(self, Y: Any, P: Any) -> float:
        """The task's headline metric (higher is better) of decoded predictions ``P`` against
        ``Y``. Default: 1 − the mean task loss."""
        losses = [self.loss(p, y) for p, y in zip(P, Y, strict=True)]
        return 1.0 - float(np.mean(losses)) if losses else float("nan")

    def report(self, Y: Any, P: Any) -> dict[str, Any]:
        """Every metric of the task (keys of :attr:`report_names` among them)."""
        return {"score": self.headline(Y, P)}

    def record(self, p: Any) -> dict[str, Any]:
        """One decoded prediction as JSON-able fields (``bicrit predict``'s output lines)."""
        return {"label": jsonable(p)}

    def history_labels(self) -> dict[str, Any]:
        """Constant columns this fitted structure adds to ``history_`` (e.g. the multi-label
        graph chosen by ``edges="auto"`` and why). Default: none."""
        return {}

    def validation_key(self, Y: Any, P: Any) -> tuple[float, ...]:
        """What choosing hyper-parameters on held-out data maximises (lexicographically).
        Default: the headline metric."""
        return (self.headline(Y, P),)

    def take(self, X: Any, indices: Sequence[int] | np.ndarray) -> Any:
        """The instances ``indices`` of inputs in this structure's form (matrix rows, items of
        a sequence): held-out splits for C="auto"."""
        return take(X, indices)

    def coef(self, w: np.ndarray) -> np.ndarray:
        """The weight vector in the layout users read (``coef_``). Default: as is."""
        return w

    def get_config(self) -> dict[str, Any]:
        """Constructor parameters (sizes included) that rebuild this fitted structure without
        data (model files). Default: the constructor's parameters read back from attributes."""
        from bicrit.estimators.pieces import ctor_params

        return ctor_params(self)


def _rows(X: Any) -> list[Any]:
    if hasattr(X, "tocsr"):
        X = X.tocsr()
        return [X[i : i + 1] for i in range(X.shape[0])]
    return list(X)


def take(X: Any, indices: Sequence[int] | np.ndarray) -> Any:
    """Items ``indices`` of a matrix (rows, dense or sparse), an array or a sequence."""
    idx = np.asarray(indices, dtype=np.int64)
    if hasattr(X, "shape") and hasattr(X, "__getitem__") and not isinstance(X, tuple):
        return X[idx]
    return [X[int(i)] for i in idx]


def jsonable(x: Any) -> Any:
    """Plain JSON values from numpy arrays and scalars, tuples and nested lists."""
    if isinstance(x, np.ndarray):
        return x.tolist()
    if isinstance(x, list | tuple):
        return [jsonable(v) for v in x]
    if isinstance(x, np.generic):
        return x.item()
    return x


def labels_equal(a: Any, b: Any) -> bool:
    """Label equality used by native code for Python labels: ``==``, reduced for arrays."""
    if a is b:
        return True
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return bool(np.array_equal(a, b))
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(labels_equal(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def as_native(structure: Any) -> Any:
    """The ``bicrit._native.NativeStructure`` that native searches and learners drive: the
    structure's own for built-ins, an adapter calling back into Python for plugins."""
    from bicrit import _native

    native = getattr(structure, "_native", None)
    if native is not None:
        return native
    return _native.python_structure(structure)
