"""The ``multilabel`` structure: a pairwise binary Markov random field over K labels
(docs/architecture.md, Structures; the thesis's fully pairwise multi-label model, after Finley
& Joachims 2008).

Labels are 0/1 int arrays of length K. A *relaxed* label (an answer of the LP relaxation) is a
``(node_marginals, edge_marginals)`` tuple of float arrays of shapes ``(K,)`` and ``(n_edges, 4)``:
μ_k = P(y_k = 1) and, per edge ``(i, j)``, the probabilities of the states
``(y_i, y_j) = (0, 0), (0, 1), (1, 0), (1, 1)``. ``joint_feature`` and ``terms`` accept both kinds
(both are linear in the marginals); ``predict_one`` always returns an integral label.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any

import numpy as np

from bicrit import _native
from bicrit.errors import InvalidInputError, InvalidParameterError, check_choice
from bicrit.structures._inputs import as_csr_tuple
from bicrit.structures.native import MatrixStructure

__all__ = ["MAX_EXACT_LABELS", "LabelCounts", "Multilabel"]

#: Largest K that ``inference="exact"`` accepts (2^K labels are enumerated per oracle call);
#: ``inference="auto"`` is exact up to this K and relaxed beyond.
MAX_EXACT_LABELS = 16

EdgeSpec = str | list[tuple[int, int]] | np.ndarray


def _label_matrix(Y: Any, n_rows: int | None = None) -> np.ndarray:
    """``Y`` as an (n, K) int64 array of 0/1 values, with clear errors."""
    if hasattr(Y, "toarray"):
        Y = Y.toarray()
    A = np.asarray(Y)
    if A.ndim != 2:
        hint = (
            " (the multilabel structure, StructuredSVM's default, takes an (n, K) 0/1 array; "
            "for one class per instance pass structure='multiclass')"
            if A.ndim == 1
            else ""
        )
        raise InvalidInputError(f"Y must be 2-D (instances × labels), got {A.ndim}-D{hint}")
    if n_rows is not None and A.shape[0] != n_rows:
        raise InvalidInputError(f"X has {n_rows} instances but Y has {A.shape[0]} rows")
    return _as_01(A, "Y")


def _as_01(A: np.ndarray, what: str) -> np.ndarray:
    if A.dtype == bool:
        return A.astype(np.int64)
    if not (np.issubdtype(A.dtype, np.integer) or np.issubdtype(A.dtype, np.floating)):
        raise InvalidInputError(f"{what} must hold 0/1 values, got dtype {A.dtype}")
    bad = (A != 0) & (A != 1)
    if bad.any():
        pos = tuple(int(i) for i in np.argwhere(bad)[0])
        hint = (
            "; a relaxed label is a (node_marginals, edge_marginals) tuple"
            if np.issubdtype(A.dtype, np.floating)
            else ""
        )
        raise InvalidInputError(f"{what} holds {A[pos]} at {pos}: labels must be 0 or 1{hint}")
    return np.ascontiguousarray(A, dtype=np.int64)


def auto_edges(edges: EdgeSpec, n_labels: int) -> tuple[EdgeSpec, str | None]:
    """What ``edges="auto"`` means for K labels, with the reason: the full graph while exact
    enumeration is possible (K ≤ ``MAX_EXACT_LABELS``); beyond, the full graph has K(K−1)/2
    edges (memory and time per example grow with them) and only the LP relaxation, so the
    Chow–Liu tree of the training labels is used, whose tree dynamic program is exact and O(K).
    Other specifications are returned unchanged (reason None)."""
    if not (isinstance(edges, str) and edges == "auto"):
        return edges, None
    full = n_labels * (n_labels - 1) // 2
    if n_labels <= MAX_EXACT_LABELS:
        return "full", (
            f"auto: full graph ({full} edges): {n_labels} labels ≤ {MAX_EXACT_LABELS}, "
            "exact enumeration"
        )
    return "tree", (
        f"auto: Chow–Liu tree ({n_labels - 1} edges, exact tree DP): {n_labels} labels > "
        f"{MAX_EXACT_LABELS}, the full graph would have {full} edges and only LP-relaxed inference"
    )


@dataclass(frozen=True)
class LabelCounts:
    """What the Chow–Liu tree is learnt from (``edges="tree"``): the row count, each label's
    count of rows where it is on, and each pair's count of rows where both are (above the
    diagonal). Counts of parts of the data add (:meth:`merge`), so one tree can be learnt
    from data spread over several machines (:mod:`bicrit.dask`)."""

    n: int
    ones: np.ndarray
    both: np.ndarray

    @classmethod
    def of(cls, Y: np.ndarray) -> LabelCounts:
        """The counts of an (n, K) 0/1 label matrix (native, GIL released)."""
        n, ones, both = _native.multilabel_label_counts(Y)
        return cls(int(n), ones, both)

    def merge(self, other: LabelCounts) -> LabelCounts:
        if self.ones.shape != other.ones.shape:
            raise InvalidInputError(
                f"label counts of {self.ones.size} and {other.ones.size} labels cannot be merged"
            )
        return LabelCounts(self.n + other.n, self.ones + other.ones, self.both + other.both)

    def chow_liu(self) -> list[tuple[int, int]]:
        """The maximum spanning tree of the labels' pairwise mutual information."""
        edges = _native.multilabel_chow_liu(self.n, self.ones, self.both)
        return [(int(a), int(b)) for a, b in edges]


class Multilabel(MatrixStructure):
    """Pairwise binary MRF over K labels with Hamming loss.

    φ(x, y) = [x·y_0, …, x·y_{K−1}, edge-state indicators (4 per edge)], of length
    K·d + 4·n_edges: label k's weight block multiplies x only when y_k = 1 (a block for y_k = 0
    would be redundant), and each edge ``(i, j)`` (i < j) has one weight per state
    ``2·y_i + y_j``. There is no built-in bias: append a constant column to X for per-label
    biases, and standardise features (unscaled inputs make training diverge).

    Parameters
    ----------
    edges:
        ``"auto"`` (the full graph up to 16 labels; beyond, the Chow–Liu tree of the training
        labels — :attr:`edges_kind_` and :attr:`edges_reason_` say which and why), ``"full"``
        (all K(K−1)/2 pairs, the thesis's model), ``"tree"`` (the Chow–Liu tree: the maximum
        spanning tree of the pairwise mutual information of the training labels, computed in
        :meth:`initialize`), ``"chain"`` (label order), or a list of ``(i, j)`` pairs (no
        self-loops or duplicates).
    inference:
        ``"exact"`` — enumeration of all 2^K labels (K ≤ 16), with ban list, k-best and cone;
        ``"tree"`` — the exact max-sum dynamic program when the edges form a forest (O(K) per
        call; plain and lexicographic λ-queries only); ``"relaxed"`` — the local-polytope LP
        relaxation (answers may be fractional), with cone but no ban list or k-best; ``"auto"`` —
        exact for K ≤ 16, beyond it tree when the edges form a forest, else relaxed.
    n_labels, n_features:
        Sizes; ``None`` means "learn from data in :meth:`initialize`".
    label_names:
        Names of the K labels (used in :meth:`record`); ``None``: unnamed.
    relaxed_solver:
        ``"qpbo"`` (default: roof duality by max-flow, exact LP value, half-integral answers) or
        ``"lp"`` (the same LP by the clarabel interior-point solver; slower). Cone queries and
        some lexicographic ones always use the LP; ``predict_one`` always uses QPBO.

    Terms: ``loss`` = Hamming distance, ``size`` = ``|y|`` (number of positive labels), ``hamming``
    = the indicator-set Hamming distance of the Micro-F1 surrogate (= the Hamming loss here).

    In relaxed mode ``predict_one`` rounds: labels fixed by QPBO are kept (weak persistency), the
    undecided (½) ones start at 0 and are improved one at a time while the score increases.
    """

    name = "multilabel"
    report_names = (
        ("subset_accuracy", "subset acc"),
        ("jaccard_accuracy", "Jaccard acc (thesis Acc)"),
        ("hamming_loss", "Hamming loss"),
        ("micro_f1", "micro-F1"),
        ("macro_f1", "macro-F1"),
        ("example_f1", "example F1"),
    )

    def __init__(
        self,
        edges: EdgeSpec = "auto",
        inference: str = "auto",
        n_labels: int | None = None,
        n_features: int | None = None,
        relaxed_solver: str = "qpbo",
        label_names: Sequence[str] | None = None,
    ) -> None:
        self.label_names = None if label_names is None else [str(n) for n in label_names]
        self.edges = edges
        self.inference = inference
        self.n_labels = n_labels
        self.n_features = n_features
        self.relaxed_solver = relaxed_solver
        if isinstance(edges, str) and edges not in ("auto", "full", "chain", "tree"):
            raise InvalidParameterError(
                "edges must be 'auto', 'full', 'tree', 'chain' or a list of (i, j) pairs, "
                f"got {edges!r}"
            )
        check_choice("inference", inference, ("exact", "relaxed", "tree", "auto"))
        check_choice("relaxed_solver", relaxed_solver, ("qpbo", "lp"))
        learnt = isinstance(edges, str) and edges in ("tree", "auto")
        if learnt and n_labels is not None:
            learnt = auto_edges(edges, int(n_labels))[0] == "tree"
        if n_labels is not None and n_features is not None and not learnt:
            self._build(int(n_labels), int(n_features), None)

    def _build(self, n_labels: int, n_features: int, counts: LabelCounts | None) -> None:
        spec, reason = auto_edges(self.edges, n_labels)
        self.label_counts_ = None
        if isinstance(spec, str):
            if spec == "tree":
                if counts is None:
                    raise InvalidInputError(
                        "edges='tree' is learnt from the training labels: call initialize(X, Y)"
                    )
                self.label_counts_ = counts
                native_edges: Any = counts.chow_liu()
            else:
                native_edges = spec  # "full" or "chain", sizes checked natively first
        else:
            try:
                pairs = [(int(a), int(b)) for a, b in spec]
            except (TypeError, ValueError):
                raise InvalidInputError(
                    "edges must be a sequence of (i, j) integer pairs"
                ) from None
            native_edges = pairs
            edge_list = [(min(a, b), max(a, b)) for a, b in pairs]
        self._native = _native.multilabel_structure(
            n_labels, n_features, native_edges, self.inference, self.relaxed_solver
        )
        kind = spec if isinstance(spec, str) else "explicit"
        if kind == "full":
            edge_list = list(combinations(range(n_labels), 2))
        elif kind == "chain":
            edge_list = [(j - 1, j) for j in range(1, n_labels)]
        elif kind == "tree":
            edge_list = native_edges
        self.n_labels, self.n_features = n_labels, n_features
        self.edges_ = np.array(edge_list, dtype=np.int64).reshape(-1, 2)
        caps = self._native.capabilities
        self.inference_ = "relaxed" if caps["relaxed"] else "exact" if caps["kbest"] else "tree"
        self.edges_kind_ = kind
        self.edges_reason_ = reason or f"edges={self.edges_kind_!r} as given"

    def initialize(self, X: Any, Y: Any, label_counts: LabelCounts | None = None) -> Multilabel:
        """Fixes K and d from data (X dense or sparse, Y an (n, K) 0/1 array); learns the
        Chow–Liu tree when ``edges="tree"`` (from ``label_counts`` when given: those of all
        the training data, when ``Y`` is one part of it; :attr:`label_counts_` keeps what the
        tree was learnt from). Returns ``self``."""
        X_csr = as_csr_tuple(X, name="X")
        Ym = _label_matrix(Y, X_csr[0].shape[0] - 1)
        if Ym.shape[1] == 0:
            raise InvalidInputError("Y has no label columns")
        if self.n_labels is not None and self.n_labels != Ym.shape[1]:
            raise InvalidInputError(
                f"Y has {Ym.shape[1]} labels but the structure was built with n_labels="
                f"{self.n_labels}"
            )
        n_features = self.n_features if self.n_features is not None else X_csr[3]
        learnt = auto_edges(self.edges, int(Ym.shape[1]))[0] == "tree"
        if learnt and label_counts is None:
            label_counts = LabelCounts.of(Ym)
        self._build(int(Ym.shape[1]), int(n_features), label_counts if learnt else None)
        return self

    def _y_one(self, y: Any) -> Any:
        if isinstance(y, tuple):
            if len(y) != 2:
                raise InvalidInputError(
                    "a relaxed label is a (node_marginals, edge_marginals) pair, "
                    f"got a tuple of {len(y)} items"
                )
            try:
                nodes = np.ascontiguousarray(y[0], dtype=np.float64)
                edges = np.ascontiguousarray(y[1], dtype=np.float64)
            except (TypeError, ValueError) as exc:
                raise InvalidInputError(
                    f"relaxed label marginals must be numeric ({exc})"
                ) from None
            if nodes.ndim != 1:
                raise InvalidInputError(f"node marginals must be 1-D, got shape {nodes.shape}")
            if edges.ndim != 2 or edges.shape[1:] != (4,):
                n_e = len(self.edges_) if hasattr(self, "edges_") else "n_edges"
                raise InvalidInputError(
                    f"edge marginals must have shape ({n_e}, 4), got {edges.shape}"
                )
            return (nodes, edges)
        A = np.asarray(y)
        if A.ndim != 1:
            raise InvalidInputError(f"a multilabel label is a 1-D 0/1 array, got shape {A.shape}")
        return _as_01(A, "label")

    def _y_many(self, Y: Any) -> Any:
        if isinstance(Y, list) and any(isinstance(y, tuple) for y in Y):
            raise InvalidInputError("gold labels and ban lists must be integral (0/1 arrays)")
        if isinstance(Y, list) and not Y:
            return np.zeros((0, self.n_labels or 0), dtype=np.int64)
        return _label_matrix(Y)

    # -- task behaviour (bicrit.structures.base) --------------------------------------------------

    def headline(self, Y: Any, P: Any) -> float:
        """Subset accuracy (exact match of the whole label vector)."""
        from bicrit.metrics import subset_accuracy

        return float(subset_accuracy(Y, P))

    def report(self, Y: Any, P: Any) -> dict[str, Any]:
        """:func:`bicrit.metrics.multilabel_report`."""
        from bicrit.metrics import multilabel_report

        return multilabel_report(Y, P)

    def validation_key(self, Y: Any, P: Any) -> tuple[float, ...]:
        """Example-based (Jaccard) accuracy, the thesis's "Acc", then subset accuracy: with many
        labels subset accuracy is near 0 for every model and cannot choose."""
        from bicrit.metrics import multilabel_report

        r = multilabel_report(Y, P)
        return (float(r["jaccard_accuracy"]), float(r["subset_accuracy"]))

    def record(self, p: Any) -> dict[str, Any]:
        y = np.asarray(p).astype(np.int64)
        out: dict[str, Any] = {"y": y.tolist()}
        if self.label_names is not None:
            out["labels"] = [n for n, v in zip(self.label_names, y.tolist(), strict=True) if v]
        return out

    def history_labels(self) -> dict[str, Any]:
        """The label graph and why it was chosen (a column of ``history_``)."""
        reason = getattr(self, "edges_reason_", None)
        return {} if reason is None else {"edges": reason}

    def get_config(self) -> dict[str, Any]:
        edges = self.edges
        if not isinstance(edges, str) or edges in ("tree", "auto"):
            edges = np.asarray(self.edges_).tolist()
        return {
            "edges": edges,
            "inference": self.inference,
            "n_labels": self.n_labels,
            "n_features": self.n_features,
            "relaxed_solver": self.relaxed_solver,
            "label_names": self.label_names,
        }
