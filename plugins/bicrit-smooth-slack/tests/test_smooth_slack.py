"""smooth-slack: parameters, value and gradient, quasi-concavity, and bicrit's native searches
driving it (by name) against brute force over point sets and over native structures' oracles."""

from __future__ import annotations

import itertools
import math

import bicrit
import numpy as np
import pytest
from bicrit.errors import IncompatibleError, InvalidParameterError

from bicrit_smooth_slack import SmoothSlack

TAUS = [0.05, 0.5, 2.0]
HULL_SEARCHES = ["convex-hull", "convex-hull-ban", "convex-hull-kbest"]
PRODUCT_SEARCHES = ["angular", "bisecting", "binary", "sarawagi"]


# --- brute force, written independently of bicrit's searches -------------------------------------

_T = np.unique(np.concatenate([np.linspace(0.0, 0.5, 65), 10.0 ** -np.arange(1, 17)]))


def integral_opt(psi: SmoothSlack, h: np.ndarray, g: np.ndarray) -> float:
    """max ψ over the points."""
    return float(np.max(psi.value(np.asarray(h, float), np.asarray(g, float))))


def hull_opt(psi: SmoothSlack, h: np.ndarray, g: np.ndarray) -> float:
    """max ψ over the convex hull: ψ is increasing, so the optimum lies on an edge between two
    points; ψ is quasi-concave, so unimodal on the edge (grid crowding both ends, then ternary
    refinement; every pair in both directions, each over its first half)."""
    pts = np.array(sorted(set(zip(map(float, h), map(float, g), strict=True))))
    best = float(np.max(psi.value(pts[:, 0], pts[:, 1])))
    if len(pts) < 2:
        return best
    i, j = np.triu_indices(len(pts), k=1)
    i, j = np.concatenate([i, j]), np.concatenate([j, i])
    a, b = pts[i], pts[j]

    def at(t: np.ndarray) -> np.ndarray:
        t = t if t.ndim == 2 else t[:, None]
        return psi.value(a[:, :1] + t * (b[:, :1] - a[:, :1]), a[:, 1:] + t * (b[:, 1:] - a[:, 1:]))

    grid = at(np.broadcast_to(_T, (len(a), len(_T))).copy())
    best = max(best, float(np.max(grid)))
    k = np.argmax(grid, axis=1)
    lo, hi = _T[np.maximum(k - 1, 0)], _T[np.minimum(k + 1, len(_T) - 1)]
    for _ in range(80):
        m1, m2 = lo + (hi - lo) / 3, hi - (hi - lo) / 3
        up = at(m1)[:, 0] < at(m2)[:, 0]
        lo, hi = np.where(up, m1, lo), np.where(up, hi, m2)
    return max(best, float(np.max(at(0.5 * (lo + hi)))))


def random_point_set(rng: np.random.Generator) -> tuple[list[float], list[float]]:
    """Label points (h, g) = (m, L) with the gold label (0, 0) first: continuous, integer grids
    (ties, duplicates), all h ≤ −1 (below slack's hinge), or collinear."""
    n = int(rng.integers(1, 13))
    mode = rng.choice(["continuous", "grid", "below-hinge", "collinear"])
    if mode == "grid":
        h = rng.integers(-3, 3, n).astype(float)
        g = rng.integers(0, 6, n).astype(float)
    elif mode == "below-hinge":
        h = rng.uniform(-4.0, -1.0, n)
        g = rng.uniform(0.0, 5.0, n)
    elif mode == "collinear":
        g = rng.integers(0, 5, n).astype(float)
        h = 1.0 - 0.7 * g
    else:
        h = rng.uniform(-2.5, 1.5, n)
        g = rng.uniform(0.0, 5.0, n)
    return [0.0, *h.tolist()], [0.0, *g.tolist()]


def tol(*values: float) -> float:
    return 1e-9 * max(1.0, *(abs(v) for v in values))


# --- the surrogate itself -------------------------------------------------------------------------


def test_registered_under_its_name_with_package_and_capabilities() -> None:
    c = bicrit.registry.get("surrogate", "smooth-slack")
    assert c.package == "bicrit-smooth-slack"
    # the convex hull searches and frontier (ψ increasing in h, g = L); not the product-form ones
    assert c.capabilities["searches"] == [*HULL_SEARCHES, "frontier"]
    assert c.capabilities["learners"] == ["sgd"]
    assert c.capabilities["product_form"] is False and c.capabilities["affine_in_h"] is False
    assert c.capabilities["convex_in_h"] is True
    # every key a built-in surrogate declares (plus its own extras: learners, tangent)
    assert set(bicrit.registry.get("surrogate", "slack").capabilities) <= set(c.capabilities)
    psi = bicrit.surrogate("smooth-slack", tau=0.2)
    assert isinstance(psi, SmoothSlack) and psi.params == {"tau": 0.2}
    assert bicrit.surrogate("smooth-slack").tau == 0.5


@pytest.mark.parametrize("tau", [0, -1.0, math.nan, math.inf, "1", True, None])
def test_parameter_outside_the_domain_is_refused(tau: object) -> None:
    with pytest.raises(InvalidParameterError, match="tau"):
        bicrit.surrogate("smooth-slack", tau=tau)


def test_unknown_parameter_is_refused() -> None:
    with pytest.raises(InvalidParameterError, match="no parameter beta"):
        bicrit.surrogate("smooth-slack", beta=1.0)


def test_value_limits_and_domain() -> None:
    h = np.linspace(-3.0, 2.0, 41)
    g = 2.5
    hinge = g * np.maximum(0.0, h + 1.0)
    assert np.allclose(SmoothSlack(tau=1e-4).value(h, g), hinge, atol=1e-3)
    for tau in TAUS:
        psi = SmoothSlack(tau=tau)
        assert np.all(psi.value(h, g) >= hinge)  # an upper bound of hinged slack rescaling
        assert psi.value(0.0, 0.0) == 0.0  # the gold label
        assert np.all(psi.value(h, 0.0) == 0.0)
        assert math.isnan(psi.value(0.3, -1.0))
        assert all(math.isnan(v) for v in psi.grad(0.3, -1.0))
        assert isinstance(psi.value(0.1, 1.0), float)
        # at a label scoring like the gold one (m ≥ 0), ψ ≥ L: an upper bound of the task loss
        assert psi.value(0.0, 3.0) >= 3.0
    assert SmoothSlack(tau=1.0).value(-1.0, 1.0) == pytest.approx(math.log(2.0))
    assert SmoothSlack(tau=1.0).value(800.0, 1.0) == pytest.approx(801.0)  # no overflow


@pytest.mark.parametrize("tau", TAUS)
def test_gradient_matches_finite_differences(tau: float) -> None:
    psi = SmoothSlack(tau=tau)
    for h, g in itertools.product(np.linspace(-3.0, 2.0, 11), [0.25, 1.0, 3.0, 7.0]):
        step = 1e-6 * (1.0 + abs(h) + abs(g))
        dh = (psi.value(h + step, g) - psi.value(h - step, g)) / (2 * step)
        dg = (psi.value(h, g + step) - psi.value(h, g - step)) / (2 * step)
        gh, gg = psi.grad(h, g)
        assert gh == pytest.approx(dh, rel=1e-5, abs=1e-7), (h, g)
        assert gg == pytest.approx(dg, rel=1e-5, abs=1e-7), (h, g)
    # The scalar fast path (Python floats, as the native searches call it) equals the array path.
    H, G = np.meshgrid(np.linspace(-60 * tau, 40 * tau, 41), np.linspace(0, 4, 5))
    V, (dh, dg) = psi.value(H, G), psi.grad(H, G)
    assert dh.shape == dg.shape == V.shape == (5, 41)
    for (i, j), hh in np.ndenumerate(H):
        one = (psi.value(float(hh), float(G[i, j])), *psi.grad(float(hh), float(G[i, j])))
        assert one == pytest.approx((V[i, j], dh[i, j], dg[i, j]), rel=1e-13, abs=1e-300)


@pytest.mark.parametrize("tau", TAUS)
def test_tangent_is_the_gradient_ratio_and_survives_underflow(tau: float) -> None:
    psi = SmoothSlack(tau=tau)
    for h, g in itertools.product(np.linspace(-3.0, 2.0, 11), [0.5, 2.0]):
        dh, dg = psi.grad(h, g)
        assert psi.tangent(h, g) == pytest.approx(dg / dh, rel=1e-12)
    # Far below the hinge both components underflow; the tangent tends to τ/g.
    far = -1.0 - 2000.0 * tau
    assert psi.grad(far, 2.0) == (0.0, 0.0)
    assert psi.tangent(far, 2.0) == pytest.approx(tau / 2.0, rel=1e-12)
    assert psi.tangent(0.0, 0.0) is None  # undefined at g = 0: the search falls back to grad


@pytest.mark.parametrize("tau", TAUS)
def test_increasing_and_quasi_concave_on_a_grid(tau: float) -> None:
    psi = SmoothSlack(tau=tau)
    hs, gs = np.linspace(-4.0, 3.0, 71), np.linspace(0.0, 6.0, 61)
    H, G = np.meshgrid(hs, gs, indexing="ij")
    V = psi.value(H, G)
    assert np.all(np.diff(V, axis=0) >= 0) and np.all(np.diff(V, axis=1) >= 0)
    # ψ(t·a + (1 − t)·b) ≥ min(ψ(a), ψ(b)) on random pairs of grid points.
    rng = np.random.default_rng(0)
    pts = np.stack([H.ravel(), G.ravel()], axis=1)
    a = pts[rng.integers(len(pts), size=4000)]
    b = pts[rng.integers(len(pts), size=4000)]
    for t in np.linspace(0.0, 1.0, 21):
        mix = t * a + (1 - t) * b
        floor = np.minimum(psi.value(a[:, 0], a[:, 1]), psi.value(b[:, 0], b[:, 1]))
        assert np.all(psi.value(mix[:, 0], mix[:, 1]) >= floor - 1e-12 * (1 + floor))
    # Level curves g = c/f(h) are convex (super-level sets convex): second differences ≥ 0.
    for c in [0.1, 1.0, 5.0]:
        curve = c / psi.value(hs, 1.0)
        assert np.all(np.diff(curve, 2) >= -1e-12 * curve[1:-1])


# --- bicrit's native searches driving it ----------------------------------------------------------


@pytest.mark.parametrize("tau", TAUS)
def test_hull_searches_equal_brute_force_on_random_point_sets(tau: float) -> None:
    rng = np.random.default_rng(int(tau * 100))
    psi = SmoothSlack(tau=tau)
    for _ in range(120):
        h, g = random_point_set(rng)
        hopt, iopt = hull_opt(psi, h, g), integral_opt(psi, h, g)
        r = bicrit.search("convex-hull", bicrit.PointSetOracle(h, g), psi)
        assert r.value == pytest.approx(hopt, abs=tol(hopt)), (h, g)
        assert r.upper_bound >= hopt - tol(hopt)
        for name in ("convex-hull-ban", "convex-hull-kbest"):
            r = bicrit.search(name, bicrit.PointSetOracle(h, g), psi)
            assert len(r.labels) == 1
            assert r.value == pytest.approx(iopt, abs=tol(iopt)), (name, h, g)
            assert psi.value(h[r.label], g[r.label]) == pytest.approx(r.value, abs=tol(iopt))


@pytest.mark.parametrize("search", HULL_SEARCHES)
def test_used_by_name_in_every_search_its_form_allows(search: str) -> None:
    h, g = [0.0, 0.3, -0.2, -1.5, 0.8], [0.0, 2.0, 4.0, 6.0, 1.0]
    by_name = bicrit.search(search, bicrit.PointSetOracle(h, g), "smooth-slack")
    by_object = bicrit.search(search, bicrit.PointSetOracle(h, g), SmoothSlack())
    assert by_name.value == by_object.value
    assert by_name.labels == by_object.labels


@pytest.mark.parametrize("search", PRODUCT_SEARCHES)
def test_product_form_searches_refuse_it(search: str) -> None:
    oracle = bicrit.PointSetOracle([0.0, 0.3, -0.2], [0.0, 2.0, 4.0])
    with pytest.raises(IncompatibleError, match=r"product form.*'smooth-slack'"):
        bicrit.search(search, oracle, "smooth-slack", xi=0.0)
    assert oracle.calls == 0  # refused before any oracle call


def _points_of_all_labels(s, w, x, y_true, labels) -> tuple[list[float], list[float]]:
    """Every label as its point (m, L), from joint_feature and loss (no oracle involved)."""
    gold = float(w @ s.joint_feature(x, y_true))
    h = [float(w @ s.joint_feature(x, y)) - gold for y in labels]
    g = [s.loss(y, y_true) for y in labels]
    return h, g


@pytest.mark.parametrize("search", [*HULL_SEARCHES, "frontier"])
def test_native_structure_oracles_equal_brute_force(search: str) -> None:
    """The search runs in Rust over a native structure's own oracle (``instance_oracle``) and calls
    back into this Python surrogate; its value equals enumeration of every label."""
    rng = np.random.default_rng(7)
    psi = SmoothSlack(tau=0.3)
    mc = bicrit.structure("multiclass", n_classes=6, n_features=4)
    chain = bicrit.structure("chain", n_states=3, n_features=3)
    X_chain = rng.normal(size=(4, 3))
    y_chain = rng.integers(0, 3, size=4)
    chain.initialize([X_chain], [y_chain])
    chain_labels = [np.array(p) for p in itertools.product(range(3), repeat=4)]
    for trial in range(30):
        if trial % 2:
            s, x, y, labels = mc, rng.normal(size=4), int(rng.integers(6)), list(range(6))
            w = rng.normal(size=mc.size_joint_feature) * 2.0
        else:
            s, x, y, labels = chain, X_chain, y_chain, chain_labels
            w = rng.normal(size=chain.size_joint_feature)
        r = bicrit.search(search, s.instance_oracle(w, x, y), psi)
        h, g = _points_of_all_labels(s, w, x, y, labels)
        ref = hull_opt(psi, h, g) if search == "convex-hull" else integral_opt(psi, h, g)
        assert r.value == pytest.approx(ref, abs=tol(ref)), (search, trial)
        if search != "convex-hull":
            assert psi.value(*_points_of_all_labels(s, w, x, y, [r.label])) == pytest.approx(
                r.value, abs=tol(ref)
            )


def test_exceptions_raised_inside_reach_the_caller_unchanged() -> None:
    class Faulty(SmoothSlack):
        def value(self, h: object, g: object) -> float:
            raise ArithmeticError("plugin bug in value")

    with pytest.raises(ArithmeticError, match="plugin bug in value"):
        bicrit.search("convex-hull", bicrit.PointSetOracle([0.0, 0.5], [0.0, 1.0]), Faulty())
