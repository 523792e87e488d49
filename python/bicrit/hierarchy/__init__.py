"""Hierarchy: label hierarchies (trees and DAGs) for hierarchical classification
(docs/architecture.md, Hierarchies).

* :class:`Hierarchy` — an immutable, validated rooted tree or DAG of named nodes;
* node weights α of NHSVM (:func:`power_alpha`, :func:`maxmin_alpha`, :func:`node_weights`,
  :func:`flat_alpha`) and the α step of Shared SVM (:func:`shared_alpha`), see
  :mod:`bicrit.hierarchy.alpha`;
* the normalized model pieces built from α (:func:`normalized_structure`,
  :func:`normalized_params`), see :mod:`bicrit.hierarchy.normalized`;
* calibrated, hierarchy-coherent node probabilities of a fitted ``HierarchicalSVM``
  (:class:`NodeCalibration`), see :mod:`bicrit.hierarchy.calibration`;
* label conventions (:func:`with_root`, :func:`without_root`, :func:`terminals`,
  :func:`check_labels`) and the virtual-leaf transform (:func:`add_virtual_leaves`), see
  :mod:`bicrit.hierarchy.labels`.
"""

from __future__ import annotations

from bicrit.hierarchy.alpha import (
    THESIS_T,
    flat_alpha,
    keep_positive,
    leaf_sums,
    maxmin_alpha,
    node_weights,
    power_alpha,
    shared_alpha,
)
from bicrit.hierarchy.calibration import NodeCalibration, platt_fit
from bicrit.hierarchy.graph import Hierarchy
from bicrit.hierarchy.labels import (
    VirtualLeaves,
    add_virtual_leaves,
    check_labels,
    terminals,
    with_root,
    without_root,
)
from bicrit.hierarchy.normalized import normalized_params, normalized_structure

__all__ = [
    "THESIS_T",
    "Hierarchy",
    "NodeCalibration",
    "VirtualLeaves",
    "add_virtual_leaves",
    "check_labels",
    "flat_alpha",
    "keep_positive",
    "leaf_sums",
    "maxmin_alpha",
    "node_weights",
    "normalized_params",
    "normalized_structure",
    "platt_fit",
    "power_alpha",
    "shared_alpha",
    "terminals",
    "with_root",
    "without_root",
]
