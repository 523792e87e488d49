"""The pieces of the normalized models built from node weights α (thesis §"Normalized
Hierarchical SVM model"; docs/architecture.md, Hierarchies), on top of the ``hierarchy`` structure:

* **normalized feature map** (eq. ``nclassa``): per-node feature scale ``s_n = √α_n``, so that
  ``‖Λ̃(y)‖ = 1`` for every leaf-terminated single label;
* **normalized loss** (eq. ``wserror``): ``√(Σ_{n ∈ y △ y_i} α_n) = ‖Λ̃(y) − Λ̃(y_i)‖`` — the
  structure's ``loss="normalized"`` with ``node_loss_weight = α``. It does not decompose over
  nodes, so it exists for single labels only, where the oracle enumerates the leaf paths;
* **multi-label**: the decomposable leaf-Hamming approximation ``Δ_L`` of §"Calculating the most
  violating label" (the structure's ``loss="leaf"`` with unit weights), with the same
  normalized feature map;
* **NHSVM3** (eq. ``NHSVM3``): ``max_{y ≠ y_i} w·(Λ̃(y) − Λ̃(y_i))⊗x / ‖Λ̃(y) − Λ̃(y_i)‖ + 1``,
  clipped at 0 — :meth:`bicrit.structures.hierarchy.HierarchyStructure.ratio_oracle` on the
  single-label normalized structure; trained by the native SGD learner
  ``bicrit._native.Nhsvm3Trainer`` (``rust/bicrit-hierarchy/src/nhsvm3.rs``), which
  ``HierarchicalSVM(model="nhsvm3")`` runs.

HSVM is the same structure with ``s_n = 1`` and the node Hamming loss; the flat baseline is
``alpha = flat_alpha(h)`` (rows of internal nodes scaled by 0).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from bicrit.errors import InvalidInputError, InvalidParameterError, check_choice
from bicrit.structures.hierarchy import HierarchyStructure

__all__ = ["normalized_params", "normalized_structure"]


def normalized_params(
    alpha: Sequence[float] | np.ndarray, *, multilabel: bool = False, loss: str | None = None
) -> dict[str, Any]:
    """Keyword arguments of :class:`HierarchyStructure` for NHSVM with node weights ``alpha``:
    ``node_scale = √α`` and, by default, ``loss="normalized"`` with ``node_loss_weight = α``
    (single label) or ``loss="leaf"`` with unit weights (multi-label, the thesis's decomposable
    approximation). ``loss="node"`` gives the α-weighted node Hamming (no square root)."""
    a = np.asarray(alpha, dtype=np.float64)
    if a.ndim != 1 or not np.all(np.isfinite(a)) or np.any(a < 0):
        raise InvalidInputError("alpha must be a 1-D array of finite, non-negative node weights")
    if loss is None:
        loss = "leaf" if multilabel else "normalized"
    check_choice("loss", loss, ("normalized", "leaf", "node"))
    if loss == "normalized" and multilabel:
        raise InvalidParameterError(
            "the normalized loss does not decompose over nodes: multi-label NHSVM uses the "
            "leaf-Hamming approximation (loss='leaf')"
        )
    weight = np.ones_like(a) if loss == "leaf" else a.copy()
    return {"node_scale": np.sqrt(a), "node_loss_weight": weight, "loss": loss}


def normalized_structure(
    hierarchy: Any,
    alpha: Sequence[float] | np.ndarray,
    *,
    multilabel: bool = False,
    loss: str | None = None,
    labels: str = "leaves",
    n_features: int | None = None,
    layout: str = "node",
) -> HierarchyStructure:
    """The ``hierarchy`` structure of NHSVM with node weights ``alpha`` (see
    :func:`normalized_params`); leaf-terminated labels by default (the thesis's space — use
    :func:`bicrit.hierarchy.add_virtual_leaves` for data whose labels end at internal nodes)."""
    n_nodes = hierarchy.n_nodes if hasattr(hierarchy, "n_nodes") else len(hierarchy)
    a = np.asarray(alpha, dtype=np.float64)
    if a.shape != (n_nodes,):
        raise InvalidInputError(f"alpha has shape {a.shape} for a hierarchy of {n_nodes} nodes")
    return HierarchyStructure(
        hierarchy,
        labels=labels,
        multilabel=multilabel,
        n_features=n_features,
        layout=layout,
        **normalized_params(a, multilabel=multilabel, loss=loss),
    )
