"""Searches against brute force on random point sets (hypothesis), the thesis's negative results,
the Python oracle/surrogate protocols, warm starts and input errors.

Tolerances: values are compared with an absolute tolerance of 1e-9 times the problem's scale
(the largest |ψ| over the points and the optimum). At coordinates 1e6 the slack products reach
1e12 while f64 rounding of h + λg is ~1e-16 of that, so 1e-9 leaves a wide margin for rounding
yet would catch any real miss; it also covers angular search's documented floor 1e-12·ĤĜ.
"""

from __future__ import annotations

import math
import os

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from searches_brute import chain_vertices, hull_opt, integral_opt

import bicrit
from bicrit.errors import (
    IncompatibleError,
    InvalidInputError,
    InvalidParameterError,
    UnknownNameError,
    UnsupportedQueryError,
)

SLACK = bicrit.surrogate("slack")
HULL_SURROGATES = [
    ("margin", {}),
    ("slack", {}),
    ("generalized", {"alpha": 1.5, "beta": 0.75}),
    ("beta", {"beta": 0.5}),
    ("log", {}),
    ("probloss", {}),
    ("probloss-convex", {}),
]


@st.composite
def point_sets(draw, nonneg_g: bool = True):
    """Random label points (h, g): integer grids (ties, duplicates), collinear sets, all h ≤ 0,
    continuous; scaled by 1e-6 … 1e6; with the gold label (0, 0) most of the time."""
    n = draw(st.integers(1, 12))
    mode = draw(st.sampled_from(["grid", "collinear", "nonpositive", "continuous"]))
    scale = 10.0 ** draw(st.integers(-6, 6))
    if mode == "grid":
        h = draw(st.lists(st.integers(-3, 3), min_size=n, max_size=n))
        g = draw(st.lists(st.integers(0, 5), min_size=n, max_size=n))
    elif mode == "collinear":
        g = draw(st.lists(st.integers(0, 4), min_size=n, max_size=n))
        h = [4 - 2 * v for v in g]
    else:
        lo = -3.0 if mode == "nonpositive" else -2.0
        hi = 0.0 if mode == "nonpositive" else 2.0
        h = draw(st.lists(st.floats(lo, hi), min_size=n, max_size=n))
        g = draw(st.lists(st.floats(0.0, 5.0), min_size=n, max_size=n))
    h = [float(v) * scale for v in h]
    g = [float(v) * scale for v in g]
    gold = draw(st.booleans()) or draw(st.booleans())
    if gold:
        h.append(0.0)
        g.append(0.0)
    return h, g, gold


def oracle(h, g, gold, **kw):
    o = bicrit.PointSetOracle(h, g, gold=len(h) - 1 if gold else None, **kw)
    return o if gold else o.without_gold()


def tol(psi, h, g, *opts):
    scale = max(
        [float(np.max(np.abs(psi.value(np.array(h), np.array(g))))), *map(abs, opts), 1e-300]
    )
    return 1e-9 * scale


PROPERTY = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
# The "thousands of cases": 2000 examples per slow test at BICRIT_REPRO_SCALE=1 (default 0.1).
SLOW_EXAMPLES = max(20, int(2000 * float(os.environ.get("BICRIT_REPRO_SCALE", "0.1"))))


@PROPERTY
@given(point_sets(), st.sampled_from(HULL_SURROGATES))
def test_convex_hull_is_optimal_over_the_hull(data, which):
    h, g, gold = data
    psi = bicrit.surrogate(which[0], **which[1])
    hopt = hull_opt(psi, h, g)
    t = tol(psi, h, g, hopt)
    r = bicrit.search("convex-hull", oracle(h, g, gold), psi)
    assert r.value <= hopt + t
    # ψ is quasi-concave and increasing on its super-level set of ψ(gold) = 0: without the gold
    # label the search may start where ψ decreases in g, and only validity is guaranteed.
    assume(gold)
    assert abs(r.value - hopt) <= t
    assert r.upper_bound is not None and r.upper_bound >= hopt - t
    assert r.calls["total"] <= chain_vertices(h, g) + 1
    assert math.isclose(sum(r.weights), 1.0)
    assert len(r.labels) in (1, 2)


@PROPERTY
@given(point_sets(), st.sampled_from(HULL_SURROGATES), st.sampled_from(["ban", "kbest"]))
def test_integral_recovery_is_exact(data, which, how):
    h, g, gold = data
    psi = bicrit.surrogate(which[0], **which[1])
    iopt = integral_opt(psi, h, g)
    assume(gold)
    t = tol(psi, h, g, iopt)
    r = bicrit.search("convex-hull", oracle(h, g, gold), psi, integral=how)
    assert len(r.labels) == 1
    assert abs(r.value - iopt) <= t
    assert r.upper_bound >= iopt - t
    assert psi.value(h[r.label], g[r.label]) == pytest.approx(r.value, abs=t)


@PROPERTY
@given(point_sets())
def test_angular_is_exact_within_2m_plus_3_calls(data):
    h, g, gold = data
    iopt = integral_opt(SLACK, h, g)
    target = iopt if gold else max(iopt, 0.0)
    t = tol(SLACK, h, g, iopt, (max(h) + 1) * max(g))
    r = bicrit.search("angular", oracle(h, g, gold), SLACK)
    assert r.calls["total"] <= 2 * len(h) + 3
    assert r.value <= iopt + t
    if gold or target > 0:
        assert r.value >= target - t
    assert r.upper_bound >= (max(iopt, 0.0) if gold else iopt) - t


@PROPERTY
@given(point_sets(), st.sampled_from(["bisecting", "binary", "sarawagi"]))
def test_approximate_searches_stay_below_the_optimum_and_bounds_hold(data, name):
    h, g, gold = data
    iopt, hopt = integral_opt(SLACK, h, g), hull_opt(SLACK, h, g)
    t = tol(SLACK, h, g, hopt, (max(h) + 1) * max(g))
    r = bicrit.search(name, oracle(h, g, gold), SLACK, xi=0.5 * max(iopt, 0.0))
    assert r.value <= iopt + t
    if r.upper_bound is not None:
        assert r.upper_bound >= (max(hopt, 0.0) if gold else hopt) - t


@st.composite
def random_surrogates(draw):
    """A registered surrogate with the plain factor map (h = m, g = L), parameters drawn from
    their quasi-concave increasing domain."""
    names = ["margin", "slack", "beta", "generalized", "log", "probloss", "probloss-convex"]
    name = draw(st.sampled_from(names))
    if name == "beta":
        return bicrit.surrogate("beta", beta=draw(st.floats(0.0, 1.0)))
    if name == "generalized":
        beta = draw(st.floats(0.0, 2.0))
        return bicrit.surrogate("generalized", alpha=draw(st.floats(beta, beta + 1.0)), beta=beta)
    return bicrit.surrogate(name)


@PROPERTY
@given(point_sets(), random_surrogates())
def test_frontier_equals_brute_force(data, psi):
    """``frontier``: one call, the exact integral optimum (certified), ties to the larger h then
    the smaller g, the gold label on any tie."""
    h, g, gold = data
    iopt = integral_opt(psi, h, g)
    o = oracle(h, g, gold)
    r = bicrit.search("frontier", o, psi)
    assert r.value == pytest.approx(iopt, abs=1e-12 * max(abs(iopt), 1e-300))
    assert r.upper_bound == r.value and len(r.labels) == 1
    assert r.calls["frontier"] == r.calls["total"] == 1 and o.calls == 1
    a, (ha, ga) = r.label, r.points[0]
    assert (h[a], g[a]) == (ha, ga)
    values = psi.value(np.array(h), np.array(g))
    if r.is_gold:
        assert a == len(h) - 1
    else:
        for b, c, v in zip(h, g, values, strict=True):
            if v == r.value:
                assert b < ha or (b == ha and c >= ga)
    # the frontier itself: the largest h for every distinct g
    front = {gg: hh for _, hh, gg in o.frontier()}
    assert front == {gg: max(x for x, y in zip(h, g, strict=True) if y == gg) for gg in set(g)}


def test_frontier_refusals_and_the_python_protocol():
    h, g = [0.0, -0.5, 0.2, 0.1], [0.0, 3.0, 1.0, 1.0]
    with pytest.raises(IncompatibleError, match="frontier"):
        bicrit.search("frontier", bicrit.PointSetOracle(h, g, frontier=False), SLACK)
    with pytest.raises(InvalidParameterError, match="frontier"):
        bicrit.search("frontier", bicrit.PointSetOracle(h, g), SLACK, max_calls=3)
    caps = {"ban": False, "kbest": False, "cone": False, "frontier": True}
    po = ListOracle(h, g, ["gold", "a", "b", "c"], gold=("gold", 0.0, 0.0), caps=caps)
    po.frontier = lambda: [("gold", 0.0, 0.0), ("a", -0.5, 3.0), ("b", 0.2, 1.0)]
    r = bicrit.search("frontier", po, SLACK)
    assert r.labels == ["a"] and r.value == pytest.approx(1.5) and po.calls == 0
    with pytest.raises(IncompatibleError, match="frontier"):
        bicrit.search("frontier", ListOracle(h, g, ["gold", "a", "b", "c"]), SLACK)
    assert bicrit.registry.get("search", "frontier").capabilities["oracle"] == ["frontier"]


@pytest.mark.slow
@settings(max_examples=SLOW_EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
@given(point_sets(), st.sampled_from(HULL_SURROGATES))
def test_thousands_of_hull_and_recovery_cases(data, which):
    test_convex_hull_is_optimal_over_the_hull.hypothesis.inner_test(data, which)
    test_integral_recovery_is_exact.hypothesis.inner_test(data, which, "ban")


@pytest.mark.slow
@settings(max_examples=SLOW_EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
@given(point_sets())
def test_thousands_of_angular_cases(data):
    test_angular_is_exact_within_2m_plus_3_calls.hypothesis.inner_test(data)


# ---- the thesis's negative results -------------------------------------------------------


def theorem_set():
    """Theorem loracle_l1's labels A = [ε, Ĝ], B = [Ĥ, ε], C = [Ĥ/2, Ĝ/2] in (H, G) = (1 + m, L)
    coordinates (Ĥ = Ĝ = 10, ε = 0.01), plus the gold label, as points (m, L)."""
    e, big = 0.01, 10.0
    h = [0.0, e - 1, big - 1, big / 2 - 1]
    g = [0.0, big, e, big / 2]
    return h, g


def test_theorem_loracle_l1_lambda_only_searches_return_a_poor_integral_label():
    h, g = theorem_set()
    best = 25.0  # Φ(C) = ĤĜ/4
    for name in ["bisecting", "binary", "sarawagi", "convex-hull"]:
        r = bicrit.search(name, bicrit.PointSetOracle(h, g), SLACK, xi=1.0)
        integral = max(SLACK.value(a, b) for a, b in r.points)
        assert integral < 0.2 * best, name
        assert 3 not in r.labels, name
    hull = bicrit.search("convex-hull", bicrit.PointSetOracle(h, g), SLACK)
    assert hull.fractional and hull.value >= best
    for name in ["convex-hull-ban", "convex-hull-kbest", "angular"]:
        r = bicrit.search(name, bicrit.PointSetOracle(h, g), SLACK)
        assert r.labels == [3] and r.value == pytest.approx(best), name


def test_abc_lemma():
    eps = 0.01
    # A = [2, 4], B = [4, 2], C = [3 + ε, 3] for ψ = h·g, i.e. slack with h = H − 1. At
    # λ = 1 ∓ ε, C ties with B or A; any λ outside [1 − ε, 1 + ε] returns A or B.
    o = bicrit.PointSetOracle([1.0, 3.0, 2.0 + eps], [4.0, 2.0, 3.0])
    for lam in np.concatenate(
        [np.geomspace(0.01, 1 - 1.5 * eps, 50), np.geomspace(1 + 1.5 * eps, 100, 50)]
    ):
        assert o.query(float(lam))[0][0] in (0, 1)
    for name in ["convex-hull", "convex-hull-ban", "angular"]:
        r = bicrit.search(
            name, bicrit.PointSetOracle([1.0, 3.0, 2.0 + eps], [4.0, 2.0, 3.0]), SLACK
        )
        assert r.labels == [2], name


# ---- Python oracles and surrogates ----------------------------------------------------------


class ListOracle:
    """The oracle protocol in plain Python over (label, h, g) triples."""

    def __init__(self, h, g, names, gold=None, caps=None):
        self.items = list(zip(names, h, g, strict=True))
        self.gold_item = gold
        self.capabilities = caps or {"ban": True, "kbest": True, "cone": True}
        self.calls = 0

    def query(self, lam, ban=(), k=1, cone=None):
        self.calls += 1
        cand = [
            it
            for it in self.items
            if it[0] not in ban and (cone is None or cone.contains(it[1], it[2]))
        ]
        if lam == 0:
            key = lambda it: (it[1], it[2])  # noqa: E731
        elif math.isinf(lam):
            key = lambda it: (it[2], it[1])  # noqa: E731
        else:
            key = lambda it: (it[1] + lam * it[2], it[2])  # noqa: E731
        return sorted(cand, key=key, reverse=True)[:k]

    def gold(self):
        return self.gold_item

    def evaluate(self, labels):
        table = {it[0]: (it[1], it[2]) for it in self.items}
        return [table[label] for label in labels]


class PySlack:
    """Slack rescaling written in Python."""

    name = "py-slack"
    product_shift = 1.0

    def value(self, h, g):
        return (h + 1.0) * g

    def grad(self, h, g):
        return g, h + 1.0


@pytest.mark.parametrize(
    "name",
    ["convex-hull", "convex-hull-ban", "convex-hull-kbest", "angular", "bisecting", "binary"],
)
def test_python_oracle_and_surrogate_match_the_native_path(name):
    rng = np.random.default_rng(3)
    h = list(rng.uniform(-1.5, 1.0, 15))
    g = list(rng.uniform(0.0, 4.0, 15))
    names = [f"y{i}" for i in range(15)]
    native = bicrit.search(name, bicrit.PointSetOracle([*h, 0.0], [*g, 0.0]), SLACK)
    for psi in (SLACK, PySlack()):
        py = bicrit.search(name, ListOracle(h, g, names, gold=("gold", 0.0, 0.0)), psi)
        assert py.value == pytest.approx(native.value, rel=1e-9)
        assert [n if n == "gold" else int(n[1:]) for n in py.labels] == [
            "gold" if i == 15 else i for i in native.labels
        ]


def test_exceptions_from_python_code_propagate_unchanged():
    class Boom(RuntimeError):
        pass

    class BadOracle(ListOracle):
        def query(self, lam, ban=(), k=1, cone=None):
            raise Boom("oracle failed")

    class BadPsi(PySlack):
        def grad(self, h, g):
            raise Boom("grad failed")

    with pytest.raises(Boom, match="oracle failed"):
        bicrit.search("convex-hull", BadOracle([1.0], [1.0], ["a"]), SLACK)
    with pytest.raises(Boom, match="grad failed"):
        bicrit.search("convex-hull", bicrit.PointSetOracle([0.0, 1.0], [0.0, 1.0]), BadPsi())


def test_protocol_violations_are_clear_errors():
    class NaNOracle(ListOracle):
        def query(self, lam, ban=(), k=1, cone=None):
            return [("a", float("nan"), 1.0)]

    class Shapeless(ListOracle):
        def query(self, lam, ban=(), k=1, cone=None):
            return [("a", 1.0)]

    with pytest.raises(InvalidInputError, match="non-finite"):
        bicrit.search("convex-hull", NaNOracle([1.0], [1.0], ["a"]), SLACK)
    with pytest.raises(InvalidInputError, match="triple"):
        bicrit.search("convex-hull", Shapeless([1.0], [1.0], ["a"]), SLACK)
    with pytest.raises(InvalidInputError, match="query"):
        bicrit.search("convex-hull", object(), SLACK)
    with pytest.raises(InvalidInputError, match="value"):
        bicrit.search("convex-hull", bicrit.PointSetOracle([1.0], [1.0]), object())


@pytest.mark.parametrize(
    ("h", "g", "match"),
    [
        ([], [], "empty"),
        ([float("nan")], [1.0], "non-finite"),
        ([1.0], [float("inf")], "non-finite"),
        ([1.0, 2.0], [1.0], "differ|has 2 values"),
    ],
)
def test_bad_point_sets_are_refused(h, g, match):
    with pytest.raises(InvalidInputError, match=match):
        bicrit.PointSetOracle(h, g)


def test_incompatible_combinations_are_refused_before_any_call():
    o = bicrit.PointSetOracle([0.0, 1.0], [0.0, 1.0])
    beta = bicrit.surrogate("beta", beta=0.5)
    for name in ["angular", "bisecting", "binary", "sarawagi"]:
        with pytest.raises(IncompatibleError, match=rf"{name}.*'beta' \(beta=0.5\)"):
            bicrit.search(name, o, beta, xi=1.0)
    assert o.calls == 0
    with pytest.raises(IncompatibleError, match="constrained"):
        bicrit.search("angular", bicrit.PointSetOracle([0.0], [0.0], cone=False), SLACK)
    with pytest.raises(IncompatibleError, match="ban-list"):
        bicrit.search(
            "convex-hull", bicrit.PointSetOracle([0.0], [0.0], ban=False), SLACK, integral="ban"
        )
    with pytest.raises(IncompatibleError, match="ξ_i"):
        bicrit.search("sarawagi", o, SLACK)
    # β = 1 is slack rescaling exactly: the product-form searches accept it.
    assert bicrit.search("angular", o, bicrit.surrogate("beta", beta=1.0)).value == pytest.approx(
        2.0
    )


def test_options_and_names_are_checked():
    o = bicrit.PointSetOracle([0.0, 1.0], [0.0, 1.0])
    with pytest.raises(InvalidParameterError, match="eps"):
        bicrit.search("angular", o, SLACK, eps=-1.0)
    with pytest.raises(InvalidParameterError, match="no numeric option 'frobnicate'"):
        bicrit.search("convex-hull", o, SLACK, frobnicate=1.0)
    with pytest.raises(InvalidParameterError, match="integral"):
        bicrit.search("convex-hull", o, SLACK, integral="maybe")
    with pytest.raises(UnknownNameError, match="convex-hull"):
        bicrit.search("nope", o, SLACK)
    with pytest.raises(UnsupportedQueryError):
        bicrit.PointSetOracle([0.0, 1.0], [0.0, 1.0], ban=False).query(1.0, ban=[1])


def test_registry_names_and_capabilities():
    names = bicrit.registry.names("search")
    for n in [
        "sarawagi",
        "binary",
        "bisecting",
        "angular",
        "convex-hull",
        "convex-hull-ban",
        "convex-hull-kbest",
        "frontier",
    ]:
        assert n in names
    caps = bicrit.registry.get("search", "angular").capabilities
    assert "cone" in caps["oracle"] and caps["guarantee"].startswith("exact")
    assert bicrit.registry.get("search", "sarawagi").capabilities["needs_xi"]


def test_warm_start_on_a_slightly_perturbed_set_costs_about_one_call():
    rng = np.random.default_rng(0)
    h = rng.uniform(-1.5, 0.5, 200)
    g = rng.integers(0, 10, 200).astype(float)
    h[0] = g[0] = 0.0
    first = bicrit.search("convex-hull", bicrit.PointSetOracle(h, g), SLACK)
    h2 = h + rng.normal(0, 1e-4, 200)
    h2[0] = 0.0
    again = bicrit.search("convex-hull", bicrit.PointSetOracle(h2, g), SLACK, warm=first)
    assert again.calls["total"] <= 2
    assert again.calls["evaluated"] > 0
    cold = bicrit.search("convex-hull", bicrit.PointSetOracle(h2, g), SLACK)
    assert again.value == pytest.approx(cold.value, rel=1e-12)
    # A Python oracle's result cannot seed a point set (and vice versa).
    with pytest.raises(InvalidInputError, match="warm start"):
        bicrit.search("convex-hull", ListOracle([1.0], [1.0], ["a"]), SLACK, warm=first)


def test_result_fields():
    r = bicrit.search("convex-hull", bicrit.PointSetOracle([0.0, -0.5], [0.0, 3.0]), "slack")
    assert r.search == "convex-hull"
    assert set(r.calls) >= {"lambda", "extreme", "cone", "ban", "kbest", "total"}
    assert r.trace and "lambda_" in r.trace[0]
    if r.fractional:
        with pytest.raises(ValueError, match="fractional"):
            _ = r.label


@PROPERTY
@given(
    st.lists(st.tuples(st.integers(-4, 4), st.integers(0, 5)), min_size=1, max_size=10),
    st.integers(1, 4),
)
def test_microf1_hull_and_recovery_in_its_own_coordinates(labels, gold_size):
    """Micro-F1: h = H + m, g = −(|y| + |y_i|) ≤ −|y_i|; the gold label is (0, −2|y_i|)."""
    psi = bicrit.surrogate("microf1")
    h = [0.5 * a for a, _ in labels] + [0.0]
    g = [-(b + gold_size) for _, b in labels] + [-2.0 * gold_size]
    o = bicrit.PointSetOracle(h, g, gold=len(h) - 1)
    t = 1e-9 * max(1.0, hull_opt(psi, h, g))
    r = bicrit.search("convex-hull", o, psi)
    assert abs(r.value - hull_opt(psi, h, g)) <= t
    r = bicrit.search("convex-hull-ban", bicrit.PointSetOracle(h, g, gold=len(h) - 1), psi)
    assert abs(r.value - integral_opt(psi, h, g)) <= t


def test_warm_start_through_a_python_oracle_with_evaluate():
    rng = np.random.default_rng(2)
    h, g = list(rng.uniform(-1.5, 0.5, 40)), list(rng.integers(1, 8, 40).astype(float))
    names = [f"y{i}" for i in range(40)]
    first = bicrit.search("convex-hull", ListOracle(h, g, names, gold=("gold", 0.0, 0.0)), SLACK)
    again = bicrit.search(
        "convex-hull", ListOracle(h, g, names, gold=("gold", 0.0, 0.0)), SLACK, warm=first
    )
    assert again.calls["total"] == 1 and again.calls["evaluated"] > 0
    assert again.value == pytest.approx(first.value)
    assert again.labels == first.labels
