"""The hook implementation bicrit calls (entry point ``assignment`` in the group ``bicrit``)."""

from __future__ import annotations

from bicrit.hookspecs import hookimpl
from bicrit.registry import Registrar

from bicrit_assignment.structure import Assignment


@hookimpl
def bicrit_register_structures(registry: Registrar) -> None:
    """Registers ``assignment``."""
    registry.add_structure(
        Assignment.name,
        Assignment,
        description="bipartite perfect matching (labels: permutations), position Hamming loss; "
        "λ-oracle by linear_sum_assignment, k-best and ban lists by Murty (pure Python)",
        capabilities=dict(Assignment.capabilities),
    )
