"""Clus HMC ARFF: hierarchical multi-label data with the hierarchy declared in the header.

The last attribute is ``@ATTRIBUTE class hierarchical <list>``:

* a **tree** lists node paths (``01/01/03``: parent ``01/01``); the paths become nodes under an
  artificial root ``"root"``;
* a **DAG** (Gene Ontology sets) lists ``parent/child`` edges whose top nodes hang under ``root``.

Node ids: the root is 0; the other nodes follow the order of the declaration (trees: path order,
repeats dropped — ImCLEF07D repeats paths; DAGs: first appearance in the edge list).

Labels: each row's class value is ``@``-separated node names. ``Y[i]`` is the **ancestor-closed**
node set (sorted int64 ids) of row ``i`` *without* the root, which every label set implies — the
same convention as :meth:`bicrit.hierarchy.Hierarchy.closure`. A set may end at an internal
node. ``written[i]`` keeps the ids as written (sorted, distinct). A class value ``?`` is an
empty label set.

Missing features (``?``, common in the FUN/GO sets) are NaN in ``X``. bicrit's estimators refuse
NaN: impute with :meth:`HierarchyDataset.impute` (column means, by default the dataset's own —
pass the training means for a test split) or load through ``bicrit.datasets.load(...,
impute="mean")``, which uses the training split's means for every split.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

import numpy as np
import scipy.sparse as sp

from bicrit.datasets._io import PathLike
from bicrit.datasets.arff import ArffAttribute, read_arff
from bicrit.errors import DataFormatError, InvalidInputError
from bicrit.hierarchy import Hierarchy

__all__ = [
    "HierarchyDataset",
    "column_means",
    "impute_mean",
    "parse_clus_hierarchy",
    "read_clus_hmc",
]

ROOT = "root"


@dataclass(frozen=True)
class HierarchyDataset:
    """Hierarchical multi-label data: features, ancestor-closed label sets and the hierarchy."""

    X: np.ndarray
    """(n, d) float64; NaN where the file has ``?`` (see :meth:`impute`)."""
    Y: list[np.ndarray]
    """Per instance, the sorted int64 ids of its ancestor-closed label set, root excluded."""
    hierarchy: Hierarchy
    feature_names: list[str] = field(default_factory=list)
    written: list[np.ndarray] = field(default_factory=list)
    """Per instance, the node ids as written in the file (sorted, distinct)."""
    nominal: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """Declared values of the nominal features (encoded as in :mod:`bicrit.datasets.arff`)."""
    path: Path | None = None

    @property
    def n_samples(self) -> int:
        """Number of instances."""
        return len(self.Y)

    @property
    def n_features(self) -> int:
        """Number of feature columns."""
        return int(self.X.shape[1])

    @property
    def n_labels(self) -> int:
        """Number of hierarchy nodes that can be labels (all but the root)."""
        return self.hierarchy.n_nodes - 1

    def __len__(self) -> int:
        return self.n_samples

    def subset(self, indices: Sequence[int] | np.ndarray) -> HierarchyDataset:
        """The instances ``indices`` (in that order) as a dataset."""
        idx = np.asarray(indices, dtype=np.int64)
        changes: dict[str, Any] = {
            "X": self.X[idx],
            "Y": [self.Y[i] for i in idx.tolist()],
            "written": [self.written[i] for i in idx.tolist()] if self.written else [],
        }
        leaf = getattr(self, "leaf", None)
        if leaf is not None and len(leaf):  # the synthetic sets' per-instance leaves
            changes["leaf"] = leaf[idx]
        if hasattr(self, "splits"):
            changes["splits"] = {}
        return replace(self, **changes)

    def context(self, i: int) -> dict[str, Any]:
        """What ``bicrit predict`` writes beside instance ``i``'s prediction (nothing)."""
        return {}

    def __repr__(self) -> str:
        kind = "tree" if self.hierarchy.is_tree else "DAG"
        return (
            f"HierarchyDataset({self.n_samples} instances, {self.n_features} features, "
            f"{kind} of {self.n_labels} nodes + root)"
        )

    def indicator(self) -> sp.csr_array:
        """``Y`` as an (n, n_nodes) int8 CSR 0/1 matrix (the root column is 0)."""
        lengths = np.fromiter((len(y) for y in self.Y), dtype=np.int64, count=len(self.Y))
        indptr = np.zeros(len(self.Y) + 1, dtype=np.int64)
        np.cumsum(lengths, out=indptr[1:])
        idx = np.concatenate(self.Y) if self.Y else np.empty(0, dtype=np.int64)
        return sp.csr_array(
            (np.ones(len(idx), dtype=np.int8), idx, indptr),
            shape=(len(self.Y), self.hierarchy.n_nodes),
        )

    def impute(self, means: np.ndarray | None = None) -> HierarchyDataset:
        """A copy with NaN features replaced by ``means`` (default: this dataset's column means).

        Pass the training split's :func:`column_means` when imputing a test split.
        """
        m = column_means(self.X) if means is None else np.asarray(means, dtype=np.float64)
        return replace(self, X=impute_mean(self.X, m))


def column_means(X: np.ndarray) -> np.ndarray:
    """Column means ignoring NaN; 0 for a column that is all NaN."""
    X = np.asarray(X, dtype=np.float64)
    counts = (~np.isnan(X)).sum(axis=0)
    sums = np.where(np.isnan(X), 0.0, X).sum(axis=0)
    means: np.ndarray = np.divide(sums, counts, out=np.zeros(X.shape[1]), where=counts > 0)
    return means


def impute_mean(X: np.ndarray, means: np.ndarray) -> np.ndarray:
    """A copy of ``X`` with each NaN replaced by its column's entry of ``means``."""
    X = np.array(X, dtype=np.float64)
    means = np.asarray(means, dtype=np.float64)
    if means.shape != (X.shape[1],):
        raise InvalidInputError(f"means has shape {means.shape}, expected ({X.shape[1]},)")
    if not np.isfinite(means).all():
        raise InvalidInputError("means must be finite")
    r, c = np.nonzero(np.isnan(X))
    X[r, c] = means[c]
    return X


def parse_clus_hierarchy(
    attribute: ArffAttribute,
    path: PathLike = "<header>",
    kind: Literal["auto", "tree", "dag"] = "auto",
) -> Hierarchy:
    """The hierarchy of a Clus ``hierarchical`` attribute (see the module docstring).

    ``kind="auto"`` reads a DAG when some item is an edge from ``root`` (``root/GO0003674``).
    Errors name the file and the attribute's line.
    """
    items = [it for it in attribute.values if it]
    if not items:
        raise DataFormatError(path, attribute.line, "the hierarchical attribute lists no node")
    if kind == "auto":
        kind = "dag" if any(it.startswith(ROOT + "/") for it in items) else "tree"
    try:
        if kind == "tree":
            if ROOT in items:
                raise InvalidInputError(f"a tree node is called {ROOT!r}, the root's name")
            return Hierarchy.from_paths(items, root_name=ROOT)
        if kind != "dag":
            raise InvalidInputError(f"kind must be 'auto', 'tree' or 'dag', got {kind!r}")
        edges = []
        for it in items:
            parts = it.split("/")
            if len(parts) != 2 or not all(parts):
                raise InvalidInputError(f"DAG item {it!r} is not an edge 'parent/child'")
            edges.append((parts[0], parts[1]))
        names = [ROOT]
        seen = {ROOT}
        for p, c in edges:
            for nm in (p, c):
                if nm not in seen:
                    seen.add(nm)
                    names.append(nm)
        if len(set(edges)) != len(edges):
            raise InvalidInputError("an edge is listed twice")
        return Hierarchy.from_edges(edges, names)
    except InvalidInputError as exc:
        raise DataFormatError(path, attribute.line, str(exc)) from None


def read_clus_hmc(
    path: PathLike, *, kind: Literal["auto", "tree", "dag"] = "auto"
) -> HierarchyDataset:
    """Read one Clus HMC ARFF file (see the module docstring).

    Raises
    ------
    DataFormatError
        Naming the file and line: malformed ARFF (wrong value count, NaN literal, …), no or
        several hierarchical attributes, a cyclic or multi-rooted hierarchy, a class value that is
        not a node of the declared hierarchy.
    """
    data = read_arff(path)
    p, attrs = data.path, data.attributes
    hier_cols = [i for i, a in enumerate(attrs) if a.kind == "hierarchical"]
    if len(hier_cols) != 1:
        raise DataFormatError(
            p,
            attrs[hier_cols[1]].line if hier_cols else None,
            f"expected one 'hierarchical' attribute, found {len(hier_cols)}",
        )
    hcol = hier_cols[0]
    hierarchy = parse_clus_hierarchy(attrs[hcol], p, kind)
    index = hierarchy.name_to_id
    written: list[np.ndarray] = []
    for r, value in enumerate(data.text[hcol]):
        if value == "?":
            written.append(np.empty(0, dtype=np.int64))
            continue
        ids = []
        for name in value.split("@"):
            node = index.get(name)
            if node is None or node == hierarchy.root:
                what = "an empty class name" if not name else f"unknown class {name!r}"
                raise DataFormatError(
                    p,
                    int(data.lines[r]),
                    f"{what}: not a node of the hierarchy declared on line {attrs[hcol].line}",
                )
            ids.append(node)
        written.append(np.unique(np.asarray(ids, dtype=np.int64)))
    Y = hierarchy.closures(written)
    feat_cols = [i for i, a in enumerate(attrs) if i != hcol and a.kind in ("numeric", "nominal")]
    X: Any = data.X
    if sp.issparse(X):
        X = X.toarray()
    X = np.ascontiguousarray(X[:, feat_cols])
    return HierarchyDataset(
        X=X,
        Y=Y,
        hierarchy=hierarchy,
        feature_names=[attrs[i].name for i in feat_cols],
        written=written,
        nominal={attrs[i].name: attrs[i].values for i in feat_cols if attrs[i].kind == "nominal"},
        path=p,
    )
