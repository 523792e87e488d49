"""What ``"auto"`` means for the search and the learner: the one place these choices are made
(the estimators, the hierarchy models and the command line all ask here)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["auto_learner", "auto_search"]


def auto_search(surrogate: Any, capabilities: Mapping[str, Any], learner: str) -> str:
    """The search ``search="auto"`` picks: the warm-started convex hull search, the one search
    that needs nothing beyond the λ-oracle and is exact over the convex hull of the labels for
    every quasi-concave increasing ψ (thesis Alg. ``alg:convexhull_search``); for margin
    rescaling its first λ = 1 query is the exact answer. ``frontier`` (exact integral answers in
    one call) is not picked: on CoNLL-2002 its epochs cost more than the hull search's
    (``benches/RESULTS-sequence.md``)."""
    return "convex-hull"


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
