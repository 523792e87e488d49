"""Node weights α of the Normalized Hierarchical SVM and the α step of Shared SVM (thesis
hierarchical chapter, §"Normalized Hierarchical SVM" and §"Optimizing with the shared norm";
docs/architecture.md, Hierarchies). Solvers in ``rust/bicrit-hierarchy``.

Every solver constrains, for each leaf ``l``, the sum of α over ``Ā(l)`` — the leaf with all its
ancestors, the root included (in a DAG the union of its paths to the root):

* :func:`power_alpha` — ``min Σ α_n^ρ`` with ``Σ_{Ā(l)} α = 1`` (eq. ``beta_1``), ρ > 1. On trees
  a closed form in O(M) (a budget recursion, stable for ρ close to 1); otherwise a conic program
  (clarabel: ρ = 2 as a QP, other ρ with power cones). ρ → 1 gives the duplication invariance of
  Theorem ``thm:invarinace``: a chain of single-child nodes shares one weight evenly.
* :func:`maxmin_alpha` — ρ = 1: ``max min_n α_n`` with the directional constraints
  ``α_n ≥ α_parent`` (eq. ``nbeta_1``); an LP whose optimum is not unique, so ties are broken by
  ``min Σ α²`` on the optimal face (a strictly convex QP: one answer, deterministic).
* ``T`` — the relaxed DAG constraint ``1 ≤ Σ_{Ā(l)} α ≤ T`` (eq. ``con:range``; the thesis uses
  T = 1.5 on its DAGs): pass ``relaxed=True`` (``T`` defaults to 1.5).
* :func:`shared_alpha` — Shared SVM's α step ``min Σ ‖U_n‖²/α_n`` with ``Σ_{Ā(l)} α ≤ 1`` (eq.
  ``optimize_alpha``): ArgminAlphaTree in O(M) on trees (Alg. ``argmin_alpha`` with the slips of
  docs/architecture.md, Hierarchies, fixed), a second-order-cone program on DAGs.
* :func:`flat_alpha` — α = 1 on the leaves, 0 elsewhere (the flat multiclass baseline).

**Labels ending at internal nodes.** The constraints are written over the leaves of the graph
given. To normalize labels that end at an internal node (the Clus HMC data), first hang virtual
leaves under those nodes with :func:`bicrit.hierarchy.add_virtual_leaves` and solve on the
returned hierarchy: the label ending at ``t`` becomes ``Ā(t) ∪ {v_t}``, whose α sums to 1.

The ``hierarchy`` argument is a :class:`bicrit.hierarchy.Hierarchy` or a plain parents list
(``parents[n]`` = parent ids of node n, empty or ``None`` for the root). Cycles, several roots
and nodes the root does not reach raise :class:`bicrit.errors.InvalidInputError` naming a node.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from bicrit import _native
from bicrit.errors import InvalidInputError, InvalidParameterError, check_choice
from bicrit.structures.hierarchy import graph_of

__all__ = [
    "THESIS_T",
    "flat_alpha",
    "keep_positive",
    "leaf_sums",
    "maxmin_alpha",
    "node_weights",
    "power_alpha",
    "shared_alpha",
]

THESIS_T = 1.5
"""T of the relaxed DAG constraint in the thesis's experiments (SWIKI)."""


def _t(relaxed: bool, T: float) -> float | None:
    if not relaxed:
        return None
    T = float(T)
    if not (np.isfinite(T) and T >= 1.0):
        raise InvalidParameterError(f"T must be finite and ≥ 1, got {T}")
    return T


def power_alpha(
    hierarchy: Any,
    rho: float = 2.0,
    *,
    relaxed: bool = False,
    T: float = THESIS_T,
    directional: bool = False,
    include_root: bool = True,
    method: str = "auto",
    root: int | None = None,
) -> np.ndarray:
    """NHSVM's node weights by the power problem ``min Σ α_n^ρ`` (see the module docstring).

    Parameters
    ----------
    rho:
        ρ > 1 (2 in the thesis's experiments; close to 1, e.g. 1.01, for the duplication
        invariance). ρ = 1 is :func:`maxmin_alpha`.
    relaxed, T:
        ``relaxed=True`` asks ``1 ≤ Σ_{Ā(l)} α ≤ T`` instead of ``= 1`` (eq. ``con:range``).
    directional:
        Add ``α_n ≥ α_parent`` on every edge ("ρ = 2 with directional constraints" of the
        thesis's experiments).
    include_root:
        Count the root (the thesis's problem). ``False`` fixes ``α_root = 0``: the root is in
        every label, so its block of φ cancels in every margin and its weight only rescales the
        others uniformly (the non-root weights with the root are ``(1 − α_root)`` times those
        without it — a change of the regularization constant). As ρ → 1 the root takes almost
        everything (at ρ = 1.01 the other weights are ~1e-30); without it the proportions stay
        at a usable scale.
    method:
        ``"auto"`` (the closed form on trees with exact sums and no directional constraints, else
        the conic program), ``"closed_form"`` or ``"conic"``.
    """
    check_choice("method", method, ("auto", "closed_form", "conic"))
    parents, r, names = graph_of(hierarchy, root)
    alpha, _, _ = _native.alpha_power(
        parents,
        r,
        float(rho),
        t=_t(relaxed, T),
        directional=bool(directional),
        include_root=bool(include_root),
        method=method,
        names=names,
    )
    return np.asarray(alpha)


def maxmin_alpha(
    hierarchy: Any,
    *,
    relaxed: bool = False,
    T: float = THESIS_T,
    directional: bool = True,
    include_root: bool = True,
    tie_break: bool = True,
    root: int | None = None,
) -> np.ndarray:
    """NHSVM's node weights for ρ = 1: ``max min_n α_n`` with the leaf sums and the directional
    constraints (eq. ``nbeta_1``), ties broken by ``min Σ α²`` on the optimal face
    (``tie_break=False`` returns the LP's interior-point answer instead). ``include_root=False``
    fixes ``α_root = 0`` and maximises the smallest non-root weight (see :func:`power_alpha`)."""
    parents, r, names = graph_of(hierarchy, root)
    alpha, _, _ = _native.alpha_maxmin(
        parents,
        r,
        t=_t(relaxed, T),
        directional=bool(directional),
        include_root=bool(include_root),
        tie_break=bool(tie_break),
        names=names,
    )
    return np.asarray(alpha)


def shared_alpha(
    hierarchy: Any,
    sq_norms: Sequence[float] | np.ndarray,
    *,
    method: str = "auto",
    root: int | None = None,
) -> np.ndarray:
    """Shared SVM's α step: ``argmin_α Σ_n sq_norms[n]/α_n`` s.t. ``Σ_{Ā(l)} α ≤ 1``, α ≥ 0, with
    ``sq_norms[n] = ‖U_n‖²`` (eq. ``optimize_alpha``).

    ``method="auto"``: ArgminAlphaTree (closed form, O(M)) on trees, the conic program on DAGs;
    ``"closed_form"`` or ``"conic"`` force one. On trees every leaf sum of the answer is exactly
    1; α_n = 0 where ``sq_norms[n] = 0`` (see :func:`keep_positive` for the alternating
    optimisation, where a zero weight would never move again).
    """
    parents, r, names = graph_of(hierarchy, root)
    n = np.asarray(sq_norms, dtype=np.float64).ravel()
    alpha, _, _ = _native.alpha_shared(parents, r, n.tolist(), method=method, names=names)
    return np.asarray(alpha)


def flat_alpha(hierarchy: Any, *, root: int | None = None) -> np.ndarray:
    """α = 1 on the leaves and 0 elsewhere: the flat multiclass model over leaves."""
    parents, _, _ = graph_of(hierarchy, root)
    is_parent = np.zeros(len(parents), dtype=bool)
    for ps in parents:
        is_parent[list(ps)] = True
    return (~is_parent).astype(np.float64)


def node_weights(
    hierarchy: Any,
    rho: float = 2.0,
    *,
    relaxed: bool = False,
    T: float = THESIS_T,
    directional: bool | None = None,
    include_root: bool = True,
    root: int | None = None,
) -> np.ndarray:
    """NHSVM's α for a given ρ: :func:`maxmin_alpha` for ρ = 1 (directional constraints on
    unless ``directional=False``), :func:`power_alpha` for ρ > 1 (directional constraints off
    unless ``directional=True``)."""
    rho = float(rho)
    if rho == 1.0:
        d = True if directional is None else bool(directional)
        return maxmin_alpha(
            hierarchy, directional=d, relaxed=relaxed, T=T, include_root=include_root, root=root
        )
    d = False if directional is None else bool(directional)
    return power_alpha(
        hierarchy, rho, directional=d, relaxed=relaxed, T=T, include_root=include_root, root=root
    )


def leaf_sums(hierarchy: Any, alpha: Sequence[float] | np.ndarray) -> np.ndarray:
    """``Σ_{n ∈ Ā(l)} α_n`` for every leaf ``l`` of a :class:`~bicrit.hierarchy.Hierarchy`, in the
    order of ``hierarchy.leaves``."""
    a = np.asarray(alpha, dtype=np.float64)
    if a.shape != (hierarchy.n_nodes,):
        raise InvalidInputError(f"alpha has shape {a.shape}, expected ({hierarchy.n_nodes},)")
    anc = hierarchy.ancestor_matrix
    return np.asarray(anc[hierarchy.leaves] @ a, dtype=np.float64)


def keep_positive(
    alpha: Sequence[float] | np.ndarray, reference: Sequence[float] | np.ndarray, eps: float = 1e-3
) -> np.ndarray:
    """``(1 − eps)·alpha + eps·reference``: a weight vector that stays feasible (both inputs
    satisfy the same leaf-sum constraints, a convex set) and positive wherever ``reference`` is
    — the guard Shared SVM's alternating optimisation needs (α_n = 0 is
    absorbing under U = √α·V; use NHSVM's ρ = 2 weights as the reference)."""
    eps = float(eps)
    if not 0.0 <= eps <= 1.0:
        raise InvalidParameterError(f"eps must be in [0, 1], got {eps}")
    a = np.asarray(alpha, dtype=np.float64)
    r = np.asarray(reference, dtype=np.float64)
    if a.shape != r.shape:
        raise InvalidInputError(f"alpha has shape {a.shape} but reference has {r.shape}")
    return (1.0 - eps) * a + eps * r
