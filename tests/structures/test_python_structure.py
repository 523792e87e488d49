"""A structure written in Python runs through the native adapter (as plugins do) and gives the
same answers as calling it directly; its exceptions reach the caller unchanged."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import numpy as np
import pytest

from bicrit.structures.base import Answer, Cone, Structure, as_native


class PyMulticlass(Structure):
    """A deliberately plain multiclass structure in pure Python."""

    name = "py-multiclass"
    capabilities: ClassVar[dict[str, bool]] = {
        "ban": True,
        "kbest": True,
        "cone": False,
        "relaxed": False,
    }

    def __init__(self, n_classes: int, n_features: int) -> None:
        self.K, self.d = n_classes, n_features

    @property
    def size_joint_feature(self) -> int:
        return self.K * self.d

    def initialize(self, X: Any, Y: Any) -> PyMulticlass:
        return self

    def joint_feature(self, x: Any, y: Any) -> np.ndarray:
        out = np.zeros(self.K * self.d)
        out[y * self.d : (y + 1) * self.d] = x
        return out

    def terms(self, y: Any, y_true: Any) -> dict[str, float]:
        wrong = float(y != y_true)
        return {"loss": wrong, "size": 1.0, "hamming": 2 * wrong}

    def predict_one(self, w: np.ndarray, x: Any) -> int:
        return int(np.argmax(w.reshape(self.K, self.d) @ x))

    def check_label(self, x: Any, y: Any) -> None:
        if not 0 <= y < self.K:
            raise IndexError(f"class {y} out of range")

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
        coef = dict(coef or {})
        scores = w.reshape(self.K, self.d) @ x
        rows = []
        for y in range(self.K):
            if ban and y in ban:
                continue
            m, t = scores[y] - scores[y_true], self.terms(y, y_true)
            p = margin_coef * m + sum(c * t[n] for n, c in coef.items())
            q = (
                0.0
                if tiebreak is None
                else tiebreak[0] * m + sum(c * t[n] for n, c in tiebreak[1].items())
            )
            rows.append((-p, -q, y, Answer(y, float(m), t)))
        rows.sort(key=lambda r: r[:3])
        return [r[3] for r in rows[:k]]


def test_native_adapter_matches_direct_calls() -> None:
    rng = np.random.default_rng(1)
    s = PyMulticlass(4, 3)
    native = as_native(s)
    assert native.name == "py-multiclass" and native.size_joint_feature == 12
    assert native.capabilities["ban"] and not native.capabilities["cone"]
    # A structure written before a capability existed (no "frontier" key) is reported without it.
    assert native.capabilities["frontier"] is False
    X = rng.normal(size=(20, 3))
    Y = rng.integers(0, 4, size=20)
    w = rng.normal(size=12)
    direct = [s.oracle(w, x, y, {"loss": 2.0}, k=2) for x, y in zip(X, Y, strict=True)]
    through = native.batch_oracle(w, list(X), list(Y), {"loss": 2.0}, k=2, n_jobs=2)
    assert [[a[0] for a in per] for per in through] == [[a.label for a in per] for per in direct]
    assert list(native.batch_predict(w, list(X))) == [s.predict_one(w, x) for x in X]
    idx, val = native.joint_feature_sparse(X[0], 2)
    dense = np.zeros(12)
    np.add.at(dense, idx, val)
    assert np.array_equal(dense, s.joint_feature(X[0], 2))
    banned = native.oracle(w, X[0], int(Y[0]), {"loss": 1.0}, ban=[0, 1, 2], k=4)
    assert [a[0] for a in banned] == [3]


def test_plugin_exceptions_reach_the_caller_unchanged() -> None:
    s = PyMulticlass(3, 2)
    native = as_native(s)
    with pytest.raises(IndexError, match="class 7 out of range"):
        native.oracle(np.zeros(6), np.ones(2), 7, {"loss": 1.0})

    class Broken(PyMulticlass):
        def oracle(self, *args: Any, **kwargs: Any) -> list[Answer]:
            raise ZeroDivisionError("plugin bug")

    with pytest.raises(ZeroDivisionError, match="plugin bug"):
        as_native(Broken(3, 2)).batch_oracle(
            np.zeros(6), [np.ones(2)] * 3, [0, 1, 2], {"loss": 1.0}
        )


# --- answers of the wrong type: PluginTypeError naming the plugin and the type expected -------


class DictOracle(PyMulticlass):
    """The issue's case: an oracle returning a dict instead of a list of answers."""

    def oracle(self, w: np.ndarray, x: Any, y_true: Any, coef: Any = None, **kw: Any) -> Any:
        return {"label": 0, "margin": 1.0, "terms": {"loss": 1.0}}


class StringMargin(PyMulticlass):
    def oracle(self, w: np.ndarray, x: Any, y_true: Any, coef: Any = None, **kw: Any) -> Any:
        return [(0, "1.0", {"loss": 1.0})]


class ListTerms(PyMulticlass):
    def oracle(self, w: np.ndarray, x: Any, y_true: Any, coef: Any = None, **kw: Any) -> Any:
        return [Answer(0, 0.0, [1.0, 1.0, 2.0])]  # type: ignore[arg-type]


class StringTermValue(PyMulticlass):
    def terms(self, y: Any, y_true: Any) -> Any:
        return {"loss": "one"}


class StringJointFeature(PyMulticlass):
    def joint_feature(self, x: Any, y: Any) -> Any:
        return "not numbers"


@pytest.mark.parametrize(
    ("cls", "message"),
    [
        (
            DictOracle,
            r"plugin structure 'py-multiclass': oracle must return a list of \(label, margin: "
            r"float, terms: dict\) answers; got dict \{'label'",
        ),
        (StringMargin, r"oracle, answer 0, margin must return a float; got str '1.0'"),
        (ListTerms, r"oracle, answer 0, terms must return a dict of term name -> float; got list"),
    ],
)
def test_oracle_answers_of_the_wrong_type(cls: type, message: str) -> None:
    from bicrit.errors import PluginTypeError

    native = as_native(cls(3, 2))
    with pytest.raises(PluginTypeError, match=message) as info:
        native.batch_oracle(np.zeros(6), [np.ones(2)] * 2, [0, 1], {"loss": 1.0})
    assert isinstance(info.value, TypeError) and isinstance(info.value, ValueError)
    assert "must be real number" not in str(info.value)


def test_other_callbacks_of_the_wrong_type() -> None:
    from bicrit.errors import PluginTypeError

    message = r"'py-multiclass': terms must return a dict .*; got dict \{'loss': 'one'\}"
    with pytest.raises(PluginTypeError, match=message):
        as_native(StringTermValue(3, 2)).terms(0, 1)
    with pytest.raises(PluginTypeError, match=r"joint_feature must return a 1-D array of floats"):
        as_native(StringJointFeature(3, 2)).joint_feature_sparse(np.ones(2), 0)

    class BadSize(PyMulticlass):
        size_joint_feature = "six"  # type: ignore[assignment]

    with pytest.raises(PluginTypeError, match=r"size_joint_feature must return an int >= 0"):
        as_native(BadSize(3, 2))


def test_plugin_surrogate_of_the_wrong_type() -> None:
    import bicrit
    from bicrit.errors import PluginTypeError

    class Wordy:
        name = "wordy"

        def value(self, h: float, g: float) -> Any:
            return "a lot"

        def grad(self, h: float, g: float) -> Any:
            return {"dh": 1.0}

    oracle = bicrit.PointSetOracle([0.0, 0.5], [0.0, 1.0])
    with pytest.raises(PluginTypeError, match=r"surrogate 'wordy': (value|grad)\(h, g\) must"):
        bicrit.search("convex-hull", oracle, Wordy())


# --- check_oracle=True: a sample of a plugin oracle's answers against its own φ and terms -----


class OffByOneMargin(PyMulticlass):
    def oracle(self, *args: Any, **kwargs: Any) -> list[Answer]:
        return [Answer(a.label, a.margin + 1.0, a.terms) for a in super().oracle(*args, **kwargs)]


class NegativeLoss(PyMulticlass):
    def terms(self, y: Any, y_true: Any) -> dict[str, float]:
        t = super().terms(y, y_true)
        return {**t, "loss": -t["loss"]}


def _blobs() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    y = rng.integers(0, 3, size=30)
    return rng.normal(size=(30, 2)) + 2.0 * np.eye(3)[y][:, :2], y


def test_check_oracle_passes_a_correct_plugin() -> None:
    from bicrit.structures.check import check_oracle

    X, y = _blobs()
    assert check_oracle(PyMulticlass(3, 2), X, y) == 20 * 3  # 20 instances, 3 loss weights
    import bicrit

    est = bicrit.StructuredSVM(structure=PyMulticlass(3, 2), check_oracle=True, max_epochs=2)
    assert est.fit(X, y).n_epochs_ == 2


@pytest.mark.parametrize(
    ("cls", "message"),
    [
        (
            OffByOneMargin,
            r"plugin structure 'py-multiclass', instance \d+, oracle with loss weight 0.0: "
            r"answer \d has margin .*, but w·\(φ\(x, y\) − φ\(x, y_i\)\) = .* from joint_feature",
        ),
        (NegativeLoss, r"'py-multiclass', instance \d+, .*: answer \d has a negative loss"),
    ],
)
def test_check_oracle_names_the_first_wrong_answer(cls: type, message: str) -> None:
    import bicrit
    from bicrit.errors import PluginError

    X, y = _blobs()
    bicrit.StructuredSVM(structure=cls(3, 2), max_epochs=1).fit(X, y)  # unnoticed by default
    with pytest.raises(PluginError, match=message):
        bicrit.StructuredSVM(structure=cls(3, 2), check_oracle=True, max_epochs=1).fit(X, y)
