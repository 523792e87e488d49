"""``HierarchicalSVM``: flat SVM, HSVM, NHSVM, NHSVM3 and Shared SVM as one
:class:`~bicrit.StructuredSVM` over the ``hierarchy`` structure (thesis hierarchical chapter).
The models are the strategies of :mod:`bicrit.hierarchy.models`; validation, the fit driver,
history, save/load and C="auto" are the :class:`~bicrit.StructuredSVM`'s.

**Objective and C.** Every model minimises ``½‖V‖² + C·Σ_i ℓ_i`` (scikit-learn's C multiplies
the loss). The thesis writes ``λ Σ‖W_n‖² + Σ ℓ_i``, so ``C = 1/(2λ)``; its grid
λ ∈ {1e-8 … 1e2} is C ∈ {5e-3 … 5e7}.

**Labels.** ``Y`` is a sequence of label sets: node ids of the hierarchy, ancestor-closed, with or
without the root (the convention of :mod:`bicrit.datasets`' Clus HMC loader and synthetic
generators), or a 1-D array of node ids, one terminal node per instance (its ancestors are
added). A hierarchy dataset as ``X`` brings its labels and its hierarchy. Predictions come back
in the loader's convention: sorted int64 ids, root excluded. ``labels`` chooses the label space:

* ``"auto"`` (default) — leaf-terminated labels; an internal node that ends some training label
  gets a virtual leaf under it (:func:`~bicrit.hierarchy.add_virtual_leaves`), so data like the
  Clus HMC sets train every model, and predictions ending at a virtual leaf map back to its
  parent;
* ``"leaves"`` — the thesis's space as is: a training label ending at an internal node raises
  :class:`~bicrit.errors.InvalidInputError`;
* ``"any"`` — every ancestor-closed set. α's constraints are written over the leaves (and the
  virtual leaves), so sets ending elsewhere are a relaxation of the normalized models' space.
  Not for ``nhsvm3``.

Multi-label on a DAG with ``labels="auto"`` trains and predicts in the ancestor-closed space
(exact by one min-cut per inference, after the virtual leaves are added): the leaf-terminated
space needs an LP relaxation, and an integer program when it is fractional, for every inference,
far slower on large DAGs (``benches/hierarchy/RESULTS.md``). Pass ``labels="leaves"`` for it.

``multilabel=None`` detects it: multi-label as soon as a training label has two terminals.
Multi-label inference is exact (O(M) DP on trees, min-cut / LP+IP on DAGs).

**Scores.** :meth:`HierarchicalSVM.score` is the hierarchical micro-F1 (Kiritchenko et al.,
root excluded) for multi-label models and exact-match accuracy for single-label ones.
:meth:`decision_function` gives, for every class in ``classes_`` (the leaves of the label space,
as their original node ids — a virtual leaf is reported as its parent), the score
``Σ_{n ∈ Ā(l)} (U_n·x + b_n)`` of the path to it. :meth:`node_scores` (``decision_function(X,
level="node")``) gives every node's max-marginal margin, exact and coherent with the hierarchy;
:class:`~bicrit.hierarchy.NodeCalibration` turns it into probabilities on held-out data
(docs/hierarchy-scores.md).

**Scale.** ``X`` may be dense or ``scipy.sparse`` (float32 kept as the input allows; the native
learners take CSR rows); it is scaled by default (``scale``). Weights are M·d float64 values in
the learner; for LSHTC-sized problems hash the features to ``n_hashed_features`` columns (signed
hashing, the model then keeps ``M·n_hashed_features`` weights). ``layout="auto"`` uses the
structure's feature-major layout when the hierarchy has more than 200 nodes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import scipy.sparse as sp

from bicrit.datasets.clus_hmc import HierarchyDataset
from bicrit.errors import (
    IncompatibleError,
    InvalidInputError,
    InvalidParameterError,
    check_choice,
    check_flag,
)
from bicrit.estimators import validation
from bicrit.estimators.model_format import register_estimator
from bicrit.estimators.scaling import apply_scale, learn_scaling, saved_scale, scale_arrays
from bicrit.estimators.structured import StructuredSVM, _init_params
from bicrit.hierarchy.graph import Hierarchy
from bicrit.hierarchy.labels import add_virtual_leaves, check_labels, terminals
from bicrit.hierarchy.models import MODELS, MULTILABEL_LOSSES, model
from bicrit.hierarchy.shape import LabelShape
from bicrit.learners.fit import FitResult, Training

__all__ = ["MODELS", "SSVM_LOSSES", "HierarchicalSVM"]

SSVM_LOSSES = ("normalized", "hamming", "zero_one")
"""Shared SVM's fixed single-label losses (``ssvm_loss``)."""

_PREDICT_CHUNK = 2048  # rows scored at once (keeps the n × M score block small)


def _as_hierarchy(hierarchy: Any) -> Hierarchy:
    if isinstance(hierarchy, Hierarchy):
        return hierarchy
    inner = getattr(hierarchy, "hierarchy", None)
    if isinstance(inner, Hierarchy):  # a HierarchyDataset (Clus HMC, synthetic)
        return inner
    raise InvalidParameterError(
        "hierarchy must be a bicrit.hierarchy.Hierarchy or a dataset with a .hierarchy "
        f"(e.g. bicrit.datasets.load('clus_hmc/...')), got {type(hierarchy).__name__}"
    )


def _hash_columns(X: sp.csr_array, n_out: int) -> sp.csr_array:
    """Signed feature hashing of CSR columns onto ``n_out`` columns (a fixed multiplicative
    hash, so train and test hash alike)."""
    j = X.indices.astype(np.uint64)
    h = (j * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(16)
    cols = (h % np.uint64(n_out)).astype(np.int64)
    sign = np.where((h >> np.uint64(40)) & np.uint64(1), -1.0, 1.0).astype(X.dtype)
    out = sp.csr_array((X.data * sign, cols, X.indptr), shape=(X.shape[0], n_out))
    out.sum_duplicates()
    return out


def _is_hierarchy_dataset(X: Any) -> bool:
    return isinstance(getattr(X, "hierarchy", None), Hierarchy) and hasattr(X, "Y")


class HierarchicalSVM(StructuredSVM):
    """Hierarchical classification with flat SVM, HSVM, NHSVM, NHSVM3 or Shared SVM (see the
    module docstring for the models, the label conventions and C).

    Parameters
    ----------
    hierarchy:
        A :class:`~bicrit.hierarchy.Hierarchy`, or a dataset with a ``.hierarchy`` (the Clus HMC
        loader's :class:`~bicrit.datasets.HierarchyDataset`, the synthetic generators); ``None``
        takes the hierarchy of the dataset passed to :meth:`fit`.
    model:
        ``"flat"``, ``"hsvm"``, ``"nhsvm"``, ``"nhsvm3"`` or ``"ssvm"``
        (:mod:`bicrit.hierarchy.models`).
    rho:
        ρ of NHSVM's power problem (``nhsvm``, ``nhsvm3``; ρ = 1: the max-min LP). SSVM starts
        from ρ = 2.
    T:
        ``None``: leaf sums of α equal to 1; a float ≥ 1: the relaxed ``1 ≤ Σ ≤ T`` (DAGs; the
        thesis uses 1.5).
    include_root:
        Count the root in NHSVM's α problem (the thesis's). The root is in every label, so its
        block cancels in every margin; ``False`` fixes α_root = 0, which only rescales the other
        weights — use it for ρ close to 1, where the root would take almost everything
        (:func:`~bicrit.hierarchy.power_alpha`). SSVM ignores it.
    multilabel:
        ``None`` detects it from the training labels.
    labels:
        ``"auto"``, ``"leaves"`` or ``"any"`` (module docstring).
    alpha_every, max_alternations, alpha_eps:
        Shared SVM: epochs between α steps, largest number of α steps, positivity guard.
    ssvm_loss:
        Shared SVM's fixed single-label loss Δ(l, l_i) (eq. ``SSVMp``): ``"normalized"`` (the
        normalized loss at the starting α), ``"hamming"`` (node Hamming, un-normalized) or
        ``"zero_one"`` (1 for any other leaf).
    multilabel_loss:
        Task loss of multi-label models (:mod:`bicrit.hierarchy.models`): ``"auto"`` (the
        model's own: node Hamming for HSVM, the thesis's leaf Hamming for the others),
        ``"leaf"``, ``"node"`` or ``"weighted"`` (node Hamming with class-balanced costs per
        node from the training frequencies, for unbalanced hierarchies).
    n_hashed_features:
        Hash the input columns onto this many (``None``: no hashing).
    layout:
        ``"auto"``, ``"node"`` or ``"feature"`` (the ``hierarchy`` structure's weight layout).
    scale:
        Standardise dense features with the training mean and standard deviation (sparse ones:
        divide by the largest absolute value), learned in ``fit`` and saved with the model
        (:mod:`bicrit.estimators.scaling`). SGD and BCFW take steps proportional to the features.
    fit_intercept, intercept_scaling:
        Give every node a bias: a constant feature of value ``intercept_scaling`` is appended
        (after scaling and hashing), so node n scores ``U_n·x + b_n`` with ``b_n`` in
        ``intercept_``. As in scikit-learn's ``LinearSVC``, the bias is regularised with the
        weights; a larger ``intercept_scaling`` regularises it less. Without a bias a node's
        score has mean 0 over standardised features, so about half the nodes score above 0 on
        any instance (``benches/hierarchy/results_clus_hmc.md``).
    batch_size:
        Instances per SGD step (the native learner's and NHSVM3's).

    Notes
    -----
    The other parameters are :class:`~bicrit.StructuredSVM`'s (``max_epochs`` counts epochs per
    alternation for ``ssvm``: ``alpha_every``; ``nhsvm3`` needs ``surrogate="margin"`` and
    ``learner="sgd"``).

    Attributes
    ----------
    coef_ : ndarray of shape (``n_nodes_``, n_features)
        Effective node rows ``U_n = √α_n·V_n`` (``V_n`` for HSVM) over the scaled (and hashed)
        features: the score of a label is the sum of ``U_n·x + b_n`` over its nodes.
    intercept_ : ndarray of shape (``n_nodes_``,)
        The node biases ``b_n`` (zeros without ``fit_intercept``).
    scale_mean_, scale_std_ : ndarray or None
        The feature scaling learned in ``fit`` (``None`` without ``scale``; ``scale_mean_`` is
        ``None`` for sparse features).
    alpha_ : ndarray of shape (``n_nodes_``,)
        Node weights (the feature scale squared; 1 for HSVM).
    hierarchy_ : Hierarchy
        The hierarchy the model was trained on (with virtual leaves when some were added).
    classes_ : ndarray
        Leaves of the label space as original node ids (the columns of decision_function).
    multilabel_ : bool
    history_ : polars.DataFrame
        One row per epoch (``phase="v"``, ``round`` the alternation) and, for ``ssvm``, per α
        step (``phase="alpha"``, ``objective`` exact at the new α and ``V``).
    """

    dataset_type = HierarchyDataset
    # fitted attributes (set by fit, absent before)
    scale_mean_: np.ndarray | None
    scale_std_: np.ndarray | None

    def __init__(
        self,
        hierarchy: Any = None,
        model: str = "nhsvm",
        rho: float = 2.0,
        T: float | None = None,
        include_root: bool = True,
        surrogate: Any = "margin",
        search: Any = "auto",
        learner: str = "sgd",
        C: float | str = 1.0,
        max_epochs: int = 30,
        tol: float | None = 1e-3,
        n_iter_no_change: int | None = 3,
        n_jobs: int | None = None,
        random_state: int | None = None,
        multilabel: bool | None = None,
        labels: str = "auto",
        alpha_every: int = 5,
        max_alternations: int = 10,
        alpha_eps: float = 1e-3,
        ssvm_loss: str = "normalized",
        multilabel_loss: str = "auto",
        n_hashed_features: int | None = None,
        layout: str = "auto",
        scale: bool = True,
        fit_intercept: bool = True,
        intercept_scaling: float = 1.0,
        batch_size: int = 1,
        warm_start: bool = False,
        warmup: int | str = "auto",
        verbose: int = 0,
        surrogate_params: Mapping[str, Any] | None = None,
        search_params: Mapping[str, Any] | None = None,
        learner_params: Mapping[str, Any] | None = None,
    ) -> None:
        _init_params(self, locals())

    # ------------------------------------------------------------------ validation

    def _check_params(self) -> None:
        super()._check_params()
        m = model(self.model)
        check_choice("labels", self.labels, ("auto", "leaves", "any"))
        check_choice("layout", self.layout, ("auto", "node", "feature"))
        check_choice("multilabel_loss", self.multilabel_loss, MULTILABEL_LOSSES)
        check_choice("ssvm_loss", self.ssvm_loss, SSVM_LOSSES)
        check_flag("scale", self.scale)
        check_flag("fit_intercept", self.fit_intercept)
        validation.check_counts(self, "alpha_every", "max_alternations", "batch_size")
        r = self.rho
        if isinstance(r, bool) or not isinstance(r, int | float) or not (1.0 <= r < np.inf):
            raise InvalidParameterError(f"rho must be a number ≥ 1, got {r!r}")
        if self.T is not None and not (
            isinstance(self.T, int | float) and np.isfinite(self.T) and self.T >= 1
        ):
            raise InvalidParameterError(f"T must be None or a finite number ≥ 1, got {self.T!r}")
        if not (isinstance(self.alpha_eps, int | float) and 0 <= self.alpha_eps < 1):
            raise InvalidParameterError(f"alpha_eps must be in [0, 1), got {self.alpha_eps!r}")
        c = self.intercept_scaling
        if isinstance(c, bool) or not isinstance(c, int | float) or not (0 < c < np.inf):
            raise InvalidParameterError(f"intercept_scaling must be a number > 0, got {c!r}")
        nh = self.n_hashed_features
        if nh is not None and (
            isinstance(nh, bool) or not isinstance(nh, int) or not 1 <= nh < 2**31
        ):
            raise InvalidParameterError(
                f"n_hashed_features must be None or an int in [1, 2**31), got {nh!r}"
            )
        m.check(self)

    def _hierarchy0(self, source: Any = None) -> Hierarchy:
        """The hierarchy the labels are written in: ``hierarchy``, else the dataset's."""
        if self.hierarchy is None:
            if source is not None and _is_hierarchy_dataset(source):
                return _as_hierarchy(source.hierarchy)
            raise InvalidParameterError(
                "hierarchy is required: pass a Hierarchy, or fit on a hierarchy dataset"
            )
        return _as_hierarchy(self.hierarchy)

    def _check_x(
        self, X: Any, *, fitting: bool, shared: Mapping[str, Any] | None = None
    ) -> sp.csr_array:
        """``X`` checked and in the structure's form: scaled (``scale``; the scaling is learned
        when ``fitting``, from the ``shared`` moments of all the training data when given),
        hashed (``n_hashed_features``), with the constant column of the node biases
        (``fit_intercept``), as CSR."""
        try:
            X = validation.check_matrix(X, self, fitting=fitting)
        except InvalidInputError as exc:
            if "NaN" in str(exc) or "infinity" in str(exc):
                raise InvalidInputError(
                    f"{exc} (the Clus HMC sets have missing features: load them with impute='mean')"
                ) from None
            raise
        if fitting:
            learn_scaling(self, X, shared)
        X = apply_scale(X, self.scale_mean_, self.scale_std_)
        Xc = sp.csr_array(X)  # float32 kept as given
        if self.n_hashed_features is not None:
            Xc = _hash_columns(Xc, int(self.n_hashed_features))
        if fitting:
            self.intercept_scaling_ = float(self.intercept_scaling) if self.fit_intercept else None
        if self.intercept_scaling_ is not None:
            ones = np.full((Xc.shape[0], 1), self.intercept_scaling_, dtype=Xc.dtype)
            Xc = sp.csr_array(sp.hstack([Xc, sp.csr_array(ones)], format="csr"))
        return Xc

    def _takes_matrix(self) -> bool:
        return True

    def _check_y(self, h: Hierarchy, Y: Any, n: int) -> list[np.ndarray]:
        if isinstance(Y, np.ndarray) and Y.ndim == 1 and Y.dtype.kind == "f":
            if not np.all(np.isfinite(Y) & (np.round(Y) == Y)):
                raise InvalidInputError("Y holds non-integer node ids")
            Y = Y.astype(np.int64)
        if isinstance(Y, np.ndarray) and Y.ndim == 1 and np.issubdtype(Y.dtype, np.integer):
            ids = Y.tolist()
            for i, t in enumerate(ids):
                if not 0 <= t < h.n_nodes:
                    raise InvalidInputError(f"Y[{i}] = {t} is not a node id (0..{h.n_nodes - 1})")
            out = h.closures([[t] for t in ids])
        else:
            try:
                out = [np.unique(np.asarray(list(y), dtype=np.int64)) for y in Y]
            except (TypeError, ValueError):
                raise InvalidInputError(
                    "Unknown label type: Y must be a sequence of label sets (node-id sequences) "
                    "or a 1-D int array of terminal node ids"
                ) from None
            out = [y[y != h.root] for y in out]
            check_labels(h, out, leaves=False)
        if len(out) != n:
            raise InvalidInputError(f"X has {n} instances but Y has {len(out)} labels")
        for i, y in enumerate(out):
            if y.size == 0:
                raise InvalidInputError(
                    f"Y[{i}] is empty (the root alone): every instance needs a label below the root"
                )
        return out

    # ------------------------------------------------------------------ hooks of StructuredSVM

    def _split(self, X: Any, Y: Any) -> tuple[Any, Any]:
        if _is_hierarchy_dataset(X):
            return X.X, X.Y if Y is None else Y
        return X, Y

    def _prepare_fit(
        self, X: Any, Y: Any, source: Any = None, shared: Mapping[str, Any] | None = None
    ) -> tuple[Any, Any]:
        if Y is None:
            raise InvalidInputError("Y is required (label sets) unless X is a hierarchy dataset")
        if bool(self.warm_start) and hasattr(self, "coef_"):
            raise InvalidParameterError(
                "warm_start is not supported by HierarchicalSVM: the label space and the node "
                "weights are learned from each training set"
            )
        h0 = self._hierarchy0(source)
        Xc = self._check_x(X, fitting=True, shared=shared)
        self.n_features_in_ = int(X.shape[1])
        Ys = self._check_y(h0, Y, Xc.shape[0])
        n_terms = np.array([len(terminals(h0, y)) for y in Ys])
        # what the labels decide (virtual leaves, multi-label, node frequencies): from these
        # labels, or from the whole training data's when they are one part of it
        self._label_shape = LabelShape.of(h0, Ys)
        shape = (shared or {}).get("hierarchy_labels") or self._label_shape
        multi = shape.multi if self.multilabel is None else bool(self.multilabel)
        if not multi and np.any(n_terms > 1):
            i = int(np.argmax(n_terms > 1))
            raise InvalidInputError(
                f"Y[{i}] has {n_terms[i]} terminal nodes but multilabel=False asks one per label"
            )
        if multi and model(self.model).single_label:
            raise IncompatibleError(
                f"model={self.model!r} is single-label (its max runs over single paths); use "
                "'nhsvm' for multi-label data"
            )
        self.multilabel_ = multi
        # label space: virtual leaves under internal terminals (labels="auto")
        if self.labels == "leaves":
            check_labels(h0, Ys, leaves=True, single=not multi)
        if self.labels == "auto":
            vl = add_virtual_leaves(h0, Ys, nodes=shape.internal_terminals)
            h, Ys = vl.hierarchy, vl.Y
            self.virtual_parent_ = vl.virtual_parent
        else:
            h = h0
            self.virtual_parent_ = np.empty(0, dtype=np.int64)
        self.hierarchy_ = h
        self.n_nodes_original_ = h0.n_nodes
        # multi-label on a DAG: the leaf-terminated space needs an LP (and an IP when fractional)
        # per inference, ~0.5 s at 3,000 nodes; the ancestor-closed space is one min-cut, exact
        dag_multi = multi and not h0.is_tree and self.labels == "auto"
        self._label_space_ = "any" if (self.labels == "any" or dag_multi) else "leaves"
        self.n_features_ = int(Xc.shape[1])
        self._layout_ = (
            ("feature" if h.n_nodes > 200 else "node") if self.layout == "auto" else self.layout
        )
        Yr = [np.union1d(y, [h.root]).astype(np.int64) for y in Ys]
        w = model(self.model).training_weights(self, h, multi, shape.counts, shape.n)
        self._alpha_now = w.alpha
        self._loss_, self.node_loss_weight_ = w.loss, w.loss_weight
        self.node_miss_weight_ = w.miss_weight
        return Xc, Yr

    @property
    def _path_warm_start(self) -> bool:
        """C="auto"'s path starts each C from the previous weights, except for Shared SVM,
        whose weights belong to the node weights α of their own alternation."""
        return bool(self.model != "ssvm")

    def _hierarchy_structure(self, alpha: np.ndarray) -> Any:
        """The ``hierarchy`` structure of the fit with node weights ``alpha`` (feature scale
        √α; the model's fixed loss and node loss weights)."""
        from bicrit.structures.hierarchy import HierarchyStructure

        return HierarchyStructure(
            self.hierarchy_,
            labels=self._label_space_,
            multilabel=self.multilabel_,
            loss=self._loss_,
            node_scale=np.sqrt(alpha),
            node_loss_weight=self.node_loss_weight_,
            node_miss_weight=self.node_miss_weight_,
            n_features=self.n_features_,
            layout=self._layout_,
        )

    def _build_structure(self) -> Any:
        return self._hierarchy_structure(self._alpha_now)

    def _learner_params(self, learner: str) -> dict[str, Any]:
        params = super()._learner_params(learner)
        if learner == "sgd":
            params.setdefault("batch_size", int(self.batch_size))
        return params

    def _stability_on(self, structure: Any, probes: list[Any], gold: Any = None) -> None:
        """No training-probe stop: the stability rule acts on a plan's ``main`` phase, and the
        models' plans run rounds of their own (phases ``v``, α steps between them); they stop
        on ``tol``, their certificates and ``max_epochs``. (``C="auto"``'s path fits of the
        one-phase models are not scored per epoch either: the same phases.)"""
        return None

    def _fit_statistics(self, structure: Any) -> dict[str, Any]:
        """The feature moments of the scaling and the label statistics (:class:`LabelShape`)."""
        stats = super()._fit_statistics(structure)
        stats["hierarchy_labels"] = self._label_shape
        return stats

    def _cluster_refusal(self) -> str | None:
        refusal = model(self.model).cluster_refusal
        if refusal is None and self.model == "ssvm":
            learner = self._learner_name(self._surrogate_obj(), distributed=True)
            if learner == "bcfw":
                refusal = (
                    "model='ssvm' with learner 'bcfw' does not train on a cluster: each α step "
                    "rescales the weights, and distributed BCFW's weights are the sum of its "
                    "dual blocks, which cannot start from given weights; use "
                    "learner='cutting-plane' or 'sgd'"
                )
        return refusal

    def _default_plan(self, training: Training, surrogate: Any, search: Any, w0: Any) -> Any:
        return super()._plan(training, surrogate, search, w0)

    def _plan(self, training: Training, surrogate: Any, search: Any, w0: Any) -> Any:
        plan = model(self.model).plan(self, training, surrogate, search, w0)
        if isinstance(plan, list):  # one-phase models: their epochs are round 0
            for phase in plan:
                phase.name = "v"
                phase.labels = {**phase.labels, "round": 0}
        return plan

    def _finish(self, result: FitResult, training: Training) -> None:
        super()._finish(result, training)
        self.alpha_ = np.asarray(self._alpha_now, dtype=np.float64)
        self._derive()

    def _set_n_features(self, Xn: Any) -> None:
        """``n_features_in_`` is the width of X before hashing (set by :meth:`_prepare_fit`)."""

    def _derive(self) -> None:
        """Attributes derived from the fitted hierarchy and weights (also after loading):
        ``coef_`` and ``intercept_`` from the structure's node rows, the leaf paths, the
        classes."""
        rows = self.structure_.coef(self._w)
        self._rows_ = rows
        c = self.intercept_scaling_
        self.coef_ = rows[:, :-1] if c is not None else rows
        self.intercept_ = rows[:, -1] * c if c is not None else np.zeros(rows.shape[0])
        h = self.hierarchy_
        leaves = h.leaves
        self._leaf_paths_ = sp.csr_array(h.ancestor_matrix[leaves].astype(np.float64))
        classes = leaves.copy()
        n0 = self.n_nodes_original_
        vp = np.asarray(self.virtual_parent_, dtype=np.int64)
        virt = classes >= n0
        classes[virt] = vp[classes[virt] - n0]
        self.classes_ = classes
        self.n_nodes_ = h.n_nodes

    def _prepare_inputs(self, X: Any) -> Any:
        return self._check_x(X, fitting=False)

    def _score_labels(self, X: Any, Y: Any, P: Any = None) -> list[np.ndarray]:
        if Y is None:
            raise InvalidInputError("Y is required unless X is a hierarchy dataset")
        h0 = self._original_hierarchy() if self.hierarchy is None else _as_hierarchy(self.hierarchy)
        return self._check_y(h0, Y, len(P) if P is not None else len(Y))

    def _original_hierarchy(self) -> Hierarchy:
        """The hierarchy without the virtual leaves."""
        h = self.hierarchy_
        n0 = self.n_nodes_original_
        return Hierarchy(h.names[:n0], h.parents[:n0], root=h.root)

    # ------------------------------------------------------------------ predict

    def _node_scores(self, Xc: Any) -> np.ndarray:
        """σ_n = U_n·x + b_n of every node of the fitted hierarchy, for checked rows."""
        return np.asarray(Xc.astype(np.float64) @ self._rows_.T)

    def decision_function(self, X: Any, *, level: str = "leaf") -> np.ndarray:
        """``level="leaf"``: ``(n, len(classes_))`` scores ``Σ_{n ∈ Ā(l)} (U_n·x + b_n)`` of the
        path to every leaf ``l``. ``level="node"``: :meth:`node_scores`."""
        if level == "node":
            return self.node_scores(X)
        check_choice("level", level, ("leaf", "node"))
        self._check_fitted()
        X, _ = self._split(X, None)
        Xc = self._check_x(X, fitting=False)
        out = np.empty((Xc.shape[0], len(self.classes_)))
        for a in range(0, Xc.shape[0], _PREDICT_CHUNK):
            S = self._node_scores(Xc[a : a + _PREDICT_CHUNK])
            out[a : a + _PREDICT_CHUNK] = np.asarray(self._leaf_paths_ @ S.T).T
        return out

    def node_scores(self, X: Any, *, threshold: float = 0.0) -> np.ndarray:
        """(n, n_nodes) score of every node of the hierarchy (columns are node ids, the
        original hierarchy's: virtual leaves are not reported): the **max-marginal margin**

        ``δ_n(x) = max_{y ∋ n} S(y) − max_{y ∌ n} S(y)``,  ``S(y) = Σ_{v ∈ y} (U_v·x + b_v)``

        over the model's label space (leaf-terminated or ancestor-closed sets, single paths for
        single-label models). It is exact (tree DP, min-cuts on DAGs, the candidate paths;
        :meth:`bicrit.structures.hierarchy.HierarchyStructure.max_marginals`) and coherent with
        the hierarchy: every label containing a node contains its ancestors, so a node never
        scores above any of its ancestors. ``δ_n > 0`` exactly when ``n`` is in
        :meth:`predict`'s label (up to ties), and ``|δ_n|`` is how much the best label's score
        must give up to flip ``n``. The root, in every label, scores +∞.

        ``threshold`` is :meth:`predict`'s (added to every non-root node's score). For
        probabilities comparable across nodes (AU(PRC)), calibrate these scores on held-out
        data with :class:`~bicrit.hierarchy.NodeCalibration`; docs/hierarchy-scores.md."""
        self._check_fitted()
        shift = self._shift(threshold)
        X, _ = self._split(X, None)
        Xc = self._check_x(X, fitting=False)
        n0 = self.n_nodes_original_
        s = self._score_structure()
        out = np.empty((Xc.shape[0], n0))
        for a in range(0, Xc.shape[0], _PREDICT_CHUNK):
            S = self._node_scores(Xc[a : a + _PREDICT_CHUNK]) + shift
            with_, without = s.max_marginals(S, n_jobs=self.n_jobs)
            out[a : a + _PREDICT_CHUNK] = (with_ - without)[:, :n0]
        return out

    def _check_fitted(self) -> None:
        if not hasattr(self, "coef_"):
            from sklearn.exceptions import NotFittedError

            raise NotFittedError(
                "this HierarchicalSVM is not fitted yet; call fit(X, Y) before using it"
            )

    def _decode(self, P: Any) -> list[np.ndarray]:
        """Labels of the fitted space → original node ids, root and virtual leaves excluded."""
        n0 = self.n_nodes_original_
        root = self.hierarchy_.root
        return [y[(y < n0) & (y != root)].astype(np.int64) for y in P]

    def predict(self, X: Any, *, threshold: float = 0.0) -> list[np.ndarray]:
        """Predicted label sets: sorted int64 node ids, ancestor-closed, root excluded (the
        Clus HMC loader's convention). Single label: the best leaf path; multi-label: the exact
        argmax of the score over the label space (thesis eq. ``integerprogram`` without the loss
        term: DP on trees, min-cut on DAGs).

        ``threshold`` (multi-label only) is added to the score of every original non-root node
        before the argmax, so the decoded set maximises ``Σ_{n ∈ y} (U_n·x + threshold)``: each
        reported node is worth ``threshold`` more, and a larger value predicts larger sets. The
        models are trained with the leaf-Hamming loss, whose optimum leaves out every node that
        is in fewer than half of the labels; set-level metrics such as hierarchical F1 reward
        larger sets, so choose ``threshold`` on validation data (0 is the thesis's decoding)."""
        self._check_fitted()
        X, _ = self._split(X, None)
        return self._predict_matrix(self._check_x(X, fitting=False), threshold)

    def _predict_prepared(self, X: Any) -> list[np.ndarray]:
        return self._predict_matrix(X, 0.0)

    def _predict_matrix(self, Xc: Any, threshold: float) -> list[np.ndarray]:
        """:meth:`predict` on a checked (and hashed) CSR matrix."""
        h = self.hierarchy_
        shift = self._shift(threshold)
        out: list[np.ndarray] = []
        if not self.multilabel_:
            if threshold != 0:
                raise IncompatibleError("threshold is for multi-label models only")
            leaves = h.leaves
            for a in range(0, Xc.shape[0], _PREDICT_CHUNK):
                S = self._node_scores(Xc[a : a + _PREDICT_CHUNK])
                P = np.asarray(self._leaf_paths_ @ S.T).T
                best = leaves[np.argmax(P, axis=1)]
                out.extend(h.closures([[v] for v in best.tolist()]))
            return self._decode(out)
        s = self._score_structure()
        gold = np.union1d(h.closure([int(h.leaves[0])]), [h.root]).astype(np.int64)
        for a in range(0, Xc.shape[0], _PREDICT_CHUNK):
            S = self._node_scores(Xc[a : a + _PREDICT_CHUNK]) + shift
            found = s.batch_oracle_scores(S, [gold] * S.shape[0], {}, n_jobs=self.n_jobs)
            out.extend(np.asarray(per[0].label, dtype=np.int64) for per in found)
        return self._decode(out)

    def _shift(self, threshold: float) -> np.ndarray:
        """The node scores' shift of :meth:`predict`'s ``threshold``: on every original non-root
        node (virtual leaves are not reported)."""
        thr = threshold
        if isinstance(thr, bool) or not isinstance(thr, int | float) or not np.isfinite(thr):
            raise InvalidParameterError(f"threshold must be a finite number, got {thr!r}")
        shift = np.zeros(self.hierarchy_.n_nodes)
        if thr != 0:
            shift[: self.n_nodes_original_] = float(thr)
            shift[self.hierarchy_.root] = 0.0
        return shift

    def _score_structure(self) -> Any:
        """The label space of the fitted model over precomputed node scores (prediction and
        node scores)."""
        st = getattr(self, "_pred_structure_", None)
        if st is None:
            from bicrit.structures.hierarchy import HierarchyStructure

            st = HierarchyStructure(
                self.hierarchy_,
                labels=self._label_space_,
                multilabel=bool(self.multilabel_),
                loss="leaf" if self._label_space_ == "leaves" else "node",
                n_features=1,
            )
            self._pred_structure_ = st
        return st

    # ------------------------------------------------------------------ save / load

    def _extra_config(self) -> dict[str, Any]:
        return {
            "multilabel": bool(self.multilabel_),
            "n_nodes_original": int(self.n_nodes_original_),
            "n_features": int(self.n_features_),
            "intercept_scaling": self.intercept_scaling_,
        }

    def _extra_arrays(self) -> dict[str, np.ndarray]:
        return {
            # before the fit (a partition's label space, bicrit.dask), the α it trains with
            "alpha": np.asarray(self.__dict__.get("alpha_", self._alpha_now), dtype=np.float64),
            "virtual_parent": np.asarray(self.virtual_parent_, dtype=np.int64),
            **scale_arrays(self.scale_mean_, self.scale_std_),
        }

    @classmethod
    def _import(cls, config: Mapping[str, Any], arrays: Mapping[str, np.ndarray]) -> Any:
        if "fitted" in config:  # model format version 1
            config, arrays = _upgrade_v1(config, arrays)
        return super()._import(config, arrays)

    def _import_extra(self, config: Mapping[str, Any], arrays: Mapping[str, np.ndarray]) -> None:
        s = self.structure_
        self.multilabel_ = bool(config["multilabel"])
        self.n_nodes_original_ = int(config["n_nodes_original"])
        self.n_features_ = int(config["n_features"])
        # models saved before scaling and node biases existed had neither
        c = config.get("intercept_scaling")
        self.intercept_scaling_ = None if c is None else float(c)
        self.scale_mean_, self.scale_std_ = saved_scale(
            arrays, getattr(self, "n_features_in_", None)
        )
        self.hierarchy_ = s.hierarchy
        self._label_space_ = s.labels
        self._layout_ = s.layout
        self._loss_ = s.loss_kind
        self.node_loss_weight_ = np.asarray(s.node_loss_weight, dtype=np.float64)
        mw = getattr(s, "node_miss_weight", None)
        self.node_miss_weight_ = None if mw is None else np.asarray(mw, dtype=np.float64)
        self.alpha_ = np.array(arrays["alpha"], dtype=np.float64)
        self._alpha_now = self.alpha_.copy()
        self.virtual_parent_ = np.array(arrays["virtual_parent"], dtype=np.int64)
        if not hasattr(self, "_w"):  # the label space of a fit on several machines, before it
            return
        rows = self.structure_.coef(self._w)
        if rows.shape != (self.hierarchy_.n_nodes, self.n_features_):
            raise InvalidInputError(
                f"coef has shape {rows.shape}, expected "
                f"({self.hierarchy_.n_nodes}, {self.n_features_})"
            )
        n_in = getattr(self, "n_features_in_", None)
        bias = self.intercept_scaling_ is not None
        if n_in is not None and self.n_features_ != int(n_in) + bias:
            raise InvalidInputError(
                f"n_features is {self.n_features_} for {n_in} input features "
                + ("and a bias column" if bias else "without a bias column (intercept_scaling)")
            )
        self._derive()


def _upgrade_v1(
    config: Mapping[str, Any], arrays: Mapping[str, np.ndarray]
) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """A model file of format version 1 (its own ``hierarchy``/``fitted`` layout) in the form
    every :class:`~bicrit.StructuredSVM` writes."""
    f = config["fitted"]
    h = Hierarchy.from_config(f["hierarchy"])
    params = dict(config["params"])
    params["hierarchy"] = {"piece": "hierarchy", **dict(config["hierarchy"])}
    alpha = np.asarray(arrays["alpha"], dtype=np.float64)
    layout, d = f["layout"], int(f["n_features"])
    structure = {
        "name": "hierarchy",
        "params": {
            "hierarchy": h.get_config(),
            "labels": f["label_space"],
            "multilabel": bool(f["multilabel"]),
            "loss": f["loss"],
            "node_scale": np.sqrt(alpha).tolist(),
            "node_loss_weight": np.asarray(arrays["node_loss_weight"]).tolist(),
            "n_features": d,
            "layout": layout,
        },
    }
    # v1 stored the effective rows U = √α·V; the learner's weights are V in the layout
    U = np.asarray(arrays["coef"], dtype=np.float64)
    scale = np.sqrt(alpha)
    V = np.divide(U, scale[:, None], out=np.zeros_like(U), where=scale[:, None] > 0)
    w = np.ascontiguousarray(V.T).ravel() if layout == "feature" else V.ravel()
    new_config = {
        "params": params,
        "structure": structure,
        "attributes": {"n_epochs_": int(f["n_epochs"]), "n_features_in_": int(f["n_features_in"])},
        "history": [],
        "multilabel": bool(f["multilabel"]),
        "n_nodes_original": int(f["n_nodes_original"]),
        "n_features": d,
    }
    new_arrays = {
        "coef": w,
        "alpha": alpha,
        "virtual_parent": np.asarray(arrays["virtual_parent"], dtype=np.int64),
    }
    return new_config, new_arrays


register_estimator("HierarchicalSVM", HierarchicalSVM)
