"""The α solvers (NHSVM's power and max-min problems, Shared SVM's α step) against independent
scipy references on random trees and DAGs — objective values to 1e-6 and feasibility, since optima
need not be unique; ArgminAlphaTree against the generic convex solve; the duplication invariance
(Theorem ``thm:invarinace``); bad hierarchies."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from bicrit.errors import InvalidInputError, InvalidParameterError, UnsupportedQueryError
from bicrit.hierarchy import (
    Hierarchy,
    flat_alpha,
    keep_positive,
    leaf_sums,
    maxmin_alpha,
    node_weights,
    power_alpha,
    shared_alpha,
)
from tests.hierarchy.reference import (
    incidence,
    maxmin_reference,
    min_norm_on_face,
    power_reference,
    random_branching_tree,
    random_parents,
    shared_dual,
)

FEAS = 1e-7  # feasibility tolerance of the interior-point answers


def _feasible(parents, alpha, lo=1.0, hi=1.0) -> None:
    s = incidence(parents) @ alpha
    assert np.all(alpha >= -FEAS), alpha
    assert np.all(s >= lo - FEAS) and np.all(s <= hi + FEAS), s


def _close(ours: float, ref: float, tol: float = 1e-6) -> None:
    assert abs(ours - ref) <= tol * (1.0 + abs(ref)), (ours, ref)


def _graph(seed: int, dag: bool, n_max: int = 10) -> tuple[list[list[int]], int]:
    rng = np.random.default_rng(seed)
    return random_parents(rng, int(rng.integers(2, n_max + 1)), 3 if dag else 1)


# --- power problem ------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(40))
@pytest.mark.parametrize("rho", [1.01, 1.5, 2.0, 3.0])
def test_power_on_trees_matches_scipy(seed: int, rho: float) -> None:
    parents, root = _graph(seed, dag=False)
    ref = power_reference(parents, rho)
    for method in ("closed_form", "conic"):
        a = power_alpha(parents, rho, root=root, method=method)
        _feasible(parents, a)
        _close(float(np.sum(a**rho)), ref)


@pytest.mark.parametrize("seed", range(40))
@pytest.mark.parametrize("rho", [1.01, 1.5, 2.0, 3.0])
def test_power_on_dags_matches_scipy(seed: int, rho: float) -> None:
    parents, root = _graph(seed, dag=True)
    a = power_alpha(parents, rho, root=root)
    _feasible(parents, a)
    _close(float(np.sum(a**rho)), power_reference(parents, rho))


@pytest.mark.parametrize("seed", range(30))
def test_power_relaxed_directional_and_rootless_match_scipy(seed: int) -> None:
    parents, root = _graph(seed, dag=seed % 3 != 0)
    rho = [1.2, 2.0, 2.5][seed % 3]
    a = power_alpha(parents, rho, root=root, relaxed=True, T=1.5)
    _feasible(parents, a, 1.0, 1.5)
    _close(float(np.sum(a**rho)), power_reference(parents, rho, T=1.5))
    d = power_alpha(parents, rho, root=root, directional=True)
    _feasible(parents, d)
    for c, ps in enumerate(parents):
        assert all(d[c] >= d[p] - FEAS for p in ps)
    _close(float(np.sum(d**rho)), power_reference(parents, rho, directional=True))
    z = power_alpha(parents, rho, root=root, include_root=False)
    _feasible(parents, z)
    assert z[root] == pytest.approx(0.0, abs=FEAS)
    _close(float(np.sum(z**rho)), power_reference(parents, rho, root=root))


def test_power_closed_form_refuses_what_it_cannot_do() -> None:
    dag = [[], [0], [0], [1, 2]]
    with pytest.raises(UnsupportedQueryError, match="closed-form"):
        power_alpha(dag, 2.0, method="closed_form")
    with pytest.raises(UnsupportedQueryError, match="closed-form"):
        power_alpha([[], [0], [0]], 2.0, method="closed_form", directional=True)
    with pytest.raises(InvalidParameterError, match="method"):
        power_alpha([[], [0], [0]], 2.0, method="newton")


@pytest.mark.parametrize("rho", [1.0, 0.5, float("nan"), float("inf")])
def test_bad_rho_is_refused(rho: float) -> None:
    with pytest.raises(InvalidParameterError, match="rho"):
        power_alpha([[], [0], [0]], rho)


@pytest.mark.parametrize("T", [0.5, float("nan"), float("inf")])
def test_bad_t_is_refused(T: float) -> None:
    with pytest.raises(InvalidParameterError, match="T must be"):
        power_alpha([[], [0], [0]], 2.0, relaxed=True, T=T)
    with pytest.raises(InvalidParameterError, match="T must be"):
        maxmin_alpha([[], [0], [0]], relaxed=True, T=T)


# --- ρ = 1: max-min LP with the min-norm tie-break ---------------------------------------------


@pytest.mark.parametrize("seed", range(40))
def test_maxmin_matches_linprog_and_breaks_ties_by_min_norm(seed: int) -> None:
    parents, root = _graph(seed, dag=seed % 2 == 1)
    T = 1.5 if seed % 4 == 3 else None
    a = maxmin_alpha(parents, root=root, relaxed=T is not None)
    _feasible(parents, a, 1.0, T or 1.0)
    for c, ps in enumerate(parents):
        assert all(a[c] >= a[p] - FEAS for p in ps), "directional constraint"
    t_star = maxmin_reference(parents, T=T)
    _close(float(a.min()), t_star)
    _close(float(a @ a), min_norm_on_face(parents, t_star, T=T))
    # deterministic: the same graph gives the same weights
    assert np.array_equal(a, maxmin_alpha(parents, root=root, relaxed=T is not None))


@pytest.mark.parametrize("seed", range(15))
def test_maxmin_variants(seed: int) -> None:
    parents, root = _graph(seed, dag=seed % 2 == 1)
    free = maxmin_alpha(parents, root=root, directional=False)
    _close(float(free.min()), maxmin_reference(parents, directional=False))
    lp = maxmin_alpha(parents, root=root, tie_break=False)
    _feasible(parents, lp)
    _close(float(lp.min()), maxmin_reference(parents))
    z = maxmin_alpha(parents, root=root, include_root=False)
    _feasible(parents, z)
    assert z[root] == pytest.approx(0.0, abs=FEAS)
    others = np.delete(z, root)
    _close(float(others.min()), maxmin_reference(parents, root=root))


def test_maxmin_tree_value_is_one_over_the_longest_path() -> None:
    # root → a → {c, d}, root → b: t* = 1/3; the face pins r = a = c = d = 1/3, b = 2/3
    h = Hierarchy.from_parent_array(np.array([-1, 0, 0, 1, 1]))
    a = maxmin_alpha(h)
    assert a == pytest.approx([1 / 3, 1 / 3, 2 / 3, 1 / 3, 1 / 3], abs=1e-6)
    assert node_weights(h, 1.0) == pytest.approx(a)


# --- Shared SVM α step -------------------------------------------------------------------------


def _norms(rng: np.random.Generator, n: int) -> np.ndarray:
    N = rng.exponential(size=n) * rng.choice([0.01, 1.0, 100.0])
    N[rng.random(n) < 0.2] = 0.0  # rows that are exactly zero
    if not N.any():
        N[0] = 1.0
    return N


def _shared_value(N: np.ndarray, a: np.ndarray) -> float:
    pos = N > 0
    assert np.all(a[pos] > 0)
    return float(np.sum(N[pos] / a[pos]))


@pytest.mark.parametrize("seed", range(60))
def test_argmin_alpha_tree_equals_the_generic_convex_solve(seed: int) -> None:
    parents, root = _graph(seed, dag=False, n_max=12)
    N = _norms(np.random.default_rng(seed + 1000), len(parents))
    closed = shared_alpha(parents, N, root=root)  # auto = closed form on trees
    _feasible(parents, closed)  # every leaf sum is exactly 1 (also NHSVM-feasible)
    conic = shared_alpha(parents, N, root=root, method="conic")
    _feasible(parents, conic, -np.inf, 1.0)
    ref = shared_dual(parents, N)
    _close(_shared_value(N, closed), ref)
    _close(_shared_value(N, conic), ref)
    assert _shared_value(N, closed) >= ref * (1 - 1e-9)  # weak duality


@pytest.mark.parametrize("seed", range(30))
def test_shared_step_on_dags_matches_scipy(seed: int) -> None:
    parents, root = _graph(seed, dag=True)
    N = _norms(np.random.default_rng(seed + 2000), len(parents))
    a = shared_alpha(parents, N, root=root)
    _feasible(parents, a, -np.inf, 1.0)
    ref = shared_dual(parents, N)
    _close(_shared_value(N, a), ref)
    assert _shared_value(N, a) >= ref * (1 - 1e-9)  # weak duality


def test_shared_step_closed_form_refuses_dags_and_bad_norms() -> None:
    dag = [[], [0], [0], [1, 2]]
    with pytest.raises(UnsupportedQueryError, match="tree"):
        shared_alpha(dag, [1.0] * 4, method="closed_form")
    with pytest.raises(InvalidInputError, match="node 1"):
        shared_alpha([[], [0], [0]], [1.0, -1.0, 0.0])
    with pytest.raises(InvalidInputError, match="entries"):
        shared_alpha([[], [0], [0]], [1.0, 1.0])
    with pytest.raises(InvalidInputError, match="finite"):
        shared_alpha([[], [0], [0]], [1.0, np.nan, 1.0])


def test_argmin_alpha_tree_closed_form_on_the_thesis_example() -> None:
    # parent of leaves (eq. leaf_f): f = (√B1 + √B2)², k = √B1 / (√B1 + √B2)
    a = shared_alpha([[], [0], [0]], [4.0, 1.0, 8.0])
    assert a == pytest.approx([0.4, 0.6, 0.6], abs=1e-15)


def test_keep_positive_stays_feasible_and_positive() -> None:
    h = Hierarchy.from_parent_array(np.array([-1, 0, 0, 1, 1]))
    a = shared_alpha(h, [0.0, 0.0, 1.0, 2.0, 0.0])
    assert (a == 0).any()
    mixed = keep_positive(a, power_alpha(h), 1e-3)
    assert np.all(mixed > 0)
    assert leaf_sums(h, mixed) == pytest.approx(np.ones(3))
    with pytest.raises(InvalidParameterError):
        keep_positive(a, a, 2.0)


def test_flat_alpha_and_leaf_sums() -> None:
    h = Hierarchy.from_parent_array(np.array([-1, 0, 0, 1, 1]))
    f = flat_alpha(h)
    assert f.tolist() == [0.0, 0.0, 1.0, 1.0, 1.0]
    assert leaf_sums(h, f).tolist() == [1.0, 1.0, 1.0]
    with pytest.raises(InvalidInputError, match="shape"):
        leaf_sums(h, [1.0, 2.0])


# --- invariance (Theorem thm:invarinace) ---------------------------------------------------------


def _duplicate(parents: list[list[int]], rng: np.random.Generator, k: int):
    """Inserts single-child copies: node v gets a new only child v' that adopts v's children
    (a leaf v becomes v → v'). Returns the new parents and, per original node, its copies."""
    parents = [list(p) for p in parents]
    copies: dict[int, list[int]] = {v: [v] for v in range(len(parents))}
    for v in rng.choice(len(parents), size=k, replace=True).tolist():
        last = copies[v][-1]
        new = len(parents)
        for c, ps in enumerate(parents):
            if last in ps:
                parents[c] = [new if p == last else p for p in ps]
        parents.append([last])
        copies[v].append(new)
    return parents, copies


@pytest.mark.parametrize("seed", range(12))
def test_duplicated_nodes_get_equal_alpha_and_their_total_approaches_the_minimal_graph(
    seed: int,
) -> None:
    rng = np.random.default_rng(seed)
    minimal = random_branching_tree(rng, int(rng.integers(2, 6)))
    dup, copies = _duplicate(minimal, rng, int(rng.integers(1, 5)))
    gaps = []
    for rho in (2.0, 1.5, 1.1, 1.01):
        a_min = power_alpha(minimal, rho)
        a_dup = power_alpha(dup, rho)
        for group in copies.values():
            # equal weights inside a duplicated set, at every ρ > 1 (Jensen, in the proof)
            assert np.ptp(a_dup[group]) <= 1e-12 * (1 + a_dup[group].max())
        total = np.array([a_dup[g].sum() for g in copies.values()])
        gaps.append(np.abs(total - a_min).max())
    assert gaps[-1] < 1e-6, gaps  # ρ = 1.01
    assert all(later <= earlier + 1e-12 for earlier, later in itertools.pairwise(gaps))


@pytest.mark.parametrize("seed", range(6))
def test_duplication_invariance_also_holds_in_the_conic_solver(seed: int) -> None:
    rng = np.random.default_rng(100 + seed)
    minimal = random_branching_tree(rng, int(rng.integers(2, 4)))
    dup, copies = _duplicate(minimal, rng, 2)
    a_min = power_alpha(minimal, 1.01, method="conic")
    a_dup = power_alpha(dup, 1.01, method="conic")
    total = np.array([a_dup[g].sum() for g in copies.values()])
    # at ρ = 1.01 the objective is nearly flat (curvature ρ(ρ − 1)α^(ρ−2) ≈ 0.01): the interior
    # point pins the value to ~1e-9 but the minimiser only to ~1e-4
    assert np.abs(total - a_min).max() < 1e-3
    for group in copies.values():
        assert np.ptp(a_dup[group]) < 1e-3
    _close(float(np.sum(a_dup**1.01)), float(np.sum(power_alpha(dup, 1.01) ** 1.01)), 1e-7)


def test_rootless_weights_are_the_rooted_ones_rescaled() -> None:
    # the root's block cancels in every margin: with or without it, the same proportions
    rng = np.random.default_rng(7)
    parents = random_branching_tree(rng, 5)
    for rho in (1.3, 2.0):
        a = power_alpha(parents, rho)
        b = power_alpha(parents, rho, include_root=False)
        assert b[0] == 0.0
        assert a[1:] == pytest.approx((1 - a[0]) * b[1:], rel=1e-12, abs=1e-15)


@pytest.mark.parametrize("learner", ["cutting-plane", "bcfw"])
def test_decision_values_of_duplicated_and_minimal_graphs_agree(learner: str) -> None:
    # Theorem thm:invarinace: NHSVM with ρ → 1 on a graph with a duplicated node (a → a' → {a1,
    # a2}) and on its minimal graph (a → {a1, a2}) has the same decision values once both are
    # solved to optimality (the duplicated pair splits the minimal node's α and its row).
    from bicrit.hierarchy import Hierarchy
    from bicrit.hierarchy.estimator import HierarchicalSVM

    minimal = Hierarchy(
        ["root", "a", "b", "a1", "a2", "b1", "b2"], [[], [0], [0], [1], [1], [2], [2]]
    )
    dup = Hierarchy(
        ["root", "a", "b", "a'", "a1", "a2", "b1", "b2"],
        [[], [0], [0], [1], [3], [3], [2], [2]],
    )
    rng = np.random.default_rng(0)
    X = rng.standard_normal((40, 3))
    leaf_names = ["a1", "a2", "b1", "b2"]
    leaf = np.argmax(X @ rng.standard_normal((4, 3)).T + 0.5 * rng.standard_normal((40, 4)), 1)
    params = {"tol": 1e-9, "objective": "exact"} if learner == "bcfw" else {"eps": 1e-8}
    D = {}
    alpha = {}
    for name, h in (("minimal", minimal), ("dup", dup)):
        Y = [h.closure([h.index(leaf_names[k])]) for k in leaf.tolist()]
        est = HierarchicalSVM(
            h,
            model="nhsvm",
            rho=1.01,
            include_root=False,
            C=1.0,
            learner=learner,
            max_epochs=400,
            tol=0.0,
            random_state=0,
            learner_params=params,
        ).fit(X, Y)
        cols = [h.names[c] for c in est.classes_]
        D[name] = est.decision_function(X)[:, [cols.index(n) for n in leaf_names]]
        alpha[name] = {h.names[v]: est.alpha_[v] for v in range(h.n_nodes)}
    # the duplicated pair shares the minimal node's weight evenly
    assert alpha["dup"]["a"] == pytest.approx(alpha["dup"]["a'"], abs=1e-6)
    assert alpha["dup"]["a"] + alpha["dup"]["a'"] == pytest.approx(alpha["minimal"]["a"], abs=1e-3)
    assert np.ptp(D["minimal"], axis=1).max() > 0.1  # the decision values do separate labels
    np.testing.assert_allclose(D["dup"], D["minimal"], atol=1e-4 * np.abs(D["minimal"]).max())


# --- bad hierarchies ----------------------------------------------------------------------------

BAD = {
    "cycle": ([[], [2], [1]], "cycle"),
    "several roots": ([[], [0], []], "found 2 nodes without parents"),
    "unreachable": ([[], [0], [3], [2]], "cycle"),
    "parent out of range": ([[], [0], [9]], "outside"),
    "self parent": ([[], [1]], "cycle"),
    "repeated parent": ([[], [0, 0]], "twice"),
    "no root": ([[1], [0]], "no node without parents"),
    "single node": ([[]], "at least one node"),
}


@pytest.mark.parametrize("case", list(BAD))
def test_bad_hierarchies_raise_clear_errors(case: str) -> None:
    parents, match = BAD[case]
    for call in (
        lambda: power_alpha(parents, 2.0),
        lambda: power_alpha(parents, 2.0, method="conic"),
        lambda: maxmin_alpha(parents),
        lambda: shared_alpha(parents, [1.0] * len(parents)),
    ):
        with pytest.raises(InvalidInputError, match=match):
            call()


def test_errors_name_nodes_of_a_named_hierarchy() -> None:
    with pytest.raises(InvalidInputError, match=r"one root, found 2.*'r', 'b'"):
        Hierarchy(["r", "a", "b"], [[], [0], []])
    with pytest.raises(InvalidParameterError, match="hierarchy is required"):
        power_alpha(None)
