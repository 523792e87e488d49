"""bicrit-assignment: a label structure for bicrit written in pure Python — bipartite perfect
matching (labels are permutations) with its λ-oracle, k-best and ban lists — found through the
``bicrit`` entry point group.

Once installed, ``bicrit.structure("assignment")`` builds it, and bicrit's native searches (and
learners) drive it through ``structure.instance_oracle(w, x, y)``.
"""

from __future__ import annotations

from bicrit_assignment.data import make_assignment_data, position_accuracy
from bicrit_assignment.murty import best_assignment, ranked_assignments
from bicrit_assignment.structure import Assignment

__all__ = [
    "Assignment",
    "__version__",
    "best_assignment",
    "make_assignment_data",
    "position_accuracy",
    "ranked_assignments",
]

__version__ = "0.1.0"
