"""The multilabel structure in relaxed mode: QPBO's and the clarabel LP's values equal
``scipy.optimize.linprog``'s (HiGHS) on the textbook local-polytope LP, lexicographic (λ = 0, ∞)
and constrained (cone) queries included; relaxed values bound the exact ones and equal them when the
answer is integral; answers are valid relaxed labels."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bicrit
from bicrit.structures import Cone
from tests.structures.multilabel_ref import LocalPolytope, brute_force, objective

QUERIES = {
    # name: (coef, margin_coef, tiebreak)
    "lambda=0": ({}, 1.0, (0.0, {"loss": 1.0})),
    "lambda=inf": ({"loss": 1.0}, 0.0, (1.0, {})),
    "lambda=1": ({"loss": 1.0}, 1.0, None),
    "lambda=0.5": ({"loss": 0.5}, 1.0, None),
    "micro-f1": ({"hamming": 1.0, "size": -0.5}, 1.0, None),
    "size only": ({"size": -1.0}, 0.0, (1.0, {"loss": 1.0})),
    # a tie-break that is not separable under a non-separable primary: the LP path even for QPBO
    "pairwise tie-break": ({"loss": 1.0}, 1.0, (-1.0, {"size": 1.0})),
}


@st.composite
def instances(draw: st.DrawFn) -> dict:
    K = draw(st.integers(1, 8))
    d = draw(st.integers(1, 3))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    kind = draw(st.sampled_from(["full", "full", "chain", "explicit"]))
    if kind == "explicit":
        edges = [(i, j) for i in range(K) for j in range(i + 1, K) if rng.random() < 0.5]
    else:
        edges = kind
    integer = draw(st.booleans())
    structures = {
        name: bicrit.structure(
            "multilabel",
            edges=edges,
            inference=inference,
            relaxed_solver=solver,
            n_labels=K,
            n_features=d,
        )
        for name, inference, solver in [
            ("qpbo", "relaxed", "qpbo"),
            ("lp", "relaxed", "lp"),
            ("exact", "exact", "qpbo"),
        ]
    }
    size = structures["exact"].size_joint_feature
    if integer:  # ties
        w = rng.integers(-2, 3, size=size).astype(float)
        x = rng.integers(-2, 3, size=d).astype(float)
    else:
        w = rng.normal(size=size) * draw(st.sampled_from([0.1, 1.0, 10.0]))
        x = rng.normal(size=d)
    y_true = rng.integers(0, 2, size=K)
    query = draw(st.sampled_from(sorted(QUERIES)))
    return dict(structures=structures, w=w, x=x, y_true=y_true, query=query)


def value(a, margin_coef: float, coef: dict) -> float:
    return objective(a.margin, a.terms, margin_coef, coef)


def check_relaxed_label(s, a, K: int) -> None:
    """A valid answer: integral 0/1 array, or consistent marginals; terms are its own."""
    if isinstance(a.label, tuple):
        nodes, edges = a.label
        assert nodes.shape == (K,) and edges.shape == (len(s.edges_), 4)
        assert np.all((nodes >= 0) & (nodes <= 1)) and np.all((edges >= 0) & (edges <= 1))
        for e, (i, j) in enumerate(s.edges_):
            assert edges[e, 2] + edges[e, 3] == pytest.approx(nodes[i], abs=1e-9)
            assert edges[e, 1] + edges[e, 3] == pytest.approx(nodes[j], abs=1e-9)
    else:
        assert a.label.shape == (K,) and set(np.unique(a.label)) <= {0, 1}


@settings(max_examples=300, deadline=None)
@given(instances())
def test_relaxed_values_equal_linprog(p: dict) -> None:
    coef, margin_coef, tiebreak = QUERIES[p["query"]]
    w, x, y_true = p["w"], p["x"], p["y_true"]
    K = len(y_true)
    exact_s = p["structures"]["exact"]
    ref = LocalPolytope(w, x, y_true, exact_s.edges_)
    want = ref.maximize(margin_coef, coef, tiebreak=tiebreak, lex_tol=1e-12)
    assert want is not None
    # the tie-break optimum is ill-conditioned in the primary's tolerance (a primary slack of ε
    # buys ε / slope of tie-break): bicrit's LP keeps the primary within LEX_TOLERANCE = 1e-7
    # (relative), QPBO's max-weight closure within the max-flow tolerance; so the tie-break value
    # must lie between the exact lexicographic optimum and the one with a 2e-7 primary slack
    loose = ref.maximize(margin_coef, coef, tiebreak=tiebreak, lex_tol=2e-7)
    assert loose is not None
    scale = 1.0 + abs(want[0]) + np.abs(w).sum() * (1 + np.abs(x).sum())
    exact = exact_s.oracle(w, x, y_true, coef, margin_coef=margin_coef, tiebreak=tiebreak)[0]
    v_exact = value(exact, margin_coef, coef)
    for name in ("qpbo", "lp"):
        s = p["structures"][name]
        a = s.oracle(w, x, y_true, coef, margin_coef=margin_coef, tiebreak=tiebreak)[0]
        check_relaxed_label(s, a, K)
        v = value(a, margin_coef, coef)
        assert v == pytest.approx(want[0], abs=1e-6 * scale), (name, a)
        if tiebreak is not None:
            v2 = value(a, *tiebreak)
            assert want[1] - 1e-5 * scale <= v2 <= loose[1] + 1e-5 * scale, (name, a, want, loose)
        # the relaxation bounds the exact value, with equality on integral answers (up to the
        # primary slack of lexicographic LP answers)
        slack = 1e-9 * scale + (2e-7 * (1 + abs(want[0])) if tiebreak is not None else 0.0)
        assert v >= v_exact - slack
        if not isinstance(a.label, tuple):
            assert v == pytest.approx(v_exact, abs=slack)
        # reported margin/terms are the label's own
        gold_score = w @ s.joint_feature(x, y_true)
        assert a.margin == pytest.approx(
            w @ s.joint_feature(x, a.label) - gold_score, abs=1e-9 * scale
        )
        assert a.terms == pytest.approx(s.terms(a.label, y_true))


@st.composite
def cone_instances(draw: st.DrawFn) -> dict:
    p = draw(instances())
    lo = draw(st.sampled_from([0.0, 0.25, 0.5, 1.0, 2.0]))
    hi = draw(st.sampled_from([0.5, 1.0, 3.0, math.inf]))
    if lo > hi:
        lo, hi = hi, lo
    p["cone"] = Cone(lo, hi, draw(st.booleans()), draw(st.booleans()))
    p["query"] = draw(st.sampled_from(["lambda=1", "lambda=0.5", "lambda=0", "lambda=inf"]))
    return p


@settings(max_examples=300, deadline=None)
@given(cone_instances())
def test_constrained_lp_equals_linprog_with_two_rows(p: dict) -> None:
    coef, margin_coef, tiebreak = QUERIES[p["query"]]
    w, x, y_true, cone = p["w"], p["x"], p["y_true"], p["cone"]
    exact_s = p["structures"]["exact"]
    ref = LocalPolytope(w, x, y_true, exact_s.edges_)
    want = ref.maximize(margin_coef, coef, tiebreak=tiebreak, cone=cone, lex_tol=1e-12)
    loose = ref.maximize(margin_coef, coef, tiebreak=tiebreak, cone=cone, lex_tol=2e-7)
    integral = brute_force(
        w, x, y_true, exact_s.edges_, coef, margin_coef=margin_coef, tiebreak=tiebreak, cone=cone
    )
    for name in ("qpbo", "lp"):  # cone queries go to the LP whatever the solver
        s = p["structures"][name]
        found = s.oracle(w, x, y_true, coef, margin_coef=margin_coef, tiebreak=tiebreak, cone=cone)
        if want is None or not found:
            if (want is None) != (not found):
                # the solvers may disagree only on a sliver thinner than their tolerances
                assert abs(ref.cone_slack(cone)) < 1e-6, (name, found, want)
            if not found:
                # no integral label lies inside the cone by more than that either
                for _, _, _, m, t in integral:
                    inside = t["loss"] - cone.lo * (1 + m)
                    if math.isfinite(cone.hi):
                        inside = min(inside, cone.hi * (1 + m) - t["loss"])
                    assert inside < 1e-6, (name, m, t)
            for a in found:  # an answer on a sliver: in the cone up to the tolerance
                big_h, g = 1.0 + a.margin, a.terms["loss"]
                assert cone.lo * big_h <= g + 1e-6
                assert math.isinf(cone.hi) or g <= cone.hi * big_h + 1e-6
            continue
        assert len(found) == 1
        a = found[0]
        check_relaxed_label(s, a, len(y_true))
        scale = 1.0 + abs(want[0]) + np.abs(w).sum() * (1 + np.abs(x).sum())
        v = value(a, margin_coef, coef)
        assert v == pytest.approx(want[0], abs=1e-5 * scale), (name, a, want)
        if tiebreak is not None:
            assert loose is not None
            v2 = value(a, *tiebreak)
            assert want[1] - 1e-4 * scale <= v2 <= loose[1] + 1e-4 * scale, (name, a, want, loose)
        # in the cone (closed ends up to the solver's feasibility tolerance)
        tol = 1e-6 * scale
        big_h, g = 1.0 + a.margin, a.terms["loss"]
        assert cone.lo * big_h <= g + tol
        assert math.isinf(cone.hi) or g <= cone.hi * big_h + tol
        if integral:
            assert v >= integral[0][0] - 1e-6 * scale


def test_frustrated_triangle_gives_half_integral_answer() -> None:
    """Three labels that each want to be on but repel each other: the LP optimum is all ½
    with edge marginals on the anti-diagonal (edge weight sign < 0)."""
    s = bicrit.structure("multilabel", edges="full", inference="relaxed", n_labels=3, n_features=1)
    # unary weight 1 per label; edge state 11 costs 2
    w = np.array([1.0, 1.0, 1.0] + [0.0, 0.0, 0.0, -2.0] * 3)
    a = s.oracle(w, [1.0], np.zeros(3, dtype=int), {}, margin_coef=1.0)[0]
    nodes, edges = a.label
    assert np.array_equal(nodes, [0.5, 0.5, 0.5])
    assert np.array_equal(edges, np.tile([0.0, 0.5, 0.5, 0.0], (3, 1)))
    assert a.margin == pytest.approx(1.5)
    # predict rounds to an integral label of the best integral score (1.0)
    y = s.predict_one(w, [1.0])
    assert y.sum() == 1
    exact = bicrit.structure("multilabel", inference="exact", n_labels=3, n_features=1)
    assert exact.oracle(w, [1.0], np.zeros(3, dtype=int), {})[0].margin == pytest.approx(1.0)
