"""The ``hierarchy`` structure: hierarchical classification over a tree or DAG (thesis
hierarchical chapter; docs/architecture.md, Structures and Hierarchies).

One weight row per node; the score of a label is the sum over its nodes of ``s_n·W_n·x`` (``s_n``
the per-node feature scale, 1 by default; NHSVM uses ``s_n = √α_n``). A **label** is a sorted
int64 array of node ids that is ancestor-closed and always contains the root.

Label spaces (``labels``, ``multilabel``):

* ``labels="any"`` — every ancestor-closed node set (real hierarchical data, e.g. the Clus HMC
  FunCat/GO sets, often ends a label at an internal node);
* ``labels="leaves"`` — leaf-terminated sets: every present internal node has a present child
  (the thesis's space: a leaf or a set of leaves with all their ancestors);
* ``multilabel=False`` restricts either space to single paths: one terminal node (a leaf for
  ``"leaves"``) with all its ancestors.

Losses (``loss``): ``"node"`` — node Hamming |y △ y_i| over the non-root nodes, weighted by
``node_loss_weight``; ``"leaf"`` — the leaf Hamming of the thesis's multi-label oracle (same, over
the leaves); ``"normalized"`` — NHSVM's normalized loss √(Σ_{n ∈ y △ y_i} λ_n) (thesis eq.
``wserror``; with ``node_loss_weight = α`` and ``node_scale = √α`` it is ‖Λ̃(y) − Λ̃(y_i)‖), for
``multilabel=False`` only since it does not decompose (the single-path oracle enumerates).
Terms: ``loss``; ``size`` = number of counted nodes in y; ``hamming`` = unweighted number of
counted nodes in y △ y_i — the counted nodes being the non-root nodes for the node (and
normalized) loss and the leaves for the leaf loss (so Micro-F1 over that indicator set is
H/(|y| + |y_i|)).

Oracles (exact; ``s.oracle_kind`` says which one runs):

=================  ===============================  ======================================
space              tree                             DAG
=================  ===============================  ======================================
single path        enumeration of the paths         enumeration (ancestors by BFS)
multi, ``any``     O(M) DP; k-best DP               max-weight closure by one min-cut
                                                    (Dinic); k-best by Lawler's partition
multi, ``leaves``  O(M) DP; k-best DP               LP relaxation (clarabel), integer
                                                    program (microlp) when fractional;
                                                    k-best by Lawler's partition over IPs
=================  ===============================  ======================================

Capabilities: ban list and k-best everywhere; cones (the constrained λ-oracle) only for
``multilabel=False``; answers are always integral (``relaxed`` is False).

NHSVM3 (thesis eq. ``NHSVM3``): :meth:`HierarchyStructure.ratio_oracle` maximises
m(y)/L(y) + 1 over y ≠ y_i (single paths, enumeration), clipped at 0.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np

from bicrit import _native
from bicrit.errors import InvalidInputError, InvalidParameterError, check_choice
from bicrit.structures._inputs import as_csr_tuple
from bicrit.structures.base import Answer, Cone
from bicrit.structures.native import MatrixStructure, native_query

__all__ = ["HierarchyStructure", "RatioAnswers"]


class RatioAnswers(NamedTuple):
    """Answers of NHSVM3's oracle for many instances (:meth:`HierarchyStructure.ratio_oracle`)."""

    labels: list[np.ndarray]
    """Per instance, the most violating label (the gold label where ``values`` is 0)."""
    values: np.ndarray
    """max(0, max_{y ≠ y_i, L(y) > 0} m(y)/L(y) + offset): the instance's loss term."""
    margins: np.ndarray
    """m(ŷ) = w·(φ(x, ŷ) − φ(x, y_i))."""
    losses: np.ndarray
    """L(ŷ, y_i); the subgradient is (φ(x, ŷ) − φ(x, y_i)) / L(ŷ) where ``values`` > 0."""

    @classmethod
    def of(cls, found: Any) -> RatioAnswers:
        """From the native ratio oracle's ``(labels, values, margins, losses)``."""
        labels, values, margins, losses = found
        return cls([np.asarray(y) for y in labels], *map(np.asarray, (values, margins, losses)))


def _node_scores(scores: Any) -> np.ndarray:
    """Precomputed node scores (instances × nodes) as a contiguous float64 array."""
    S = np.ascontiguousarray(scores, dtype=np.float64)
    if S.ndim != 2:
        raise InvalidInputError(f"scores must be 2-D (instances × nodes), got {S.ndim}-D")
    return S


def graph_of(
    hierarchy: Any, root: int | None = None
) -> tuple[list[list[int]], int, list[str] | None]:
    """``(parents lists, root, names)`` of a hierarchy object (``.parents``, ``.root``, optional
    ``.names``) or of a plain ``parents`` list or mapping ``node → parents`` (a sequence of ids,
    one int, or ``None``/``-1``/empty for the root), whose root is ``root`` or the first node
    without parents (several roots, cycles and unreachable nodes are reported natively)."""
    if hierarchy is None:
        raise InvalidParameterError("hierarchy is required: a Hierarchy or a parents list")
    if hasattr(hierarchy, "parents") and hasattr(hierarchy, "root"):
        names = getattr(hierarchy, "names", None)
        root, hierarchy = int(hierarchy.root), hierarchy.parents
    else:
        names = None
    if isinstance(hierarchy, Mapping):
        keys = sorted(hierarchy)
        if keys != list(range(len(keys))):
            raise InvalidInputError("a parents mapping must have the node ids 0..M-1 as keys")
        hierarchy = [hierarchy[k] for k in keys]
    parents: list[list[int]] = []
    for v, p in enumerate(hierarchy):
        if p is None or isinstance(p, int | np.integer):
            parents.append([] if p is None or int(p) < 0 else [int(p)])
            continue
        try:
            parents.append([int(q) for q in p])
        except (TypeError, ValueError):
            raise InvalidInputError(f"parents of node {v} must be node ids, got {p!r}") from None
    if root is None:
        roots = [v for v, p in enumerate(parents) if not p]
        if not roots:
            raise InvalidInputError(
                "the hierarchy has no node without parents, so there is no root (a cycle?)"
            )
        root = roots[0]
    return parents, int(root), None if names is None else [str(n) for n in names]


class HierarchyStructure(MatrixStructure):
    """Hierarchical classification over a tree or DAG (see the module docstring).

    Parameters
    ----------
    hierarchy:
        A hierarchy object with ``.parents`` (node → tuple of parent ids) and ``.root`` (e.g.
        ``bicrit.hierarchy.Hierarchy``; ``.names`` is used in error messages when present), or a
        plain ``parents`` list (with ``root``, or the unique node without parents as the root).
    root:
        The root node id when ``hierarchy`` is a plain list.
    labels:
        ``"any"`` (every ancestor-closed set) or ``"leaves"`` (leaf-terminated sets).
    multilabel:
        ``False`` restricts labels to single paths.
    loss:
        ``"node"`` (weighted node Hamming), ``"leaf"`` (weighted leaf Hamming) or
        ``"normalized"`` (√ of the weighted node Hamming; ``multilabel=False`` only).
    node_scale:
        Per-node feature scale s_n (φ has block n equal to s_n·x for n ∈ y); default 1.
    node_loss_weight:
        Per-node loss weight λ_n ≥ 0; default 1: the cost of a predicted node not in y_i.
    node_miss_weight:
        Per-node cost μ_n ≥ 0 of a node of y_i the label misses; default λ_n. The loss is then
        Σ_{n ∈ y∖y_i} λ_n + Σ_{n ∈ y_i∖y} μ_n (asymmetric costs, e.g. class-balanced costs of
        rare nodes).
    n_features:
        Number of input features; ``None`` means "from data in :meth:`initialize`".
    layout:
        ``"node"``: weight of (node n, feature j) at ``n·d + j`` (one block per node, the
        thesis's vec(W)); ``"feature"``: at ``j·M + n``, which makes scoring all nodes one pass
        over the sparse row with contiguous updates (large hierarchies, e.g. LSHTC).
    """

    name = "hierarchy"
    report_names = (("hierarchical_f1", "hierarchical F1"), ("accuracy", "exact-match accuracy"))

    def __init__(
        self,
        hierarchy: Any = None,
        *,
        root: int | None = None,
        labels: str = "any",
        multilabel: bool = True,
        loss: str = "node",
        node_scale: Sequence[float] | np.ndarray | None = None,
        node_loss_weight: Sequence[float] | np.ndarray | None = None,
        node_miss_weight: Sequence[float] | np.ndarray | None = None,
        n_features: int | None = None,
        layout: str = "node",
    ) -> None:
        if isinstance(hierarchy, Mapping) and "parents" in hierarchy:  # a model file's form
            from bicrit.hierarchy.graph import Hierarchy

            hierarchy = Hierarchy.from_config(hierarchy)
        self._parents, self._root, self._names = graph_of(hierarchy, root)
        check_choice("labels", labels, ("any", "leaves"))
        check_choice("loss", loss, ("node", "leaf", "normalized"))
        check_choice("layout", layout, ("node", "feature"))
        if loss == "normalized" and multilabel:
            raise InvalidParameterError(
                "loss='normalized' does not decompose over nodes, so it needs multilabel=False "
                "(multi-label NHSVM uses the leaf-Hamming approximation loss='leaf')"
            )
        self.hierarchy = hierarchy
        self.root = root
        self.labels = labels
        self.multilabel = bool(multilabel)
        self.loss_kind = loss
        self.node_scale = node_scale
        self.node_loss_weight = node_loss_weight
        self.node_miss_weight = node_miss_weight
        self.n_features = n_features
        self.layout = layout
        if n_features is not None:
            self._build(int(n_features))

    def _build(self, n_features: int) -> None:
        def vec(v: Any) -> list[float] | None:
            return None if v is None else [float(a) for a in np.asarray(v, dtype=np.float64)]

        self._native = _native.hierarchy_structure(
            self._parents,
            self._root,
            n_features,
            labels=self.labels,
            multilabel=self.multilabel,
            loss=self.loss_kind,
            node_scale=vec(self.node_scale),
            node_loss_weight=vec(self.node_loss_weight),
            node_miss_weight=vec(self.node_miss_weight),
            layout=self.layout,
            names=self._names,
        )
        self.n_features = n_features

    @property
    def n_nodes(self) -> int:
        """Number of nodes M."""
        return len(self._parents)

    @property
    def oracle_kind(self) -> str:
        """The exact method behind :meth:`oracle`: ``enumeration``, ``tree_dp``, ``min_cut`` or
        ``lp_ip``."""
        return str(_native.hierarchy_info(self._require())["oracle"])

    @property
    def leaves(self) -> np.ndarray:
        """Leaf node ids, increasing."""
        return np.asarray(_native.hierarchy_info(self._require())["leaves"])

    def initialize(self, X: Any, Y: Any) -> HierarchyStructure:
        """Fixes the number of features from ``X`` and validates every label of ``Y``
        (a sequence of node-id sequences)."""
        X_csr = as_csr_tuple(X, name="X")
        n_features = self.n_features if self.n_features is not None else X_csr[3]
        self._build(int(n_features))
        Ys = self._y_many(Y)
        n = X_csr[0].shape[0] - 1
        if len(Ys) != n:
            raise InvalidInputError(f"X has {n} instances but Y has {len(Ys)} labels")
        for i, y in enumerate(Ys):
            try:
                self.terms(y, y)
            except InvalidInputError as exc:
                raise InvalidInputError(f"Y[{i}]: {exc}") from None
        return self

    def closure(self, nodes: Sequence[int] | np.ndarray) -> np.ndarray:
        """The label made of ``nodes`` and all their ancestors (root included)."""
        return np.asarray(
            _native.hierarchy_closure(self._require(), [int(v) for v in np.ravel(nodes)])
        )

    def relaxation(
        self,
        w: np.ndarray,
        x: Any,
        y_true: Any,
        coef: Mapping[str, float] | None = None,
        *,
        margin_coef: float = 1.0,
    ) -> tuple[float, np.ndarray]:
        """The LP relaxation of the multi-label space (thesis eq. ``integerprogram`` relaxed, for
        ``labels="leaves"``; the integral closure polytope for ``labels="any"``): ``(value, z)``
        with ``value = Σ_n z_n·gain_n``, the node gains of ``margin_coef·m + Σ coef·terms``
        relative to the empty label (their constants omitted)."""
        value, z = _native.hierarchy_relaxation(
            self._require(),
            self._w(w),
            self._x_one(x),
            self._y_one(y_true),
            dict(coef or {}),
            float(margin_coef),
        )
        return float(value), np.asarray(z)

    def batch_oracle_scores(
        self,
        scores: np.ndarray,
        Y: Any,
        coef: Mapping[str, float] | None = None,
        *,
        margin_coef: float = 1.0,
        tiebreak: tuple[float, Mapping[str, float]] | None = None,
        k: int = 1,
        cone: Cone | None = None,
        n_jobs: int | None = None,
    ) -> list[list[Answer]]:
        """``batch_oracle`` from precomputed node scores ``scores[i, n] = s_n·W_n·x_i`` (shape
        instances × nodes): for callers that score the nodes themselves — float32 or hashed
        weights, a sparse-times-dense product — and only need the exact inference."""
        found = _native.hierarchy_batch_oracle_scores(
            self._require(),
            _node_scores(scores),
            self._y_many(Y),
            dict(coef or {}),
            n_jobs=n_jobs,
            **native_query(margin_coef, tiebreak, k, cone),
        )
        return [[Answer(*a) for a in per] for per in found]

    def max_marginals(
        self, scores: np.ndarray, *, n_jobs: int | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Max-marginals of the label score ``S(y) = Σ_{n ∈ y} scores[i, n]`` over the label
        space, for every instance and node: ``(with, without)``, each (instances × nodes), the
        best score of a label containing node n and of a label without it (−∞ for the root,
        which every label contains). Exact in every space: tree DP, one min-cut per node that
        needs one (ancestor-closed DAG sets), one integer program per node (leaf-terminated DAG
        sets), the candidate paths (single paths); docs/hierarchy-scores.md. Coherent with the
        hierarchy: ``with`` never increases and ``without`` never decreases from a node to its
        children. Parallel over instances with the GIL released."""
        with_, without = _native.hierarchy_max_marginals(
            self._require(), _node_scores(scores), n_jobs=n_jobs
        )
        return np.asarray(with_), np.asarray(without)

    def ratio_oracle(
        self,
        w: np.ndarray,
        X: Any,
        Y: Any,
        *,
        offset: float = 1.0,
        n_jobs: int | None = None,
    ) -> RatioAnswers:
        """NHSVM3's loss-augmented inference (thesis eq. ``NHSVM3``) for every instance: the label
        maximising ``m(y)/L(y) + offset`` over ``y ≠ y_i`` with ``L(y) > 0`` (``L`` the
        structure's loss; with ``loss="normalized"``, ``node_loss_weight = α`` and
        ``node_scale = √α`` the ratio is w·(Λ̃(y) − Λ̃(y_i))⊗x / ‖Λ̃(y) − Λ̃(y_i)‖), clipped at 0
        — the gold label with value 0 when nothing is positive. Single-path spaces only
        (enumeration); ties go to the first maximum in node order. Parallel over instances with
        the GIL released."""
        return RatioAnswers.of(
            _native.hierarchy_ratio_oracle(
                self._require(),
                self._w(w),
                self._x_many(X),
                self._y_many(Y),
                offset=float(offset),
                n_jobs=n_jobs,
            )
        )

    def ratio_oracle_scores(
        self,
        scores: np.ndarray,
        Y: Any,
        *,
        offset: float = 1.0,
        n_jobs: int | None = None,
    ) -> RatioAnswers:
        """:meth:`ratio_oracle` from precomputed node scores ``scores[i, n] = s_n·W_n·x_i``."""
        return RatioAnswers.of(
            _native.hierarchy_ratio_oracle_scores(
                self._require(),
                _node_scores(scores),
                self._y_many(Y),
                offset=float(offset),
                n_jobs=n_jobs,
            )
        )

    def _y_one(self, y: Any) -> Any:
        a = np.asarray(y)
        if a.ndim != 1 or not (a.size == 0 or np.issubdtype(a.dtype, np.integer)):
            raise InvalidInputError(
                f"a hierarchy label is a 1-D array of integer node ids, got {a.dtype} of shape "
                f"{a.shape}"
            )
        return a.astype(np.int64)

    def _y_many(self, Y: Any) -> Any:
        return [self._y_one(y) for y in Y]

    # -- task behaviour (bicrit.structures.base) --------------------------------------------------

    def _indicator(self, Y: Any) -> Any:
        import scipy.sparse as sp

        sets = [np.unique(np.asarray(list(y), dtype=np.int64)) for y in Y]
        M = max([self.n_nodes, *(int(y.max()) + 1 for y in sets if y.size)])
        idx = np.concatenate(sets) if sets else np.empty(0, dtype=np.int64)
        indptr = np.concatenate([[0], np.cumsum([len(y) for y in sets])]).astype(np.int64)
        A = sp.csr_array((np.ones(len(idx), dtype=np.int8), idx, indptr), shape=(len(sets), M))
        A = sp.lil_array(A)
        A[:, self._root] = 0  # the root is in every label: metrics leave it out
        return sp.csr_array(A)

    def headline(self, Y: Any, P: Any) -> float:
        """Hierarchical micro-F1 (Kiritchenko et al., root excluded) for multi-label
        structures, exact-match accuracy of the label sets for single-path ones."""
        from bicrit.metrics.hierarchy import accuracy, hierarchical_f1

        if len(Y) != len(P):
            raise InvalidInputError(f"Y has {len(Y)} labels but there are {len(P)} predictions")
        metric = hierarchical_f1 if self.multilabel else accuracy
        return float(metric(self._indicator(Y), self._indicator(P)))

    def report(self, Y: Any, P: Any) -> dict[str, Any]:
        from bicrit.metrics.hierarchy import accuracy, hierarchical_f1

        T, Q = self._indicator(Y), self._indicator(P)
        return {"hierarchical_f1": float(hierarchical_f1(T, Q)), "accuracy": float(accuracy(T, Q))}

    def record(self, p: Any) -> dict[str, Any]:
        nodes = [int(v) for v in np.asarray(p).tolist()]
        out: dict[str, Any] = {"nodes": nodes}
        if self._names is not None:
            out["names"] = [self._names[v] if v < len(self._names) else str(v) for v in nodes]
        return out

    def rows(self, w: np.ndarray) -> np.ndarray:
        """The weight vector as ``(n_nodes, n_features)`` node rows (either layout)."""
        assert self.n_features is not None  # initialised
        M, d = self.n_nodes, self.n_features
        w = np.asarray(w, dtype=np.float64)
        if self.layout == "feature":
            return np.ascontiguousarray(w.reshape(d, M).T)
        return w.reshape(M, d).copy()

    def flat(self, rows: np.ndarray) -> np.ndarray:
        """Node rows back to the weight vector (the inverse of :meth:`rows`)."""
        if self.layout == "feature":
            return np.ascontiguousarray(np.asarray(rows).T).ravel()
        return np.ascontiguousarray(rows).ravel()

    def scale(self) -> np.ndarray:
        """The per-node feature scale s_n (ones by default)."""
        if self.node_scale is None:
            return np.ones(self.n_nodes)
        return np.asarray(self.node_scale, dtype=np.float64)

    def coef(self, w: np.ndarray) -> np.ndarray:
        """Effective node rows ``U_n = s_n·W_n``: a label scores Σ_{n ∈ y} U_n·x."""
        return np.asarray(self.scale()[:, None] * self.rows(w))

    def get_config(self) -> dict[str, Any]:
        from bicrit.hierarchy.graph import Hierarchy

        h = self.hierarchy
        if not isinstance(h, Hierarchy):
            names = self._names or [str(v) for v in range(self.n_nodes)]
            h = Hierarchy(names, self._parents, root=self._root)

        def vec(v: Any) -> list[float] | None:
            return None if v is None else np.asarray(v, dtype=np.float64).tolist()

        return {
            "hierarchy": h.get_config(),
            "labels": self.labels,
            "multilabel": self.multilabel,
            "loss": self.loss_kind,
            "node_scale": vec(self.node_scale),
            "node_loss_weight": vec(self.node_loss_weight),
            "node_miss_weight": vec(self.node_miss_weight),
            "n_features": self.n_features,
            "layout": self.layout,
        }
