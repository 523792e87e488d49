"""``HierarchicalSVM``: flat SVM, HSVM, NHSVM, NHSVM3 and Shared SVM behind one scikit-learn
estimator (thesis hierarchical chapter; DESIGN §6; issue 6).

=========== =============================================================================
model       what is trained
=========== =============================================================================
``flat``    multiclass SVM over the leaves: α = 1 on the leaves, 0 elsewhere (the thesis's
            flat baseline); 0/1 loss over leaves (single label), leaf Hamming (multi-label)
``hsvm``    HSVM (Cai & Hofmann): one weight row per node, score = sum over the label's nodes,
            node-Hamming (tree distance) loss
``nhsvm``   NHSVM (eq. ``NHSVM``): node weights α from the power problem ``min Σ α^ρ``
            (:func:`~bicrit.hierarchy.node_weights`; ρ = 1 the max-min LP; ``T`` the relaxed DAG
            constraint ``1 ≤ Σ ≤ T``), feature map scaled by √α, normalized loss
            √(Σ_{y △ y_i} α) (single label) or the leaf-Hamming approximation (multi-label)
``nhsvm3``  NHSVM3 (eq. ``NHSVM3``): ``max(0, max_{y ≠ y_i} m(y)/‖Λ̃(y) − Λ̃(y_i)‖ + 1)``,
            single label only; trained by its own native Pegasos-SGD learner over the
            structure's ratio oracle (the loss is not a bi-criteria surrogate, so the generic
            learners cannot run it): same C, ``batch_size``, ``n_jobs`` and ``random_state``
            as ``learner="sgd"``, η_t = 1/(λ(t + 1)), t-weighted averaging
``ssvm``    Shared SVM (eq. ``SSVMp``): alternating optimisation — ``alpha_every`` epochs of the
            learner on V with U = √α·V, then the α step ``argmin Σ‖U_n‖²/α_n`` (ArgminAlphaTree
            in O(M) on trees, a conic program on DAGs; :func:`~bicrit.hierarchy.shared_alpha`),
            V ← U/√α, until the objective changes by less than ``tol`` (relative) or
            ``max_alternations``. α starts from the ρ = 2 weights with α_root = 0 (the root cancels
            in every margin, so the optimum has α_root = 0) and is kept positive by
            mixing in ``alpha_eps`` of them (:func:`~bicrit.hierarchy.keep_positive`; α = 0 is
            absorbing, DESIGN §3). The loss is fixed while α moves, as eq. ``SSVMp`` asks
            ("Δ̃(y, y_i) = Δ(l, l_i): we no longer normalize the margins, only the
            regularization"); the thesis does not name Δ, so ``ssvm_loss`` picks it (single
            label): ``"normalized"`` — √(Σ_{y △ y_i} α) frozen at the *starting* α — or
            ``"hamming"`` — the un-normalized node Hamming distance Δ^H of eq. ``HSVM`` (the
            thesis's example Δ) — or ``"zero_one"`` — 1[l ≠ l_i]. Multi-label: leaf Hamming
=========== =============================================================================

**Objective and C.** Every model minimises ``½‖V‖² + C·Σ_i ℓ_i`` (scikit-learn's C multiplies
the loss, DESIGN §3 "C"). The thesis writes ``λ Σ‖W_n‖² + Σ ℓ_i``, so ``C = 1/(2λ)``; its grid
λ ∈ {1e-8 … 1e2} is C ∈ {5e-3 … 5e7}.

**Labels.** ``Y`` is a sequence of label sets: node ids of the hierarchy, ancestor-closed, with or
without the root (the convention of :mod:`bicrit.datasets`' Clus HMC loader and synthetic
generators), or a 1-D array of node ids, one terminal node per instance (its ancestors are
added). Predictions come back in the loader's convention: sorted int64 ids, root excluded.
``labels`` chooses the label space:

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
space needs an LP relaxation, and an integer program when it is fractional, for every inference
(measured ~0.5 s per inference on pheno_GO's 3,186 nodes). Pass ``labels="leaves"`` for it.

``multilabel=None`` detects it: multi-label as soon as a training label has two terminals.
Multi-label inference is exact (O(M) DP on trees, min-cut / LP+IP on DAGs, DESIGN §4).

**Scores.** :meth:`HierarchicalSVM.score` is the hierarchical micro-F1 (Kiritchenko et al.,
root excluded) for multi-label models and exact-match accuracy for single-label ones.
:meth:`decision_function` gives, for every class in ``classes_`` (the leaves of the label space,
as their original node ids — a virtual leaf is reported as its parent), the score
``Σ_{n ∈ Ā(l)} U_n·x`` of the path to it.

**Scale.** ``X`` may be dense or ``scipy.sparse`` (float32 kept as the input allows; the native
learners take CSR rows). Weights are M·d float64 values in the learner; for LSHTC-sized problems
hash the features to ``n_hashed_features`` columns (signed hashing, the model then keeps
``M·n_hashed_features`` weights). ``layout="auto"`` uses the structure's feature-major layout
when the hierarchy has more than 200 nodes. Features should be standardised (DESIGN §9).
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from bicrit.errors import (
    IncompatibleError,
    InvalidInputError,
    InvalidParameterError,
)
from bicrit.hierarchy.alpha import (
    flat_alpha,
    keep_positive,
    node_weights,
    power_alpha,
    shared_alpha,
)
from bicrit.hierarchy.graph import Hierarchy
from bicrit.hierarchy.labels import add_virtual_leaves, check_labels, terminals

__all__ = ["MODELS", "SSVM_LOSSES", "HierarchicalSVM"]

MODELS = ("flat", "hsvm", "nhsvm", "nhsvm3", "ssvm")
"""The models of :class:`HierarchicalSVM`."""

SSVM_LOSSES = ("normalized", "hamming", "zero_one")
"""Shared SVM's fixed single-label losses (``ssvm_loss``)."""

_HISTORY_COLUMNS = (
    "round",
    "phase",
    "epoch",
    "objective",
    "loss",
    "norm_sq",
    "gap",
    "inferences",
    "time",
)

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


class HierarchicalSVM(BaseEstimator):
    """Hierarchical classification with flat SVM, HSVM, NHSVM, NHSVM3 or Shared SVM (see the
    module docstring for the models, the label conventions and C).

    Parameters
    ----------
    hierarchy:
        A :class:`~bicrit.hierarchy.Hierarchy`, or a dataset with a ``.hierarchy`` (the Clus HMC
        loader's :class:`~bicrit.datasets.HierarchyDataset`, the synthetic generators).
    model:
        ``"flat"``, ``"hsvm"``, ``"nhsvm"``, ``"nhsvm3"`` or ``"ssvm"``.
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
        (:func:`~bicrit.hierarchy.power_alpha`). SSVM ignores it: its optimum has α_root = 0,
        and it starts from the ρ = 2 weights with α_root = 0.
    surrogate, search, learner:
        As in :mod:`bicrit.learners` (``search="auto"`` is ``"convex-hull"``). ``nhsvm3`` has its
        own SGD loop and needs ``surrogate="margin"``, ``learner="sgd"``.
    C:
        Loss weight (> 0); see the module docstring for the thesis's λ.
    max_epochs, tol:
        Epochs of the learner (per alternation for ``ssvm``: ``alpha_every``), stopping when the
        learner reports convergence or the epoch objective changes by less than ``tol``
        (relative).
    n_jobs, random_state:
        Threads and seed of the learner (results do not depend on ``n_jobs``; ``None`` seeds 0).
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
    n_hashed_features:
        Hash the input columns onto this many (``None``: no hashing).
    layout:
        ``"auto"``, ``"node"`` or ``"feature"`` (the ``hierarchy`` structure's weight layout).
    batch_size:
        Instances per SGD step (the native learner's and NHSVM3's).
    learner_params:
        More parameters of the learner (:data:`bicrit.learners.LEARNERS`).

    Attributes
    ----------
    coef_ : ndarray of shape (n_nodes_, n_features_in_)
        Effective node rows ``U_n = √α_n·V_n`` (``V_n`` for HSVM): the score of a label is the
        sum of ``U_n·x`` over its nodes.
    alpha_ : ndarray of shape (n_nodes_,)
        Node weights (the feature scale squared; 1 for HSVM).
    hierarchy_ : Hierarchy
        The hierarchy the model was trained on (with virtual leaves when some were added).
    classes_ : ndarray
        Leaves of the label space as original node ids (the columns of decision_function).
    multilabel_ : bool
    history_ : polars.DataFrame
        One row per epoch (``phase="v"``) and, for ``ssvm``, per α step (``phase="alpha"``,
        ``objective`` exact at the new α and ``V``).
    """

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
        C: float = 1.0,
        max_epochs: int = 30,
        tol: float = 1e-3,
        n_jobs: int | None = None,
        random_state: int | None = None,
        multilabel: bool | None = None,
        labels: str = "auto",
        alpha_every: int = 5,
        max_alternations: int = 10,
        alpha_eps: float = 1e-3,
        ssvm_loss: str = "normalized",
        n_hashed_features: int | None = None,
        layout: str = "auto",
        batch_size: int = 1,
        learner_params: dict[str, Any] | None = None,
    ) -> None:
        self.hierarchy = hierarchy
        self.model = model
        self.rho = rho
        self.T = T
        self.include_root = include_root
        self.surrogate = surrogate
        self.search = search
        self.learner = learner
        self.C = C
        self.max_epochs = max_epochs
        self.tol = tol
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.multilabel = multilabel
        self.labels = labels
        self.alpha_every = alpha_every
        self.max_alternations = max_alternations
        self.alpha_eps = alpha_eps
        self.ssvm_loss = ssvm_loss
        self.n_hashed_features = n_hashed_features
        self.layout = layout
        self.batch_size = batch_size
        self.learner_params = learner_params

    # ------------------------------------------------------------------ validation

    def _check_params(self) -> None:
        if self.model not in MODELS:
            raise InvalidParameterError(f"model must be one of {MODELS}, got {self.model!r}")
        if self.labels not in ("auto", "leaves", "any"):
            raise InvalidParameterError(
                f"labels must be 'auto', 'leaves' or 'any', got {self.labels!r}"
            )
        if self.labels == "any" and self.model == "nhsvm3":
            raise IncompatibleError(
                "labels='any' cannot train model='nhsvm3': its ratio oracle enumerates leaf paths"
            )
        if self.layout not in ("auto", "node", "feature"):
            raise InvalidParameterError(
                f"layout must be 'auto', 'node' or 'feature', got {self.layout!r}"
            )
        c = self.C
        if isinstance(c, bool) or not isinstance(c, int | float) or not np.isfinite(c) or c <= 0:
            raise InvalidParameterError(f"C must be a finite number > 0, got {c!r}")
        r = self.rho
        if isinstance(r, bool) or not isinstance(r, int | float) or not (1.0 <= r < np.inf):
            raise InvalidParameterError(f"rho must be a number ≥ 1, got {r!r}")
        if self.T is not None and not (
            isinstance(self.T, int | float) and np.isfinite(self.T) and self.T >= 1
        ):
            raise InvalidParameterError(f"T must be None or a finite number ≥ 1, got {self.T!r}")
        for name in ("max_epochs", "alpha_every", "max_alternations", "batch_size"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int | np.integer) or v < 1:
                raise InvalidParameterError(f"{name} must be an int ≥ 1, got {v!r}")
        if not (isinstance(self.tol, int | float) and self.tol >= 0):
            raise InvalidParameterError(f"tol must be a number ≥ 0, got {self.tol!r}")
        if not (isinstance(self.alpha_eps, int | float) and 0 <= self.alpha_eps < 1):
            raise InvalidParameterError(f"alpha_eps must be in [0, 1), got {self.alpha_eps!r}")
        if self.ssvm_loss not in SSVM_LOSSES:
            raise InvalidParameterError(
                f"ssvm_loss must be one of {SSVM_LOSSES}, got {self.ssvm_loss!r}"
            )
        nh = self.n_hashed_features
        if nh is not None and (isinstance(nh, bool) or not isinstance(nh, int) or nh < 1):
            raise InvalidParameterError(f"n_hashed_features must be None or an int ≥ 1, got {nh!r}")
        if self.model == "nhsvm3" and (self.learner != "sgd" or self.surrogate != "margin"):
            raise IncompatibleError(
                "model='nhsvm3' trains with its own SGD loop over the ratio oracle: it needs "
                f"learner='sgd' and surrogate='margin', got learner={self.learner!r}, "
                f"surrogate={self.surrogate!r}"
            )

    def _check_x(self, X: Any, *, fitting: bool) -> sp.csr_array:
        if sp.issparse(X):
            Xc = sp.csr_array(X)
            if Xc.dtype not in (np.float32, np.float64):
                Xc = Xc.astype(np.float64)
        else:
            try:
                a = np.asarray(X)
            except Exception as exc:
                raise InvalidInputError(f"X must be a 2-D array or sparse matrix: {exc}") from None
            if a.ndim != 2:
                raise InvalidInputError(f"X must be 2-D (instances × features), got {a.ndim}-D")
            if not np.issubdtype(a.dtype, np.number):
                raise InvalidInputError(f"X must be numeric, got dtype {a.dtype}")
            Xc = sp.csr_array(a.astype(np.float32 if a.dtype == np.float32 else np.float64))
        if not np.all(np.isfinite(Xc.data)):
            raise InvalidInputError(
                "X has NaN or infinite values (the Clus HMC sets have missing features: load them "
                "with impute='mean')"
            )
        d = Xc.shape[1]
        if not fitting and d != self.n_features_in_:
            raise InvalidInputError(
                f"X has {d} features, but the model was fit on {self.n_features_in_}"
            )
        if self.n_hashed_features is not None:
            Xc = _hash_columns(Xc, int(self.n_hashed_features))
        return Xc

    def _check_y(self, h: Hierarchy, Y: Any, n: int) -> list[np.ndarray]:
        if isinstance(Y, np.ndarray) and Y.ndim == 1 and np.issubdtype(Y.dtype, np.integer):
            out = []
            for i, t in enumerate(Y.tolist()):
                if not 0 <= t < h.n_nodes:
                    raise InvalidInputError(f"Y[{i}] = {t} is not a node id (0..{h.n_nodes - 1})")
                out.append(h.closure([t]))
        else:
            try:
                out = [np.unique(np.asarray(list(y), dtype=np.int64)) for y in Y]
            except (TypeError, ValueError):
                raise InvalidInputError(
                    "Y must be a sequence of label sets (node-id sequences) or a 1-D int array of "
                    "terminal node ids"
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

    # ------------------------------------------------------------------ model pieces

    def _alpha_and_loss(self, h: Hierarchy, multilabel: bool) -> tuple[np.ndarray, str, np.ndarray]:
        """(α, loss kind, node loss weights) of the model on hierarchy ``h``."""
        m = self.model
        if m == "hsvm":
            return np.ones(h.n_nodes), "node", np.ones(h.n_nodes)
        if m == "flat":
            a = flat_alpha(h)
            # single label: two leaves differ in the symmetric difference, so 1/2 each gives 0/1
            return (
                a,
                ("leaf" if multilabel else "node"),
                (np.ones(h.n_nodes) if multilabel else a / 2),
            )
        relaxed = self.T is not None
        T = float(self.T) if relaxed else 1.5
        if m == "ssvm":
            # the root is in every label, so its block cancels in every margin and SSVM's optimum
            # has U_root = 0, hence α_root = 0: start there (ρ = 2 weights of the other nodes)
            a = power_alpha(h, 2.0, relaxed=relaxed, T=T, include_root=False)
        else:
            a = node_weights(
                h, float(self.rho), relaxed=relaxed, T=T, include_root=bool(self.include_root)
            )
        a = np.maximum(a, 0.0)
        if multilabel:
            return a, "leaf", np.ones(h.n_nodes)
        if m == "ssvm" and self.ssvm_loss == "hamming":
            # eq. SSVMp with Δ = Δ^H (eq. HSVM): un-normalized, independent of α
            return a, "node", np.ones(h.n_nodes)
        if m == "ssvm" and self.ssvm_loss == "zero_one":
            # Δ = 1[l ≠ l_i]: two leaf paths differ in exactly two leaves, ½ each (as ``flat``)
            return a, "node", flat_alpha(h) / 2
        return a, "normalized", a.copy()

    def _structure(self, alpha: np.ndarray, loss: str, loss_w: np.ndarray) -> Any:
        from bicrit.structures.hierarchy import HierarchyStructure

        return HierarchyStructure(
            self.hierarchy_,
            labels=self._label_space_,
            multilabel=self.multilabel_,
            loss=loss,
            node_scale=np.sqrt(alpha),
            node_loss_weight=loss_w,
            n_features=self.n_features_,
            layout=self._layout_,
        )

    def _learner_params(self) -> dict[str, Any]:
        p: dict[str, Any] = {"C": float(self.C)}
        p["random_state"] = 0 if self.random_state is None else int(self.random_state)
        if self.n_jobs is not None:
            p["n_jobs"] = int(self.n_jobs)
        if self.learner == "sgd":
            p["batch_size"] = int(self.batch_size)
        p.update(self.learner_params or {})
        return p

    def _search(self) -> Any:
        return "convex-hull" if self.search == "auto" else self.search

    def _rows(self, w: np.ndarray) -> np.ndarray:
        """The learner's weight vector as (M, d) node rows V_n."""
        M, d = self.hierarchy_.n_nodes, self.n_features_
        if self._layout_ == "feature":
            return np.ascontiguousarray(w.reshape(d, M).T)
        return w.reshape(M, d).copy()

    def _flat(self, V: np.ndarray) -> np.ndarray:
        if self._layout_ == "feature":
            return np.ascontiguousarray(V.T).ravel()
        return np.ascontiguousarray(V).ravel()

    # ------------------------------------------------------------------ fit

    def fit(self, X: Any, Y: Any) -> HierarchicalSVM:
        """Trains the model on ``X`` (n × d, dense or sparse) and label sets ``Y``."""
        self._check_params()
        h0 = _as_hierarchy(self.hierarchy)
        Xc = self._check_x(X, fitting=True)
        self.n_features_in_ = int(X.shape[1])
        Ys = self._check_y(h0, Y, Xc.shape[0])
        n_terms = np.array([len(terminals(h0, y)) for y in Ys])
        multi = bool(np.any(n_terms > 1)) if self.multilabel is None else bool(self.multilabel)
        if not multi and np.any(n_terms > 1):
            i = int(np.argmax(n_terms > 1))
            raise InvalidInputError(
                f"Y[{i}] has {n_terms[i]} terminal nodes but multilabel=False asks one per label"
            )
        if multi and self.model == "nhsvm3":
            raise IncompatibleError(
                "model='nhsvm3' is single-label (its max runs over single paths); use 'nhsvm' for "
                "multi-label data"
            )
        self.multilabel_ = multi
        # label space: virtual leaves under internal terminals (labels="auto")
        if self.labels == "leaves":
            check_labels(h0, Ys, leaves=True, single=not multi)
        if self.labels == "auto":
            vl = add_virtual_leaves(h0, Ys)
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
        alpha, loss, loss_w = self._alpha_and_loss(h, multi)
        self._loss_ = loss
        self.node_loss_weight_ = loss_w
        self._rows_history: list[dict[str, Any]] = []
        t0 = time.perf_counter()
        if self.model == "nhsvm3":
            V, self.n_epochs_ = self._fit_nhsvm3(Xc, Yr, alpha, loss_w)
        elif self.model == "ssvm":
            V, alpha = self._fit_ssvm(Xc, Yr, alpha, loss, loss_w)
        else:
            V, self.n_epochs_ = self._fit_native(Xc, Yr, alpha, loss, loss_w, round_=0)
        self.fit_time_ = time.perf_counter() - t0
        self.alpha_ = alpha
        self.coef_ = np.sqrt(alpha)[:, None] * V
        self._finish()
        import polars as pl

        self.history_ = pl.DataFrame(
            self._rows_history,
            schema={
                "round": pl.Int64,
                "phase": pl.Utf8,
                "epoch": pl.Int64,
                "objective": pl.Float64,
                "loss": pl.Float64,
                "norm_sq": pl.Float64,
                "gap": pl.Float64,
                "inferences": pl.Int64,
                "time": pl.Float64,
            },
        )
        del self._rows_history
        return self

    def _finish(self) -> None:
        """Derived attributes used by prediction (also after :meth:`_import`)."""
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

    def _record(self, round_: int, phase: str, stats: dict[str, Any]) -> None:
        self._rows_history.append(
            {
                "round": round_,
                "phase": phase,
                "epoch": stats.get("epoch"),
                "objective": stats.get("objective"),
                "loss": stats.get("loss"),
                "norm_sq": stats.get("norm_sq"),
                "gap": stats.get("gap"),
                "inferences": stats.get("inferences"),
                "time": stats.get("time"),
            }
        )

    def _trainer(
        self,
        Xc: Any,
        Yr: list[np.ndarray],
        alpha: np.ndarray,
        loss: str,
        loss_w: np.ndarray,
        w0: np.ndarray | None,
        extra: dict[str, Any] | None = None,
    ) -> Any:
        from bicrit.learners import make_trainer

        s = self._structure(alpha, loss, loss_w)
        params = self._learner_params()
        params.update(extra or {})
        return make_trainer(s, Xc, Yr, self.surrogate, self._search(), self.learner, params, w0)

    def _epochs(self, trainer: Any, n_epochs: int, round_: int, epoch0: int) -> int:
        prev = None
        done = 0
        for _ in range(n_epochs):
            stats = trainer.epoch()
            done += 1
            stats = dict(stats)
            stats["epoch"] = epoch0 + done
            self._record(round_, "v", stats)
            obj = stats["objective"]
            if stats["converged"]:
                break
            if prev is not None and obj is not None and abs(prev - obj) <= self.tol * abs(obj):
                break
            prev = obj
        return done

    def _fit_native(
        self,
        Xc: Any,
        Yr: list[np.ndarray],
        alpha: np.ndarray,
        loss: str,
        loss_w: np.ndarray,
        round_: int,
    ) -> tuple[np.ndarray, int]:
        trainer = self._trainer(Xc, Yr, alpha, loss, loss_w, None)
        done = self._epochs(trainer, int(self.max_epochs), round_, 0)
        return self._rows(np.asarray(trainer.weights(True))), done

    def _fit_ssvm(
        self, Xc: Any, Yr: list[np.ndarray], alpha0: np.ndarray, loss: str, loss_w: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """Shared SVM's alternating optimisation (thesis §"Optimizing with the shared norm")."""
        alpha = alpha0
        w0 = None
        steps = 0.0
        epochs = 0
        prev = None
        self.objective_path_ = []
        n = Xc.shape[0]
        for r in range(int(self.max_alternations)):
            extra = {"t0": 1.0 + steps} if self.learner == "sgd" else {}
            trainer = self._trainer(Xc, Yr, alpha, loss, loss_w, w0, extra)
            done = self._epochs(trainer, int(self.alpha_every), r, epochs)
            epochs += done
            if self.learner == "sgd":
                bs = int(trainer.params.get("batch_size", 1))
                steps += done * np.ceil(n / bs)
            V = self._rows(np.asarray(trainer.weights(True)))
            obj_v = float(trainer.objective(True))
            # α step: U = √α·V fixed (so the loss is unchanged), α ← argmin Σ‖U_n‖²/α_n
            U = np.sqrt(alpha)[:, None] * V
            sq = np.einsum("ij,ij->i", U, U)
            a_new = shared_alpha(self.hierarchy_, sq)
            a_new = keep_positive(a_new, alpha0, float(self.alpha_eps))
            V = np.divide(
                U, np.sqrt(a_new)[:, None], out=np.zeros_like(U), where=a_new[:, None] > 0
            )
            alpha = a_new
            w0 = self._flat(V)
            # exact objective at (V, α): one inference pass of a trainer at w0
            check = self._trainer(Xc, Yr, alpha, loss, loss_w, w0)
            ev = dict(check.evaluate(False, False))
            obj = float(ev["objective"])
            self.objective_path_.append((obj_v, obj))
            self._record(
                r,
                "alpha",
                {
                    "epoch": epochs,
                    "objective": obj,
                    "loss": ev.get("loss"),
                    "norm_sq": ev.get("norm_sq"),
                    "time": ev.get("time"),
                },
            )
            if prev is not None and abs(prev - obj) <= self.tol * abs(obj):
                break
            prev = obj
        self.n_epochs_ = epochs
        self.n_alternations_ = len(self.objective_path_)
        return V, alpha

    def _fit_nhsvm3(
        self, Xc: Any, Yr: list[np.ndarray], alpha: np.ndarray, loss_w: np.ndarray
    ) -> tuple[np.ndarray, int]:
        """NHSVM3 (thesis eq. ``NHSVM3``) by the native Pegasos-SGD learner
        (``bicrit._native.Nhsvm3Trainer``, ``rust/bicrit-hierarchy/src/nhsvm3.rs``): minimise
        ½‖V‖² + C·Σ_i max(0, max_{y≠y_i} m(y)/L(y) + 1) in mini-batches of ``batch_size``,
        η_t = 1/(λ(t + 1)) with λ = 1/(n·C), subgradient (φ(x, ŷ) − φ(x, y_i))/L(ŷ), returning
        the t-weighted average of the iterates. Each epoch runs with the GIL released, the batch's
        inferences on ``n_jobs`` threads (the model does not depend on ``n_jobs``)."""
        from bicrit import _native

        s_struct = self._structure(alpha, "normalized", loss_w)
        trainer = _native.Nhsvm3Trainer(
            s_struct._require(),
            s_struct._x_many(Xc),
            s_struct._y_many(Yr),
            C=float(self.C),
            batch_size=int(self.batch_size),
            random_state=0 if self.random_state is None else int(self.random_state),
            n_jobs=None if self.n_jobs is None else int(self.n_jobs),
        )
        prev = None
        done = 0
        for _ in range(int(self.max_epochs)):
            stats = dict(trainer.epoch())
            done += 1
            self._record(0, "v", stats)
            obj = stats["objective"]
            if prev is not None and abs(prev - obj) <= self.tol * abs(obj):
                break
            prev = obj
        return self._rows(np.asarray(trainer.weights(True))), done

    # ------------------------------------------------------------------ predict

    def _check_fitted(self) -> None:
        if not hasattr(self, "coef_"):
            from sklearn.exceptions import NotFittedError

            raise NotFittedError(
                "this HierarchicalSVM is not fitted yet; call fit(X, Y) before using it"
            )

    def _node_scores(self, Xc: Any) -> np.ndarray:
        return np.asarray(Xc.astype(np.float64) @ self.coef_.T)

    def decision_function(self, X: Any) -> np.ndarray:
        """(n, len(classes_)) scores ``Σ_{n ∈ Ā(l)} U_n·x`` of the path to every leaf ``l``."""
        self._check_fitted()
        Xc = self._check_x(X, fitting=False)
        out = np.empty((Xc.shape[0], len(self.classes_)))
        for a in range(0, Xc.shape[0], _PREDICT_CHUNK):
            S = self._node_scores(Xc[a : a + _PREDICT_CHUNK])
            out[a : a + _PREDICT_CHUNK] = np.asarray(self._leaf_paths_ @ S.T).T
        return out

    def _to_original(self, Y: list[np.ndarray]) -> list[np.ndarray]:
        n0 = self.n_nodes_original_
        root = self.hierarchy_.root
        return [y[(y < n0) & (y != root)].astype(np.int64) for y in Y]

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
        Xc = self._check_x(X, fitting=False)
        h = self.hierarchy_
        thr = threshold
        if isinstance(thr, bool) or not isinstance(thr, int | float) or not np.isfinite(thr):
            raise InvalidParameterError(f"threshold must be a finite number, got {thr!r}")
        out: list[np.ndarray] = []
        if not self.multilabel_:
            if thr != 0:
                raise IncompatibleError("threshold is for multi-label models only")
            leaves = h.leaves
            for a in range(0, Xc.shape[0], _PREDICT_CHUNK):
                S = self._node_scores(Xc[a : a + _PREDICT_CHUNK])
                P = np.asarray(self._leaf_paths_ @ S.T).T
                best = leaves[np.argmax(P, axis=1)]
                out.extend(h.closure([int(v)]) for v in best.tolist())
            return self._to_original(out)
        s = self._predict_structure()
        gold = np.union1d(h.closure([int(h.leaves[0])]), [h.root]).astype(np.int64)
        shift = np.zeros(h.n_nodes)
        if thr != 0:
            shift[: self.n_nodes_original_] = float(thr)  # virtual leaves are not reported
            shift[h.root] = 0.0
        for a in range(0, Xc.shape[0], _PREDICT_CHUNK):
            S = self._node_scores(Xc[a : a + _PREDICT_CHUNK]) + shift
            found = s.batch_oracle_scores(S, [gold] * S.shape[0], {}, n_jobs=self.n_jobs)
            out.extend(np.asarray(per[0].label, dtype=np.int64) for per in found)
        return self._to_original(out)

    def _predict_structure(self) -> Any:
        st = getattr(self, "_pred_structure_", None)
        if st is None:
            from bicrit.structures.hierarchy import HierarchyStructure

            st = HierarchyStructure(
                self.hierarchy_,
                labels=self._label_space_,
                multilabel=True,
                loss="leaf" if self._label_space_ == "leaves" else "node",
                n_features=1,
            )
            self._pred_structure_ = st
        return st

    def score(self, X: Any, Y: Any, sample_weight: Any = None) -> float:
        """Hierarchical micro-F1 (root excluded) for a multi-label model, exact-match accuracy of
        the label sets for a single-label one."""
        from bicrit.metrics.hierarchy import accuracy, hierarchical_f1

        if sample_weight is not None:
            raise InvalidParameterError("sample_weight is not supported")
        self._check_fitted()
        pred = self.predict(X)
        h0 = _as_hierarchy(self.hierarchy)
        Ys = self._check_y(h0, Y, len(pred))
        M = self.n_nodes_original_
        if self.multilabel_:
            return float(hierarchical_f1(_indicator(Ys, M), _indicator(pred, M)))
        return float(accuracy(_indicator(Ys, M), _indicator(pred, M)))

    # ------------------------------------------------------------------ save / load

    def save(self, path: Any) -> Any:
        """Writes the fitted model in bicrit's pickle-free format (``docs/model-format.md``)."""
        from bicrit.estimators.model_format import save_model

        check_is_fitted(self)
        return save_model(path, self)

    @classmethod
    def load(cls, path: Any) -> HierarchicalSVM:
        """Reads a model file; raises when it holds another estimator class."""
        from bicrit.errors import ModelFormatError
        from bicrit.estimators.model_format import load_model

        est = load_model(path)
        if not isinstance(est, cls):
            raise ModelFormatError(f"{path} holds a {type(est).__name__}, not a {cls.__name__}")
        return est

    def _export(self) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        """A JSON-able config and named arrays that :meth:`_import` rebuilds the fitted model
        from (for the pickle-free model format)."""
        self._check_fitted()
        params = self.get_params(deep=False)
        h = _as_hierarchy(params.pop("hierarchy"))
        for k in ("surrogate", "search"):
            if not isinstance(params[k], str | type(None)):
                raise InvalidParameterError(
                    f"{k} must be a registry name to export, got {params[k]!r}"
                )
        hf = self.hierarchy_
        config = {
            "params": params,
            "hierarchy": {
                "names": list(h.names),
                "parents": [list(p) for p in h.parents],
                "root": h.root,
            },
            "fitted": {
                "hierarchy": {
                    "names": list(hf.names),
                    "parents": [list(p) for p in hf.parents],
                    "root": hf.root,
                },
                "multilabel": self.multilabel_,
                "n_features_in": self.n_features_in_,
                "n_features": self.n_features_,
                "n_nodes_original": self.n_nodes_original_,
                "label_space": self._label_space_,
                "layout": self._layout_,
                "loss": self._loss_,
                "n_epochs": int(self.n_epochs_),
            },
        }
        arrays = {
            "coef": self.coef_,
            "alpha": self.alpha_,
            "node_loss_weight": np.asarray(self.node_loss_weight_, dtype=np.float64),
            "virtual_parent": np.asarray(self.virtual_parent_, dtype=np.int64),
        }
        return config, arrays

    @classmethod
    def _import(cls, config: dict[str, Any], arrays: dict[str, np.ndarray]) -> HierarchicalSVM:
        """Rebuilds a fitted model from :meth:`_export`'s output."""
        hc = config["hierarchy"]
        h = Hierarchy(hc["names"], hc["parents"], root=hc["root"])
        est = cls(hierarchy=h, **config["params"])
        f = config["fitted"]
        fh = f["hierarchy"]
        est.hierarchy_ = Hierarchy(fh["names"], fh["parents"], root=fh["root"])
        est.multilabel_ = bool(f["multilabel"])
        est.n_features_in_ = int(f["n_features_in"])
        est.n_features_ = int(f["n_features"])
        est.n_nodes_original_ = int(f["n_nodes_original"])
        est._label_space_ = f["label_space"]
        est._layout_ = f["layout"]
        est._loss_ = f["loss"]
        est.n_epochs_ = int(f["n_epochs"])
        est.coef_ = np.array(arrays["coef"], dtype=np.float64)
        est.alpha_ = np.array(arrays["alpha"], dtype=np.float64)
        est.node_loss_weight_ = np.array(arrays["node_loss_weight"], dtype=np.float64)
        est.virtual_parent_ = np.array(arrays["virtual_parent"], dtype=np.int64)
        if est.coef_.shape != (est.hierarchy_.n_nodes, est.n_features_):
            raise InvalidInputError(
                f"coef has shape {est.coef_.shape}, expected "
                f"({est.hierarchy_.n_nodes}, {est.n_features_})"
            )
        est._finish()
        return est


def _indicator(Y: list[np.ndarray], n_nodes: int) -> sp.csr_array:
    lengths = np.fromiter((len(y) for y in Y), dtype=np.int64, count=len(Y))
    indptr = np.zeros(len(Y) + 1, dtype=np.int64)
    np.cumsum(lengths, out=indptr[1:])
    idx = np.concatenate(Y) if Y else np.empty(0, dtype=np.int64)
    return sp.csr_array((np.ones(len(idx), dtype=np.int8), idx, indptr), shape=(len(Y), n_nodes))
