"""bicrit: structured SVMs with any bi-criteria surrogate loss, at margin-rescaling speed.

The public API is listed in ``__all__``; everything else is private. Families mirror the design
and the Rust crates: surrogates, searches, structures, learners, hierarchy. The data loaders
(``bicrit.datasets``), metrics (``bicrit.metrics``), the hierarchy graph (``bicrit.hierarchy``) and
the estimators (``bicrit.StructuredSVM``, ``MultiLabelSVM``, ``SequenceSVM``, ``DependencySVM``,
``bicrit.load``; :mod:`bicrit.estimators`) are imported on first use.
"""

from __future__ import annotations

import importlib
import importlib.metadata
from typing import Any

from bicrit import errors, registry
from bicrit.errors import BicritError
from bicrit.searches import Cone, PointSetOracle, SearchResult, search
from bicrit.structures import structure
from bicrit.surrogates import Surrogate, surrogate

#: The package version. Its one source is the Cargo workspace's ``version`` (Cargo.toml): maturin
#: writes it into the package metadata read here, and compiles it into ``_native.__version__``.
__version__: str = importlib.metadata.version("bicrit")

_LAZY = ("datasets", "estimators", "hierarchy", "metrics", "scores")
_ESTIMATORS = ("StructuredSVM", "MultiLabelSVM", "SequenceSVM", "DependencySVM", "load")

__all__ = [
    "BicritError",
    "Cone",
    "DependencySVM",
    "HierarchicalSVM",
    "MultiLabelSVM",
    "PointSetOracle",
    "SearchResult",
    "SequenceSVM",
    "StructuredSVM",
    "Surrogate",
    "__version__",
    "datasets",
    "errors",
    "estimators",
    "hierarchy",
    "load",
    "metrics",
    "registry",
    "scores",
    "search",
    "structure",
    "surrogate",
]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return importlib.import_module(f"bicrit.{name}")
    if name in _ESTIMATORS:
        return getattr(importlib.import_module("bicrit.estimators"), name)
    if name == "HierarchicalSVM":
        return importlib.import_module("bicrit.hierarchy.estimator").HierarchicalSVM
    raise AttributeError(f"module 'bicrit' has no attribute {name!r}")
