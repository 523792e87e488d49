"""What :class:`~bicrit.hierarchy.HierarchicalSVM` learns from its training labels beyond the
hierarchy, as a statistic that merges over parts of the data (a fit on several machines,
:mod:`bicrit.dask`, merges the partitions' and prepares each again with the whole's): the
internal nodes that end some label (they get virtual leaves, :func:`add_virtual_leaves`),
whether some label has several terminals (``multilabel=None`` detects multi-label data), and the
node counts that ``multilabel_loss="weighted"`` takes its class-balanced costs from."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from bicrit.errors import InvalidInputError
from bicrit.hierarchy.graph import Hierarchy
from bicrit.hierarchy.labels import terminals

__all__ = ["LabelShape"]


@dataclass(frozen=True)
class LabelShape:
    """The label statistics of one part of the training data (module documentation), over the
    ``n_nodes`` nodes of the hierarchy the labels are written in."""

    #: Labels counted.
    n: int
    #: ``counts[v]``: labels holding node v (the root in all of them).
    counts: np.ndarray
    #: ``ends[v]``: v is an internal node and some label's terminal.
    ends: np.ndarray
    #: Some label has more than one terminal.
    multi: bool

    @classmethod
    def of(cls, h: Hierarchy, Y: Sequence[np.ndarray]) -> LabelShape:
        """The statistics of the labels ``Y`` (ancestor-closed node sets, root excluded)."""
        counts = np.zeros(h.n_nodes, dtype=np.int64)
        ends = np.zeros(h.n_nodes, dtype=bool)
        multi = False
        children = h.children
        for y in Y:
            counts[y] += 1
            ts = terminals(h, y)
            multi = multi or len(ts) > 1
            for t in ts.tolist():
                if children[t]:
                    ends[t] = True
        counts[h.root] = len(Y)
        return cls(len(Y), counts, ends, multi)

    def merge(self, other: LabelShape) -> LabelShape:
        """The statistics of both parts together."""
        if self.counts.shape != other.counts.shape:
            raise InvalidInputError(
                f"the parts' labels are written in hierarchies of {self.counts.size} and "
                f"{other.counts.size} nodes"
            )
        return LabelShape(
            self.n + other.n,
            self.counts + other.counts,
            self.ends | other.ends,
            self.multi or other.multi,
        )

    @property
    def internal_terminals(self) -> list[int]:
        """The internal nodes that end some label, in increasing order."""
        return np.flatnonzero(self.ends).tolist()
