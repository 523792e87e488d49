"""Label conventions of hierarchical data and the virtual-leaf transform (docs/architecture.md,
Hierarchies).

* **The root.** :func:`bicrit.datasets.read_clus_hmc` (and :meth:`Hierarchy.closure`) give label
  sets *without* the root, which every label implies; the ``hierarchy`` structure's labels
  *include* it. :func:`with_root` / :func:`without_root` convert.
* **Terminals.** The terminal nodes of an ancestor-closed set are its nodes with no child in the
  set; a label is *leaf-terminated* when every terminal is a leaf of the hierarchy (the thesis's
  label space). :func:`check_labels` raises a clear error for labels that are not.
* **Virtual leaves.** Real data often ends a label at an internal node (two thirds of the
  cellcycle_FUN training instances). Leaf-only models (NHSVM's normalization, the flat baseline)
  turn each such internal terminal ``t`` into a leaf: :func:`add_virtual_leaves` hangs a new leaf
  ``v_t`` under every internal node that is some instance's terminal and maps a label ending at
  ``t`` to ``Ā(t) ∪ {v_t}``. The leaf-sum constraints of α then hold for that label too
  (Σ_{Ā(t)} α + α_{v_t} = 1), and predictions map back with :meth:`VirtualLeaves.to_original`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from bicrit.errors import InvalidInputError, InvalidParameterError, check_choice
from bicrit.hierarchy.graph import Hierarchy

__all__ = [
    "VirtualLeaves",
    "add_virtual_leaves",
    "check_labels",
    "terminals",
    "with_root",
    "without_root",
]

VIRTUAL_SUFFIX = "/<leaf>"
"""Appended to an internal node's name to name its virtual leaf."""


def _as_ids(y: Iterable[int] | np.ndarray, n: int, where: str) -> np.ndarray:
    a = np.unique(np.asarray(list(y) if not isinstance(y, np.ndarray) else y, dtype=np.int64))
    if a.size and (a[0] < 0 or a[-1] >= n):
        bad = int(a[0] if a[0] < 0 else a[-1])
        raise InvalidInputError(f"{where} has node id {bad}, outside 0..{n - 1}")
    return a


def with_root(Y: Sequence[Iterable[int]], root: int) -> list[np.ndarray]:
    """Labels in the structure's convention: sorted int64 ids with the root added."""
    return [np.union1d(np.asarray(list(y), dtype=np.int64), [root]).astype(np.int64) for y in Y]


def without_root(Y: Sequence[Iterable[int]], root: int) -> list[np.ndarray]:
    """Labels in the Clus HMC / :meth:`Hierarchy.closure` convention: the root removed."""
    out = []
    for y in Y:
        a = np.unique(np.asarray(list(y), dtype=np.int64))
        out.append(a[a != root])
    return out


def terminals(hierarchy: Hierarchy, y: Iterable[int] | np.ndarray) -> np.ndarray:
    """The terminal nodes of the node set ``y`` (its nodes without a child in the set; the root
    is implied, so an empty set's terminal is the root), sorted."""
    ids = _as_ids(y, hierarchy.n_nodes, "label")
    members = set(ids.tolist())
    members.add(hierarchy.root)
    children = hierarchy.children
    return np.array(
        sorted(v for v in members if not any(c in members for c in children[v])), dtype=np.int64
    )


def check_labels(
    hierarchy: Hierarchy,
    Y: Sequence[Iterable[int]],
    *,
    leaves: bool = True,
    single: bool = False,
) -> None:
    """Checks that every label of ``Y`` is an ancestor-closed node set (root optional) and, with
    ``leaves=True``, that it ends at leaves only; ``single=True`` asks one terminal per label.

    Raises :class:`InvalidInputError` naming the instance and the node.
    """
    names = hierarchy.names
    for i, y in enumerate(Y):
        ids = _as_ids(y, hierarchy.n_nodes, f"Y[{i}]")
        closed = hierarchy.closure(ids)
        have = ids[ids != hierarchy.root]
        if not np.array_equal(closed, have):
            missing = int(np.setdiff1d(closed, have)[0])
            raise InvalidInputError(
                f"Y[{i}] is not ancestor-closed: node {missing} ({names[missing]!r}) is an "
                "ancestor of one of its nodes but missing (use Hierarchy.closures)"
            )
        ts = terminals(hierarchy, ids)
        if leaves:
            internal = [int(t) for t in ts if hierarchy.children[int(t)]]
            if internal:
                t = internal[0]
                raise InvalidInputError(
                    f"Y[{i}] ends at node {t} ({names[t]!r}), which is not a leaf; a leaf-only "
                    "model needs leaf-terminated labels (bicrit.hierarchy.add_virtual_leaves "
                    "turns such terminals into virtual leaves)"
                )
        if single and len(ts) > 1:
            raise InvalidInputError(
                f"Y[{i}] has {len(ts)} terminal nodes ({names[int(ts[0])]!r}, "
                f"{names[int(ts[1])]!r}, …) but a single-label model needs one"
            )


@dataclass(frozen=True)
class VirtualLeaves:
    """The result of :func:`add_virtual_leaves`."""

    hierarchy: Hierarchy
    """The original hierarchy with the virtual leaves appended (ids ``n_original..``)."""
    Y: list[np.ndarray]
    """The labels mapped onto it (same root convention as the input)."""
    n_original: int
    """Number of nodes of the original hierarchy (original ids are unchanged)."""
    virtual_parent: np.ndarray
    """``virtual_parent[k]`` = the internal node under which virtual leaf ``n_original + k``
    hangs."""

    @property
    def virtual_of(self) -> dict[int, int]:
        """Internal node id → its virtual leaf's id."""
        return {int(p): self.n_original + k for k, p in enumerate(self.virtual_parent.tolist())}

    def to_virtual(self, Y: Sequence[Iterable[int]]) -> list[np.ndarray]:
        """Maps more labels (e.g. a test split) onto the augmented hierarchy. A label ending at an
        internal node without a virtual leaf raises :class:`InvalidInputError` (build the
        transform with ``nodes="all"`` to cover every internal node)."""
        return _map_labels(self.hierarchy, self.n_original, self.virtual_of, Y)

    def to_original(self, Y: Sequence[Iterable[int]]) -> list[np.ndarray]:
        """Drops the virtual leaves from labels (e.g. predictions) of the augmented hierarchy."""
        out = []
        for y in Y:
            a = np.unique(np.asarray(list(y), dtype=np.int64))
            out.append(a[a < self.n_original])
        return out


def _map_labels(
    augmented: Hierarchy, n_original: int, virtual_of: dict[int, int], Y: Sequence[Iterable[int]]
) -> list[np.ndarray]:
    """Labels of the original hierarchy with the virtual leaf of each internal terminal added."""
    children = augmented.children
    out = []
    for i, y in enumerate(Y):
        ids = _as_ids(y, n_original, f"Y[{i}]")
        extra = []
        for t in terminals(augmented, ids).tolist():
            if any(c < n_original for c in children[t]):  # internal in the original hierarchy
                if t not in virtual_of:
                    raise InvalidInputError(
                        f"Y[{i}] ends at the internal node {t} ({augmented.names[t]!r}), which "
                        "has no virtual leaf (build the transform with nodes='all')"
                    )
                extra.append(virtual_of[t])
        out.append(np.union1d(ids, extra).astype(np.int64))
    return out


def add_virtual_leaves(
    hierarchy: Hierarchy,
    Y: Sequence[Iterable[int]],
    *,
    nodes: Literal["terminals", "all"] | Sequence[int] = "terminals",
    suffix: str = VIRTUAL_SUFFIX,
) -> VirtualLeaves:
    """Hangs a virtual leaf under every internal node that is some label's terminal
    (``nodes="terminals"``), under every internal node (``nodes="all"``) or under the internal
    nodes listed (those that end some label of the whole data, when ``Y`` is one part of it),
    and maps the labels.

    Labels are ancestor-closed node sets, with or without the root (the output keeps the input's
    convention); an empty set stands for the root alone. Virtual leaves get the ids
    ``n_nodes, n_nodes + 1, …`` in increasing order of their parent, and the name of their parent
    plus ``suffix``. Original ids do not change, so α of the original nodes and weight rows line
    up; :meth:`VirtualLeaves.to_original` maps predictions back.
    """
    if isinstance(nodes, str):
        check_choice("nodes", nodes, ("terminals", "all"))
    n = hierarchy.n_nodes
    children = hierarchy.children
    if not isinstance(nodes, str):
        listed = sorted({int(v) for v in nodes})
        bad = [v for v in listed if not (0 <= v < n and children[v])]
        if bad:
            raise InvalidParameterError(f"nodes lists {bad[0]}, which is not an internal node")
        parents_of_virtual = listed
    elif nodes == "all":
        parents_of_virtual = [v for v in range(n) if children[v]]
    else:
        from bicrit.hierarchy.shape import LabelShape  # it reads the terminals defined here

        ids = [_as_ids(y, n, f"Y[{i}]") for i, y in enumerate(Y)]
        parents_of_virtual = LabelShape.of(hierarchy, ids).internal_terminals
    names = hierarchy.names
    taken = set(names)
    new_names = list(names)
    new_parents = [tuple(p) for p in hierarchy.parents]
    for p in parents_of_virtual:
        name = names[p] + suffix
        while name in taken:
            name += "'"
        taken.add(name)
        new_names.append(name)
        new_parents.append((p,))
    augmented = Hierarchy(new_names, new_parents, root=hierarchy.root)
    virtual_of = {p: n + k for k, p in enumerate(parents_of_virtual)}
    mapped = _map_labels(augmented, n, virtual_of, Y)
    return VirtualLeaves(
        hierarchy=augmented,
        Y=mapped,
        n_original=n,
        virtual_parent=np.asarray(parents_of_virtual, dtype=np.int64),
    )
