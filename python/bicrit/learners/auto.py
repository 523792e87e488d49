"""What ``"auto"`` means for the search and the learner: the one place these choices are made
(the estimators, the hierarchy models and the command line all ask here)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["auto_learner", "auto_search"]


def auto_search(surrogate: Any, structure: Any) -> str:
    """The search ``search="auto"`` picks for ``surrogate`` on ``structure`` (its registry
    ``name`` and oracle ``capabilities``), decided natively in one place
    (``bicrit_structures::catalog::auto_search``, also behind ``bicrit.scores``):

    * margin rescaling: the convex hull search, whose first λ = 1 query is exact (one call);
    * ``frontier`` where the structure gives the frontier by loss value in one pass
      (multiclass, multi-label with exact inference) and g is the task loss: the exact integral
      optimum in one call (the hull search needs a certificate call whenever the hull moved);
    * otherwise the warm-started convex hull search (thesis Alg. ``alg:convexhull_search``),
      exact over the convex hull of the labels for every quasi-concave increasing ψ; on chains
      its calls cost less than one frontier DP (``benches/RESULTS.md``, "Epoch costs")."""
    from bicrit import _native

    caps: Mapping[str, Any] = dict(getattr(structure, "capabilities", {}) or {})
    return _native.auto_search(str(getattr(structure, "name", "")), surrogate, caps)


def auto_learner(surrogate: Any, *, distributed: bool = False) -> str:
    """The learner ``learner="auto"`` picks: ``bcfw`` for the surrogates that are a maximum of
    functions affine in w (``affine_in_h``: margin, slack, β, generalized, Micro-F1 — each corner
    of the loss then has an intercept, which BCFW's dual needs), ``sgd`` otherwise (ProbLoss,
    log loss, surrogates that do not say).

    On a cluster (``distributed``, :mod:`bicrit.dask`) the same: BCFW runs there as CoCoA+
    (local BCFW passes whose changes are added), which reaches a certified gap in fewer rounds
    than the distributed 1-slack cutting plane needs (``benches/RESULTS-distributed.md``), and
    SGD as parameter mixing."""
    return "bcfw" if bool(getattr(surrogate, "affine_in_h", False)) else "sgd"
