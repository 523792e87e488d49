"""Estimators: structured SVMs with the scikit-learn contract; each is a ``StructuredSVM`` over
one structure, and every fit runs through the one fit driver (:mod:`bicrit.learners.fit`).

==================== ============ ================================== ==========================
estimator            structure    inputs                             ``score``
==================== ============ ================================== ==========================
``StructuredSVM``    any (name or any the structure takes            the structure's headline
                     object)                                         metric (see the class)
``MultiLabelSVM``    multilabel   dense/CSR X, (n, K) 0/1 Y, or a    subset accuracy
                                  ``MultiLabelDataset``
``SequenceSVM``      chain        token lists, ``SequenceDataset``,  entity micro-F1 (IOB
                                  ``HashedSequences``, (M, offsets)  tags), else token accuracy
``DependencySVM``    dependency   ``TreebankDataset``, sentences     UAS
``HierarchicalSVM``  hierarchy    dense/CSR X + node sets, or a      hierarchical F1 (multi-
                                  hierarchy dataset                  label), else exact match
==================== ============ ================================== ==========================

Every estimator saves to and loads from bicrit's pickle-free model file
(:mod:`bicrit.estimators.model_format`, ``docs/model-format.md``): ``est.save(path)``,
``bicrit.load(path)``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bicrit.estimators.dependency import DependencySVM
from bicrit.estimators.model_format import (
    ESTIMATOR_CLASSES,
    load_model,
    register_estimator,
    save_model,
)
from bicrit.estimators.multilabel import MultiLabelSVM
from bicrit.estimators.sequence import SequenceSVM
from bicrit.estimators.structured import StructuredSVM
from bicrit.learners.fit import FeatureScaleWarning, FitInterruptedWarning

__all__ = [
    "ESTIMATOR_CLASSES",
    "DependencySVM",
    "FeatureScaleWarning",
    "FitInterruptedWarning",
    "HierarchicalSVM",
    "MultiLabelSVM",
    "SequenceSVM",
    "StructuredSVM",
    "load",
    "load_model",
    "register_estimator",
    "save_model",
]

register_estimator("StructuredSVM", StructuredSVM)
register_estimator("MultiLabelSVM", MultiLabelSVM)
register_estimator("SequenceSVM", SequenceSVM)
register_estimator("DependencySVM", DependencySVM)


def __getattr__(name: str) -> Any:
    if name == "HierarchicalSVM":  # defined in the hierarchy family, which imports this package
        from bicrit.hierarchy.estimator import HierarchicalSVM

        return HierarchicalSVM
    raise AttributeError(f"module 'bicrit.estimators' has no attribute {name!r}")


def load(path: str | Path) -> Any:
    """Loads any estimator saved with ``save`` (``bicrit.load``)."""
    return load_model(path)


# HierarchicalSVM registers itself with the model format when its module is imported; import it
# here so that every estimator class is known before a model file is read (a partially imported
# module is enough when the import started from the hierarchy side).
from bicrit.hierarchy import estimator as _hierarchy_estimator  # noqa: E402, F401
