"""An immutable, validated label hierarchy: a rooted tree or DAG over named nodes.

Node ids are ``0 .. n_nodes - 1``. Every node but the root has at least one parent; a tree has
exactly one per node. The root is implied by every label set, so :meth:`Hierarchy.closure` leaves
it out unless asked (labels are ancestor-closed node sets, possibly ending at an internal node;
thesis §"Label Structure"). The graph itself — validation, parent and child lists, topological
order, leaves, depths and ancestor closures — is the native one
(``rust/bicrit-structures/src/hierarchy/graph.rs``, through ``bicrit._native.HierarchyGraph``),
the same the hierarchy structure and the α solvers use; this class adds names and
constructors. The CSR-like arrays ``parent_indptr`` / ``parent_indices`` (and ``child_indptr``
/ ``child_indices``) are int64.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from functools import cached_property
from types import MappingProxyType
from typing import Any

import numpy as np
import scipy.sparse as sp

from bicrit.errors import InvalidInputError

__all__ = ["Hierarchy"]


class Hierarchy:
    """A rooted tree or DAG of named nodes.

    Parameters
    ----------
    names
        Node names, unique; node ``i`` is called ``names[i]``.
    parents
        ``parents[i]`` lists the parent ids of node ``i`` (empty for the root only).
    root
        Id of the root. ``None``: the single node without parents.

    Raises
    ------
    InvalidInputError
        Duplicate names, a parent id out of range or repeated, a cycle (a node on it is named),
        several parentless nodes (named; :meth:`from_edges` can join them with ``add_root=True``),
        or nodes the root does not reach.
    """

    def __init__(
        self,
        names: Sequence[str],
        parents: Sequence[Sequence[int]],
        root: int | None = None,
    ) -> None:
        from bicrit import _native

        names_t = tuple(str(n) for n in names)
        n = len(names_t)
        if len(parents) != n:
            raise InvalidInputError(
                f"parents has {len(parents)} entries but there are {n} node names"
            )
        try:
            parents_t = tuple(tuple(int(p) for p in ps) for ps in parents)
        except (TypeError, ValueError):
            raise InvalidInputError("parents must list integer node ids for every node") from None
        self._graph = _native.HierarchyGraph(
            [list(p) for p in parents_t], None if root is None else int(root), list(names_t)
        )
        self._names = names_t
        self._parents = parents_t
        self._root = int(self._graph.root)
        self._index = {name: i for i, name in enumerate(names_t)}

    # ------------------------------------------------------------------ constructors

    @classmethod
    def from_parent_array(
        cls, parent: Sequence[int] | np.ndarray, names: Sequence[str] | None = None
    ) -> Hierarchy:
        """A tree from ``parent[i]`` (the parent id of node ``i``, negative for the root).

        ``names`` defaults to ``"0", "1", …``.
        """
        arr = np.asarray(parent)
        if arr.ndim != 1 or not np.issubdtype(arr.dtype, np.integer):
            raise InvalidInputError("parent must be a 1-d array of integers (negative: root)")
        names = [str(i) for i in range(len(arr))] if names is None else list(names)
        if len(names) != len(arr):
            raise InvalidInputError(f"{len(names)} names for {len(arr)} nodes")
        return cls(names, [() if p < 0 else (int(p),) for p in arr.tolist()])

    @classmethod
    def from_edges(
        cls,
        edges: Iterable[tuple[str, str]] | Iterable[tuple[int, int]],
        names: Sequence[str] | None = None,
        *,
        add_root: bool = False,
        root_name: str = "root",
    ) -> Hierarchy:
        """A hierarchy from ``(parent, child)`` edges, given as names or as ids into ``names``.

        Node ids follow ``names`` when given, else the order of first appearance in ``edges``.
        With ``add_root=True`` the parentless nodes (if more than one) hang under a new node
        ``root_name``, appended as the last id; a repeated edge is kept once.
        """
        index: dict[str, int] = {}
        node_names: list[str] = []
        if names is not None:
            for nm in names:
                if nm in index:
                    raise InvalidInputError(f"duplicate node name {nm!r}")
                index[nm] = len(node_names)
                node_names.append(nm)
        fixed = names is not None

        def node_id(x: str | int) -> int:
            if isinstance(x, int | np.integer):
                if not fixed:
                    raise InvalidInputError("edges given as ids need names=")
                if not 0 <= int(x) < len(node_names):
                    raise InvalidInputError(f"node id {x} outside 0..{len(node_names) - 1}")
                return int(x)
            x = str(x)
            if x not in index:
                if fixed:
                    raise InvalidInputError(f"unknown node name {x!r} in an edge")
                index[x] = len(node_names)
                node_names.append(x)
            return index[x]

        parent_sets: dict[int, dict[int, None]] = {}
        for parent, child in edges:
            p, c = node_id(parent), node_id(child)
            parent_sets.setdefault(c, {})[p] = None
        parents = [tuple(parent_sets.get(i, ())) for i in range(len(node_names))]
        roots = [i for i, ps in enumerate(parents) if not ps]
        if add_root and len(roots) > 1:
            if root_name in index:
                raise InvalidInputError(f"cannot add a root named {root_name!r}: the name exists")
            node_names.append(root_name)
            parents = [ps if ps else (len(node_names) - 1,) for ps in parents]
            parents.append(())
        return cls(node_names, parents)

    @classmethod
    def from_paths(
        cls, paths: Iterable[str], *, sep: str = "/", root_name: str = "root"
    ) -> Hierarchy:
        """A tree from node paths (``"01/01/03"``: parent ``"01/01"``), under a root ``root_name``.

        The root gets id 0, the paths ids ``1..`` in the given order (repeats are dropped). A
        path whose parent path is not listed is an error.
        """
        names = [root_name]
        index = {root_name: 0}
        for p in paths:
            if p not in index:
                index[p] = len(names)
                names.append(p)
        parents: list[tuple[int, ...]] = [()]
        for p in names[1:]:
            cut = p.rfind(sep)
            if cut < 0:
                parents.append((0,))
                continue
            up = p[:cut]
            if up not in index:
                raise InvalidInputError(f"node {p!r} has parent path {up!r}, which is not a node")
            parents.append((index[up],))
        return cls(names, parents, root=0)

    # ------------------------------------------------------------------ basic accessors

    def get_config(self) -> dict[str, Any]:
        """``{"names", "parents", "root"}``: plain JSON that :meth:`from_config` rebuilds."""
        return {
            "names": list(self._names),
            "parents": [list(p) for p in self._parents],
            "root": self._root,
        }

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> Hierarchy:
        """The hierarchy of :meth:`get_config`'s output."""
        return cls(config["names"], config["parents"], root=config.get("root"))

    @property
    def names(self) -> list[str]:
        """Node names by id."""
        return list(self._names)

    @property
    def parents(self) -> list[tuple[int, ...]]:
        """Parent ids of every node (the root has none)."""
        return list(self._parents)

    @property
    def root(self) -> int:
        """Id of the root."""
        return self._root

    @property
    def n_nodes(self) -> int:
        """Number of nodes, the root included."""
        return len(self._names)

    def __len__(self) -> int:
        return len(self._names)

    def __repr__(self) -> str:
        kind = "tree" if self.is_tree else "DAG"
        return (
            f"Hierarchy({kind}, {self.n_nodes} nodes, {len(self.leaves)} leaves, "
            f"depth {int(self.depth.max())}, root {self._names[self._root]!r})"
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Hierarchy):
            return NotImplemented
        return (self._names, self._parents, self._root) == (
            other._names,
            other._parents,
            other._root,
        )

    def __reduce__(self) -> tuple[Any, ...]:
        return (Hierarchy, (list(self._names), [list(p) for p in self._parents], self._root))

    def __hash__(self) -> int:
        return hash((self._names, self._parents, self._root))

    def index(self, name: str) -> int:
        """Id of the node called ``name``; :class:`InvalidInputError` when there is none."""
        try:
            return self._index[name]
        except KeyError:
            raise InvalidInputError(f"unknown node name {name!r}") from None

    def ids(self, names: Iterable[str]) -> np.ndarray:
        """Ids (int64) of the named nodes, in the given order."""
        return np.fromiter((self.index(n) for n in names), dtype=np.int64)

    @property
    def name_to_id(self) -> Mapping[str, int]:
        """Read-only view of the name → id map."""
        return MappingProxyType(self._index)

    # ------------------------------------------------------------------ derived structure

    @cached_property
    def _parent_csr(self) -> tuple[np.ndarray, np.ndarray]:
        return self._graph.parent_csr()

    @property
    def parent_indptr(self) -> np.ndarray:
        """CSR row pointer (int64, length ``n_nodes + 1``) of the parent lists."""
        return self._parent_csr[0]

    @property
    def parent_indices(self) -> np.ndarray:
        """CSR column indices (int64): parents of node ``i`` are
        ``parent_indices[parent_indptr[i]:parent_indptr[i + 1]]``, ascending."""
        return self._parent_csr[1]

    @cached_property
    def _child_csr(self) -> tuple[np.ndarray, np.ndarray]:
        return self._graph.child_csr()

    @property
    def child_indptr(self) -> np.ndarray:
        """CSR row pointer (int64) of the child lists."""
        return self._child_csr[0]

    @property
    def child_indices(self) -> np.ndarray:
        """CSR column indices (int64) of the child lists, ascending within a node."""
        return self._child_csr[1]

    @cached_property
    def children(self) -> list[tuple[int, ...]]:
        """Child ids of every node, ascending."""
        ptr, idx = self._child_csr
        flat = idx.tolist()
        return [tuple(flat[ptr[i] : ptr[i + 1]]) for i in range(self.n_nodes)]

    @property
    def is_tree(self) -> bool:
        """True when every node but the root has exactly one parent."""
        return bool(self._graph.is_tree)

    @cached_property
    def leaves(self) -> np.ndarray:
        """Ids (int64, ascending) of the nodes without children."""
        return self._graph.leaves

    @cached_property
    def topological_order(self) -> np.ndarray:
        """Node ids (int64), every parent before its children, the root first."""
        return self._graph.topological_order

    @cached_property
    def depth(self) -> np.ndarray:
        """Depth of every node (int64): the root 0, else 1 + the largest parent depth.

        In a tree this is the path length to the root; in a DAG the longest such path.
        """
        return self._graph.depth

    @cached_property
    def ancestor_matrix(self) -> sp.csr_array:
        """Boolean CSR (``n_nodes × n_nodes``): row ``i`` marks the ancestors of ``i``, itself
        and the root included."""
        indptr, indices = self._graph.ancestor_csr()
        return sp.csr_array(
            (np.ones(len(indices), dtype=bool), indices, indptr),
            shape=(self.n_nodes, self.n_nodes),
        )

    def ancestors(self, node: int) -> np.ndarray:
        """Sorted ids (int64) of every ancestor of ``node``: itself and the root included."""
        return self.closure([self._check_id(node)], include_root=True)

    def closure(self, nodes: Iterable[int], *, include_root: bool = False) -> np.ndarray:
        """The ancestor closure of ``nodes``: a sorted int64 array of distinct ids.

        The root, implied by every label set, is left out unless ``include_root=True``.
        """
        return self.closures([nodes], include_root=include_root)[0]

    def closures(
        self, node_sets: Sequence[Iterable[int]], *, include_root: bool = False
    ) -> list[np.ndarray]:
        """:meth:`closure` of many node sets at once (native)."""
        sets = [
            np.asarray(s if isinstance(s, np.ndarray) else list(s)).astype(np.int64).ravel()
            for s in node_sets
        ]
        return list(self._graph.closures(sets, include_root))

    def is_closed(self, nodes: Iterable[int]) -> bool:
        """True when ``nodes`` holds every ancestor (bar the root) of each of its nodes."""
        ids = np.unique(np.asarray(list(nodes), dtype=np.int64))
        return bool(np.array_equal(self.closure(ids), ids[ids != self._root]))

    def _check_id(self, node: int) -> int:
        node = int(node)
        if not 0 <= node < self.n_nodes:
            raise InvalidInputError(f"node id {node} outside 0..{self.n_nodes - 1}")
        return node
