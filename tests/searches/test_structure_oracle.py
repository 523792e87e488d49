"""Searches run natively over a structure's own oracle (``structure.instance_oracle``) and agree
with the same search over the explicit point set of all labels, enumerated independently."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import bicrit
from bicrit.errors import IncompatibleError
from tests.structures.test_python_structure import PyMulticlass


def _point_set(s, w, x, y_true, labels, surrogate):
    """All labels as points (h, g) of the surrogate, from joint_feature and terms."""
    gold_score = float(w @ s.joint_feature(x, y_true))
    gold_terms = s.terms(y_true, y_true)
    h, g = [], []
    for y in labels:
        m = float(w @ s.joint_feature(x, y)) - gold_score
        t = s.terms(y, y_true)
        if surrogate == "microf1":
            h.append(t["hamming"] + m)
            g.append(-(t["size"] + gold_terms["size"]))
        else:
            h.append(m)
            g.append(t["loss"])
    gold = next(i for i, y in enumerate(labels) if np.array_equal(y, y_true))
    return bicrit.PointSetOracle(h, g, gold=gold)


CASES = [
    ("slack", "convex-hull-ban"),
    ("slack", "convex-hull-kbest"),
    ("slack", "angular"),
    ("probloss", "convex-hull-kbest"),
    ("beta", "convex-hull-ban"),
    ("microf1", "convex-hull-ban"),
    ("margin", "convex-hull"),
]


@pytest.mark.parametrize(("surrogate", "search"), CASES)
def test_multiclass_native_search_equals_point_set(surrogate: str, search: str) -> None:
    rng = np.random.default_rng(3)
    s = bicrit.structure("multiclass", n_classes=5, n_features=4)
    psi = (
        bicrit.surrogate(surrogate, beta=0.5)
        if surrogate == "beta"
        else bicrit.surrogate(surrogate)
    )
    for _ in range(20):
        w, x, y = rng.normal(size=20), rng.normal(size=4), int(rng.integers(5))
        native = bicrit.search(search, s.instance_oracle(w, x, y), psi)
        ref = bicrit.search(search, _point_set(s, w, x, y, list(range(5)), surrogate), psi)
        assert native.value == pytest.approx(ref.value, rel=1e-9, abs=1e-12)
        assert native.calls["total"] >= 1


def test_chain_native_search_is_exact_integral_optimum() -> None:
    rng = np.random.default_rng(4)
    S, T, d = 3, 4, 3
    s = bicrit.structure("chain", n_states=S, n_features=d)
    X = rng.normal(size=(T, d))
    y = rng.integers(0, S, size=T)
    s.initialize([X], [y])
    labels = [np.array(p) for p in itertools.product(range(S), repeat=T)]
    psi = bicrit.surrogate("slack")
    for _ in range(10):
        w = rng.normal(size=s.size_joint_feature)
        native = bicrit.search("convex-hull-kbest", s.instance_oracle(w, X, y), psi)
        ps = _point_set(s, w, X, y, labels, "slack")
        h, g = ps.points()
        best = max(0.0, max((hh + 1) * gg for hh, gg in zip(h, g, strict=True)))
        assert native.value == pytest.approx(best, rel=1e-9, abs=1e-12)
        assert len(native.labels) == 1 and len(native.labels[0]) == T


def test_chain_frontier_search_is_exact_in_one_call() -> None:
    """``frontier`` through the bindings on a chain instance: the enumerated maximum of ψ for the
    surrogates with h = m, g = L, one frontier call; Micro-F1's factors are refused."""
    rng = np.random.default_rng(6)
    S, T, d = 3, 5, 3
    s = bicrit.structure("chain", n_states=S, n_features=d)
    X = rng.normal(size=(T, d))
    y = rng.integers(0, S, size=T)
    s.initialize([X], [y])
    labels = [np.array(p) for p in itertools.product(range(S), repeat=T)]
    for name in ["probloss", "slack", "log", "margin"]:
        psi = bicrit.surrogate(name)
        for _ in range(5):
            w = 0.3 * rng.normal(size=s.size_joint_feature)
            r = bicrit.search("frontier", s.instance_oracle(w, X, y), psi)
            h, g = _point_set(s, w, X, y, labels, name).points()
            best = max(psi.value(hh, gg) for hh, gg in zip(h, g, strict=True))
            assert r.value == pytest.approx(best, rel=1e-9, abs=1e-12), name
            assert r.calls["frontier"] == r.calls["total"] == 1 and r.upper_bound == r.value
    with pytest.raises(IncompatibleError, match="frontier"):
        bicrit.search("frontier", s.instance_oracle(w, X, y), bicrit.surrogate("microf1"))


def test_warm_start_on_native_oracle_and_python_structure() -> None:
    rng = np.random.default_rng(5)
    s = PyMulticlass(4, 3)
    psi = bicrit.surrogate("slack")
    w, x, y = rng.normal(size=12), rng.normal(size=3), 2
    first = bicrit.search("convex-hull", s.instance_oracle(w, x, y), psi)
    again = bicrit.search("convex-hull", s.instance_oracle(w, x, y), psi, warm=first.warm)
    assert again.value == pytest.approx(first.value)
    assert again.calls["total"] <= first.calls["total"]


def test_incompatible_combination_is_refused() -> None:
    s = bicrit.structure("chain", n_states=2, n_features=2)
    s.initialize([np.ones((2, 2))], [np.array([0, 1])])
    oracle = s.instance_oracle(np.zeros(s.size_joint_feature), np.ones((2, 2)), np.array([0, 1]))
    with pytest.raises(IncompatibleError, match="cone"):
        bicrit.search("angular", oracle, bicrit.surrogate("slack"))
    with pytest.raises(IncompatibleError, match="product form"):
        bicrit.search("bisecting", oracle, bicrit.surrogate("margin"))
