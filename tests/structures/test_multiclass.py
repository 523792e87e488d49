"""The multiclass oracle equals brute-force enumeration; bad input raises clear errors."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bicrit
from bicrit.errors import InvalidInputError
from bicrit.structures import Cone
from tests.structures.brute import assert_matches, brute_force


@st.composite
def problems(draw: st.DrawFn) -> dict:
    K = draw(st.integers(2, 6))
    d = draw(st.integers(1, 4))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    # integer weights make exact ties frequent
    w = rng.integers(-2, 3, size=K * d).astype(float)
    x = rng.integers(-2, 3, size=d).astype(float)
    y_true = int(rng.integers(K))
    lam = draw(st.sampled_from([0.0, 0.5, 1.0, 2.0, math.inf]))
    coef_size = draw(st.sampled_from([0.0, -0.5]))
    coef_ham = draw(st.sampled_from([0.0, 1.0]))
    k = draw(st.integers(1, K + 1))
    ban = draw(st.lists(st.integers(0, K - 1), max_size=2, unique=True))
    use_cone = draw(st.booleans())
    cone = (
        Cone(
            draw(st.sampled_from([0.0, 0.5, 1.0])),
            draw(st.sampled_from([1.0, 2.0, math.inf])),
            draw(st.booleans()),
            draw(st.booleans()),
        )
        if use_cone
        else None
    )
    return dict(
        K=K,
        d=d,
        w=w,
        x=x,
        y_true=y_true,
        lam=lam,
        coef_size=coef_size,
        coef_ham=coef_ham,
        k=k,
        ban=ban,
        cone=cone,
    )


@settings(max_examples=300, deadline=None)
@given(problems())
def test_oracle_equals_brute_force(p: dict) -> None:
    s = bicrit.structure("multiclass", n_classes=p["K"], n_features=p["d"])
    if math.isinf(p["lam"]):
        coef, margin_coef, tiebreak = {"loss": 1.0}, 0.0, (1.0, {})
    else:
        coef = {"loss": p["lam"], "size": p["coef_size"], "hamming": p["coef_ham"]}
        margin_coef, tiebreak = 1.0, (0.0, {"loss": 1.0})
    found = s.oracle(
        p["w"],
        p["x"],
        p["y_true"],
        coef,
        margin_coef=margin_coef,
        tiebreak=tiebreak,
        ban=p["ban"],
        k=p["k"],
        cone=p["cone"],
    )
    expected = brute_force(
        s,
        p["w"],
        p["x"],
        p["y_true"],
        range(p["K"]),
        coef,
        margin_coef=margin_coef,
        tiebreak=tiebreak,
        ban=p["ban"],
        cone=p["cone"],
        same=lambda a, b: a == b,
    )
    assert_matches(found, expected, p["k"], coef, margin_coef, tiebreak)
    assert all(a.label not in p["ban"] for a in found)


def test_predict_and_batch_agree() -> None:
    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 5))
    Y = rng.integers(0, 4, size=50)
    s = bicrit.structure("multiclass").initialize(X, Y)
    w = rng.normal(size=s.size_joint_feature)
    batch = s.batch_predict(w, X, n_jobs=2)
    one = [s.predict_one(w, x) for x in X]
    assert list(batch) == one
    assert one == list(np.argmax(X @ w.reshape(4, 5).T, axis=1))
    answers = s.batch_oracle(w, X, Y, {"loss": 1.0})
    assert [a[0].label for a in answers] == [
        s.lambda_oracle(w, x, y, 1.0) for x, y in zip(X, Y, strict=True)
    ]


def test_joint_feature_and_loss() -> None:
    s = bicrit.structure("multiclass", n_classes=3, n_features=2)
    assert s.joint_feature([1.0, 2.0], 2).tolist() == [0, 0, 0, 0, 1, 2]
    assert s.loss(1, 1) == 0.0 and s.loss(2, 1) == 1.0
    assert s.terms(2, 1) == {"loss": 1.0, "size": 1.0, "hamming": 2.0}


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda s, w: s.oracle(w, [1.0, 2.0], 5, {"loss": 1.0}), "outside the classes"),
        (lambda s, w: s.oracle(w, [1.0, 2.0, 3.0], 1, {"loss": 1.0}), "features"),
        (lambda s, w: s.oracle(w, [1.0, np.nan], 1, {"loss": 1.0}), "NaN"),
        (lambda s, w: s.oracle(w[:-1], [1.0, 2.0], 1, {"loss": 1.0}), "shape"),
        (lambda s, w: s.oracle(w, [1.0, 2.0], 1, {"loss": math.nan}), "not finite"),
        (lambda s, w: s.oracle(w, [1.0, 2.0], 1, {"bogus": 1.0}), "unknown term"),
        (lambda s, w: s.oracle(w, [1.0, 2.0], 1, {"loss": 1.0}, k=0), "k must be"),
        (lambda s, w: s.predict_one(np.full(6, np.inf), [1.0, 2.0]), "non-finite"),
        (lambda s, w: s.batch_oracle(w, np.ones((3, 2)), [0, 1], {"loss": 1.0}), "labels"),
    ],
)
def test_bad_input(call, match: str) -> None:
    s = bicrit.structure("multiclass", n_classes=3, n_features=2)
    with pytest.raises(InvalidInputError, match=match):
        call(s, np.ones(6))


def test_uninitialised_structure_is_a_clear_error() -> None:
    with pytest.raises(InvalidInputError, match="initialize"):
        bicrit.structure("multiclass").predict_one(np.ones(4), [1.0, 2.0])
