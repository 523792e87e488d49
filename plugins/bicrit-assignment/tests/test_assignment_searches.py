"""bicrit's native searches drive the Python assignment oracle (``structure.instance_oracle``:
the search runs in Rust and calls back into the plugin) and give the answers of brute force
over every permutation."""

from __future__ import annotations

import math

import bicrit
import numpy as np
import pytest
from bicrit.errors import IncompatibleError

from bicrit_assignment import Assignment
from bicrit_assignment.reference import label_points

D = 3
SURROGATES = [
    ("slack", {}),
    ("margin", {}),
    ("beta", {"beta": 0.5}),
    ("probloss", {}),
    ("log", {}),
    ("microf1", {}),
]

_T = np.unique(np.concatenate([np.linspace(0.0, 0.5, 65), 10.0 ** -np.arange(1, 17)]))


def points(psi_name: str, w, x, y) -> tuple[np.ndarray, np.ndarray]:
    """Every permutation's point in the surrogate's own coordinates: (m, L), or for
    Micro-F1 (H + m, −(|y| + |y_i|)) with H = 2L and |y| = |y_i| = n."""
    _, m, L = label_points(w, x, y)
    if psi_name == "microf1":
        return 2.0 * L + m, np.full_like(L, -2.0 * len(y))
    return m, L


def pareto(h: np.ndarray, g: np.ndarray) -> np.ndarray:
    """The points no other point dominates (larger or equal h and g, one strictly)."""
    pts = np.unique(np.stack([h, g], axis=1), axis=0)
    order = np.lexsort((-pts[:, 1], -pts[:, 0]))  # h descending, then g descending
    keep, top = [], -np.inf
    for p in pts[order]:
        if p[1] > top:
            keep.append(p)
            top = p[1]
    return np.array(keep)


def hull_opt(psi, h: np.ndarray, g: np.ndarray) -> float:
    """max ψ over the convex hull: ψ increasing puts the optimum on a segment between two
    non-dominated points; ψ quasi-concave makes it unimodal there (grid, then ternary search)."""
    pts = pareto(h, g)
    best = float(np.max(psi.value(pts[:, 0], pts[:, 1])))
    i, j = np.nonzero(~np.eye(len(pts), dtype=bool))
    if len(i) == 0:
        return best
    a, b = pts[i], pts[j]

    def at(t: np.ndarray) -> np.ndarray:
        t = t if t.ndim == 2 else t[:, None]
        return psi.value(a[:, :1] + t * (b[:, :1] - a[:, :1]), a[:, 1:] + t * (b[:, 1:] - a[:, 1:]))

    grid = at(np.broadcast_to(_T, (len(a), len(_T))).copy())
    k = np.argmax(grid, axis=1)
    lo, hi = _T[np.maximum(k - 1, 0)], _T[np.minimum(k + 1, len(_T) - 1)]
    for _ in range(60):
        m1, m2 = lo + (hi - lo) / 3, hi - (hi - lo) / 3
        up = at(m1)[:, 0] < at(m2)[:, 0]
        lo, hi = np.where(up, m1, lo), np.where(up, hi, m2)
    return max(best, float(np.max(grid)), float(np.max(at(0.5 * (lo + hi)))))


def tol(v: float) -> float:
    return 1e-9 * max(1.0, abs(v))


def cases(seed: int, count: int, n_max: int = 5):
    rng = np.random.default_rng(seed)
    for _ in range(count):
        n = int(rng.integers(2, n_max + 1))
        x = rng.normal(size=(n, n, D))
        yield rng.normal(size=D) * rng.choice([0.3, 1.0, 3.0]), x, rng.permutation(n)


@pytest.fixture(scope="module")
def s() -> Assignment:
    return bicrit.structure("assignment", n_features=D)


@pytest.mark.parametrize(("name", "params"), SURROGATES)
def test_convex_hull_search_equals_the_hull_optimum(s, name: str, params: dict) -> None:
    psi = bicrit.surrogate(name, **params)
    for w, x, y in cases(1, 40):
        r = bicrit.search("convex-hull", s.instance_oracle(w, x, y), psi)
        h, g = points(name, w, x, y)
        ref = hull_opt(psi, h, g)
        assert r.value == pytest.approx(ref, abs=tol(ref)), (name, w, y)
        assert math.isclose(sum(r.weights), 1.0)


@pytest.mark.parametrize(("name", "params"), SURROGATES)
@pytest.mark.parametrize("search", ["convex-hull-ban", "convex-hull-kbest"])
def test_integral_recovery_equals_the_best_permutation(s, search, name: str, params) -> None:
    psi = bicrit.surrogate(name, **params)
    for w, x, y in cases(2, 20, n_max=6):
        r = bicrit.search(search, s.instance_oracle(w, x, y), psi)
        h, g = points(name, w, x, y)
        best = float(np.max(psi.value(h, g)))
        assert r.value == pytest.approx(best, abs=tol(best)), (search, name)
        assert len(r.labels) == 1
        # the returned label really has that value (its own margin and loss)
        m = float(w @ (s.joint_feature(x, r.label) - s.joint_feature(x, y)))
        L = s.loss(r.label, y)
        hh, gg = (2 * L + m, -2.0 * len(y)) if name == "microf1" else (m, L)
        assert psi.value(hh, gg) == pytest.approx(r.value, abs=tol(best))


@pytest.mark.parametrize("search", ["bisecting", "binary"])
def test_lambda_only_product_searches_run_and_stay_below_the_optimum(s, search: str) -> None:
    psi = bicrit.surrogate("slack")
    for w, x, y in cases(3, 20):
        r = bicrit.search(search, s.instance_oracle(w, x, y), psi)
        h, g = points("slack", w, x, y)
        assert r.value <= float(np.max(psi.value(h, g))) + 1e-9


def test_angular_is_refused_for_want_of_a_cone_oracle(s) -> None:
    w, x, y = next(cases(4, 1))
    with pytest.raises(IncompatibleError, match="cone"):
        bicrit.search("angular", s.instance_oracle(w, x, y), "slack")


def test_warm_start_reuses_the_previous_labels(s) -> None:
    psi = bicrit.surrogate("slack")
    for w, x, y in cases(5, 10):
        first = bicrit.search("convex-hull-kbest", s.instance_oracle(w, x, y), psi)
        again = bicrit.search("convex-hull-kbest", s.instance_oracle(w, x, y), psi, warm=first)
        assert again.value == pytest.approx(first.value)
        assert again.calls["total"] <= first.calls["total"]


def test_plugin_exceptions_reach_the_caller_unchanged() -> None:
    class Faulty(Assignment):
        def oracle(self, *args: object, **kwargs: object) -> list:
            raise KeyError("bug inside the plugin oracle")

    w, x, y = next(cases(6, 1))
    with pytest.raises(KeyError, match="bug inside the plugin oracle"):
        bicrit.search("convex-hull", Faulty(D).instance_oracle(w, x, y), "slack")
