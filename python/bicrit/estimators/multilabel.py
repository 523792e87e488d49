"""``MultiLabelSVM``: the fully pairwise multi-label model (structure ``multilabel``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import scipy.sparse as sp

from bicrit import datasets
from bicrit.errors import InvalidInputError, ModelFormatError, check_flag
from bicrit.estimators import validation
from bicrit.estimators.scaling import apply_scale, learn_scaling, saved_scale, scale_arrays
from bicrit.estimators.structured import StructuredSVM, _init_params

__all__ = ["MultiLabelSVM"]


class MultiLabelSVM(StructuredSVM):
    """Multi-label classification with a pairwise MRF over the labels
    (:class:`bicrit.structures.Multilabel`), trained with any surrogate.

    Accepts ``X`` dense or CSR (float32 or float64) with ``Y`` an ``(n, K)`` 0/1 array, or a
    :class:`bicrit.datasets.MultiLabelDataset` as ``X`` (then ``Y`` defaults to its labels).

    **score** is the *subset accuracy* (exact match of the whole label vector) — the metric the
    structured loss targets hardest; :meth:`report` gives every multi-label metric (example-based
    "Jaccard" accuracy — the thesis's "Acc" —, Hamming loss, micro/macro/example F1).

    Parameters
    ----------
    edges : {"auto", "full", "tree", "chain"} or list of (i, j), default "auto"
        Label pairs with a pairwise factor. ``"auto"``: the full graph (the thesis's model) up
        to 16 labels; beyond, the Chow–Liu tree of the training labels (maximum spanning tree
        of their pairwise mutual information), whose inference is an exact O(K) tree dynamic
        program — memory and time per example stay linear in K, where the full graph's grow
        with K². ``edges_kind_``/``edges_reason_`` (and ``history_``'s ``edges`` column) say
        which graph was used and why.
    inference : {"auto", "exact", "tree", "relaxed"}, default "auto"
        Exact enumeration up to 16 labels; beyond, the tree dynamic program when the edges form
        a forest, else the LP relaxation (QPBO).
    scale : bool, default True
        Standardize the features inside the model: dense columns to zero mean and unit variance,
        sparse columns to unit maximum absolute value (no centering, sparsity kept). The
        statistics are learned in ``fit`` and saved with the model. Unscaled features make SGD
        and BCFW diverge (docs/architecture.md, Learners); turn it off only for features
        already scaled.
    learner : str, default "auto"
        ``"auto"`` trains with BCFW (exact line search on each block, no step size) the
        surrogates that allow it — margin, slack, β, generalized, Micro-F1 — and with SGD
        the others (:func:`bicrit.learners.auto_learner`), as :class:`SequenceSVM` does.
        SGD's Pegasos steps are proportional to the subgradient, which slack rescaling scales
        by the task loss (up to K): on medical (45 labels) SGD's slack objective after 30
        epochs was 178× BCFW's at C = 0.1 and 3 600× at C = 1, and the fit predicted almost
        nothing (``benches/RESULTS.md``, "Why slack collapsed").

    Notes
    -----
    The other parameters are :class:`StructuredSVM`'s.

    Attributes: those of :class:`StructuredSVM`, ``scale_mean_``/``scale_std_`` (the scaling
    learned in ``fit``, None when off), ``label_names_`` (from a dataset, else None),
    ``edges_kind_`` (``"full"``, ``"tree"``, ``"chain"`` or ``"explicit"``) and
    ``edges_reason_`` (why that graph).
    """

    dataset_type = datasets.MultiLabelDataset
    # fitted attributes (set by fit, absent before)
    label_names_: list[str] | None
    scale_mean_: np.ndarray | None
    scale_std_: np.ndarray | None

    def __init__(
        self,
        edges: Any = "auto",
        inference: str = "auto",
        scale: bool = True,
        surrogate: Any = "margin",
        search: Any = "auto",
        learner: str = "auto",
        slack_norm: int = 1,
        C: float = 1.0,
        max_epochs: int = 50,
        tol: float | None = 1e-3,
        n_iter_no_change: int | None = 3,
        n_jobs: int | None = None,
        random_state: int | None = None,
        warm_start: bool = False,
        warmup: int | str = "auto",
        verbose: int = 0,
        surrogate_params: Mapping[str, Any] | None = None,
        search_params: Mapping[str, Any] | None = None,
        learner_params: Mapping[str, Any] | None = None,
    ) -> None:
        _init_params(self, locals())

    def _structure_spec(self) -> tuple[Any, dict[str, Any]]:
        edges = self.edges
        if isinstance(edges, np.ndarray):
            edges = edges.tolist()
        return "multilabel", {
            "edges": edges,
            "inference": self.inference,
            "label_names": getattr(self, "label_names_", None),
        }

    def _finish(self, result: Any, training: Any) -> None:
        super()._finish(result, training)
        self.edges_kind_ = training.structure.edges_kind_
        self.edges_reason_ = training.structure.edges_reason_

    def _check_params(self) -> None:
        super()._check_params()
        check_flag("scale", self.scale)

    def _split(self, X: Any, Y: Any) -> tuple[Any, Any]:
        from bicrit.datasets import MultiLabelDataset

        if isinstance(X, MultiLabelDataset):
            return X.X, X.Y if Y is None else Y
        return X, Y

    def _prepare_fit(
        self, X: Any, Y: Any, source: Any = None, shared: Mapping[str, Any] | None = None
    ) -> tuple[Any, Any]:
        names = getattr(source, "label_names", None)
        if names is not None:
            self.label_names_ = list(names)
        elif not (self.warm_start and hasattr(self, "coef_")):
            self.label_names_ = None
        if Y is None:
            raise InvalidInputError("Y is required (an (n, K) 0/1 array) unless X is a dataset")
        X = self._as_matrix(X, fitting=True)
        continuing = bool(self.warm_start) and hasattr(self, "coef_")
        if continuing and self.scale:  # the first fit's scaling is kept
            self._moments = None
        else:
            learn_scaling(self, X, shared)
        return self._transform(X), Y

    def _as_matrix(self, X: Any, fitting: bool = False) -> Any:
        X = validation.check_matrix(X, self, fitting=fitting)
        return sp.csr_array(X, dtype=np.float64) if sp.issparse(X) else X.astype(np.float64)

    def _transform(self, X: Any) -> Any:
        return apply_scale(X, getattr(self, "scale_mean_", None), getattr(self, "scale_std_", None))

    def _prepare_inputs(self, X: Any) -> Any:
        return self._transform(self._as_matrix(X))

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True  # Y is an (n, K) 0/1 indicator matrix
        tags.target_tags.single_output = False
        return tags

    def _extra_config(self) -> dict[str, Any]:
        return {
            "scaled": getattr(self, "scale_std_", None) is not None,
            "label_names": getattr(self, "label_names_", None),
            "edges_kind": getattr(self, "edges_kind_", None),
            "edges_reason": getattr(self, "edges_reason_", None),
        }

    def _extra_arrays(self) -> dict[str, np.ndarray]:
        return scale_arrays(getattr(self, "scale_mean_", None), getattr(self, "scale_std_", None))

    def _import_extra(self, config: Mapping[str, Any], arrays: Mapping[str, np.ndarray]) -> None:
        self.label_names_ = config.get("label_names")
        d, k = int(self.structure_.n_features), int(self.structure_.n_labels)
        self.scale_mean_, self.scale_std_ = saved_scale(arrays, d)
        names = self.label_names_
        if names is not None and (
            not isinstance(names, list)
            or len(names) != k
            or not all(isinstance(n, str) for n in names)
        ):
            raise ModelFormatError(f"label_names must be {k} strings, got {names!r:.80}")
        self.edges_kind_ = config.get("edges_kind")
        self.edges_reason_ = config.get("edges_reason")
        for name in ("edges_kind", "edges_reason"):
            value = config.get(name)
            if value is not None and not isinstance(value, str):
                raise ModelFormatError(f"{name} must be a string, got {value!r:.80}")
