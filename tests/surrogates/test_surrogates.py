"""Surrogates: values against the thesis's table written independently here, gradients against
finite differences, ProbLoss's slope √g at h = 0 (σ² = 2g/π is a variance), continuity of the
convex extension, domain refusals, the registry, and Python surrogates in the searches."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import norm

import bicrit
from bicrit.errors import InvalidInputError, InvalidParameterError, UnknownNameError


def table(name: str, p: dict, h: float, g: float) -> float:
    """Thesis table `table:surrogate` (h = m, g = L except Micro-F1), written from the table."""
    if name == "margin":
        return h + g
    if name == "slack":
        return (h + 1) * g
    if name == "generalized":
        return h * g ** p["beta"] + g ** p["alpha"]
    if name == "beta":
        return h * g ** p["beta"] + g
    if name == "log":
        return g * math.log(math.exp(h) + 1)
    if name == "probloss":
        return 2 * g * norm.cdf(h, loc=0.0, scale=math.sqrt(2 * g / math.pi))
    if name == "probloss-convex":
        if h <= 0:
            return table("probloss", p, h, g)
        return g + math.sqrt(g) * h
    if name == "microf1":
        return h / -g
    raise AssertionError(name)


CASES = [
    ("margin", {}),
    ("slack", {}),
    ("generalized", {"alpha": 1.5, "beta": 0.75}),
    ("generalized", {"alpha": 1.0, "beta": 0.0}),
    ("beta", {"beta": 0.25}),
    ("beta", {"beta": 1.0}),
    ("log", {}),
    ("probloss", {}),
    ("probloss-convex", {}),
    ("microf1", {}),
]


def sample(name: str, n: int = 40):
    rng = np.random.default_rng(7)
    h = rng.uniform(-3, 3, n)
    g = rng.uniform(0.1, 6, n)
    if name == "microf1":
        g = -g
    if name == "probloss-convex":
        h = h[np.abs(h) > 1e-3]
        g = g[: len(h)]
    return h, g


@pytest.mark.parametrize(("name", "params"), CASES)
def test_values_match_the_thesis_table(name, params):
    psi = bicrit.surrogate(name, **params)
    h, g = sample(name)
    got = psi.value(h, g)
    want = np.array([table(name, params, a, b) for a, b in zip(h, g, strict=True)])
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    assert isinstance(psi.value(0.5, -1.5 if name == "microf1" else 1.5), float)


@pytest.mark.parametrize(("name", "params"), CASES)
def test_gradients_match_finite_differences(name, params):
    psi = bicrit.surrogate(name, **params)
    h, g = sample(name)
    eps = 1e-6
    dh, dg = psi.grad(h, g)
    fd_h = (psi.value(h + eps, g) - psi.value(h - eps, g)) / (2 * eps)
    fd_g = (psi.value(h, g + eps) - psi.value(h, g - eps)) / (2 * eps)
    np.testing.assert_allclose(dh, fd_h, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(dg, fd_g, rtol=1e-6, atol=1e-7)


def test_gold_label_has_value_zero():
    for name, params in CASES:
        psi = bicrit.surrogate(name, **params)
        gold = (0.0, -4.0) if name == "microf1" else (0.0, 0.0)
        assert psi.value(*gold) == 0.0, name
    assert bicrit.surrogate("microf1").value(0.0, 0.0) == 0.0  # |y| = |y_i| = 0: Φ := 0


def test_probloss_slope_at_zero_is_sqrt_g():
    psi = bicrit.surrogate("probloss")
    g = np.array([0.25, 1.0, 2.0, 9.0, 100.0])
    dh, _ = psi.grad(np.zeros_like(g), g)
    np.testing.assert_allclose(dh, np.sqrt(g), rtol=1e-14)
    # σ² = 2g/π is the variance: at h = σ the value is 2g·Φ_N(1).
    sigma = np.sqrt(2 * g / np.pi)
    np.testing.assert_allclose(psi.value(sigma, g), 2 * g * norm.cdf(1.0), rtol=1e-12)
    # Far from the boundary: ψ → 2g for h ≫ σ, → 0 for h ≪ −σ.
    assert psi.value(1e3, 2.0) == pytest.approx(4.0)
    assert psi.value(-1e3, 2.0) == pytest.approx(0.0, abs=1e-300)


def test_probloss_convex_is_c1_at_zero():
    psi = bicrit.surrogate("probloss-convex")
    for g in (0.5, 1.0, 4.0):
        e = 1e-9
        assert psi.value(-e, g) == pytest.approx(psi.value(e, g), abs=1e-8)
        (dl, gl), (dr, gr) = psi.grad(-e, g), psi.grad(e, g)
        assert dl == pytest.approx(dr, abs=1e-7) and gl == pytest.approx(gr, abs=1e-7)
        assert dr == pytest.approx(math.sqrt(g), rel=1e-7)


@pytest.mark.parametrize(
    ("name", "params", "match"),
    [
        ("generalized", {"alpha": 0.5, "beta": 1.0}, "alpha = 0.5.*beta <= alpha <= beta \\+ 1"),
        ("generalized", {"alpha": 3.0, "beta": 1.0}, "alpha = 3"),
        ("generalized", {"alpha": 0.5, "beta": -0.5}, "beta = -0.5.*beta >= 0"),
        ("beta", {"beta": 1.5}, "beta = 1.5.*\\[0, 1\\]"),
        ("beta", {"beta": -0.1}, "beta = -0.1"),
        ("beta", {"beta": float("nan")}, "not finite"),
        ("beta", {}, "needs parameter beta"),
        ("margin", {"beta": 0.5}, "no parameter 'beta'"),
    ],
)
def test_parameters_outside_the_domain_are_refused(name, params, match):
    with pytest.raises(InvalidParameterError, match=match):
        bicrit.surrogate(name, **params)


def test_registry_names_and_unknown_names():
    names = bicrit.registry.names("surrogate")
    for n in [
        "margin",
        "slack",
        "generalized",
        "beta",
        "log",
        "probloss",
        "probloss-convex",
        "microf1",
    ]:
        assert n in names
    caps = bicrit.registry.get("surrogate", "slack").capabilities
    assert caps["product_form"] is True and "angular" in caps["searches"]
    with pytest.raises(UnknownNameError, match="known surrogates"):
        bicrit.surrogate("hinge")
    psi = bicrit.surrogate("generalized", alpha=1.0, beta=1.0)
    assert psi.product_shift == 1.0 and psi.params == {"alpha": 1.0, "beta": 1.0}
    assert bicrit.surrogate("beta", beta=0.5).product_shift is None
    assert bicrit.surrogate("log").affine_in_h is False


def test_bad_inputs_are_clear_errors():
    psi = bicrit.surrogate("slack")
    with pytest.raises(InvalidInputError, match="non-finite"):
        psi.value(float("nan"), 1.0)
    with pytest.raises(InvalidInputError, match="non-finite"):
        psi.grad([1.0, math.inf], [1.0, 1.0])
    with pytest.raises(InvalidInputError, match="outside its domain"):
        bicrit.surrogate("probloss").value(1.0, -1.0)
    assert psi.value(np.empty(0), np.empty(0)).shape == (0,)


def test_arrays_broadcast():
    psi = bicrit.surrogate("margin")
    out = psi.value(np.ones((2, 3)), 2.0)
    assert out.shape == (2, 3) and np.all(out == 3.0)


class PyBeta:
    """β-scaling written in Python (no product form)."""

    def __init__(self, beta):
        self.beta = beta

    def value(self, h, g):
        return h * g**self.beta + g

    def grad(self, h, g):
        return g**self.beta, (self.beta * h * g ** (self.beta - 1) if g > 0 else 0.0) + 1.0


def test_python_surrogate_runs_in_the_hull_search_and_is_refused_by_product_searches():
    rng = np.random.default_rng(1)
    h, g = list(rng.uniform(-1, 1, 20)), list(rng.uniform(0, 3, 20))
    o = bicrit.PointSetOracle([*h, 0.0], [*g, 0.0])
    native = bicrit.search("convex-hull", o, bicrit.surrogate("beta", beta=0.5))
    mine = bicrit.search("convex-hull", bicrit.PointSetOracle([*h, 0.0], [*g, 0.0]), PyBeta(0.5))
    assert mine.value == pytest.approx(native.value, rel=1e-9)
    with pytest.raises(bicrit.errors.IncompatibleError):
        bicrit.search("angular", o, PyBeta(0.5))


@pytest.mark.parametrize(("name", "params"), CASES)
def test_convex_in_h_says_whether_psi_is_convex_in_h(name, params):
    """``convex_in_h`` (what the estimators' ``warmup="auto"`` reads) against the second
    differences of the thesis's formula, written above, on a grid of h for several g: convex
    surrogates have none below −1e-9, ProbLoss (S-shaped: 2g·Φ saturates) has some."""
    s = bicrit.surrogate(name, **params)
    assert s.convex_in_h == (name != "probloss")
    assert bicrit.registry.get("surrogate", name).capabilities["convex_in_h"] == s.convex_in_h
    hs = np.linspace(-4, 4, 161)
    step = hs[1] - hs[0]
    worst = np.inf
    for g in (0.5, 1.0, 3.0, 7.0):
        g = -g if name == "microf1" else g
        v = np.array([table(name, params, h, g) for h in hs])
        worst = min(worst, float(np.min(v[2:] - 2 * v[1:-1] + v[:-2]) / step**2))
    assert (worst >= -1e-9) == s.convex_in_h, worst
