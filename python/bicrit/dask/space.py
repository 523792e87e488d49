"""The label space of a partition — what every partition of one fit must share: the structure's
configuration after it learned its labels and sizes (tags, classes, label count, hierarchy) and
the estimator's fitted vocabularies (:meth:`StructuredSVM._extra_config` and arrays). Partitions
that disagree are refused before the first round."""

from __future__ import annotations

from typing import Any

import numpy as np

from bicrit.errors import InvalidInputError

__all__ = ["agree", "label_space"]


def label_space(est: Any, structure: Any) -> dict[str, Any]:
    """The label space of ``structure`` initialised by ``est`` on one partition."""
    from bicrit.estimators.pieces import structure_config

    return {
        "structure": structure_config(structure),
        "extra": est._extra_config(),
        "arrays": est._extra_arrays(),
        # what the structure says of how it learnt its shape (the label graph's kind and
        # reason), which its configuration alone does not keep
        "learnt": {k: getattr(structure, k) for k in LEARNT if hasattr(structure, k)},
    }


#: Descriptive attributes a structure sets when it learns its shape (not in its configuration).
LEARNT = ("edges_kind_", "edges_reason_")


def _differs(a: Any, b: Any, path: str) -> str | None:
    """The first place where ``a`` and ``b`` differ (a dotted path), or None."""
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b), key=str):
            if k not in a or k not in b:
                return f"{path}.{k}"
            d = _differs(a[k], b[k], f"{path}.{k}")
            if d:
                return d
        return None
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        a, b = np.asarray(a), np.asarray(b)
        same = a.shape == b.shape and bool(np.all((a == b) | ((a != a) & (b != b))))
        return None if same else path
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        if len(a) != len(b):
            return f"{path} (lengths {len(a)} and {len(b)})"
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            d = _differs(x, y, f"{path}[{i}]")
            if d:
                return d
        return None
    return None if a == b else path


def agree(summaries: list[dict[str, Any]], names: list[str]) -> dict[str, Any]:
    """The label space shared by every non-empty partition; raises naming the first two
    partitions that disagree and where."""
    spaces = [(s["space"], name) for s, name in zip(summaries, names, strict=True) if s["n"]]
    if not spaces:
        raise InvalidInputError("every partition is empty: nothing to train on")
    first, first_name = spaces[0]
    for space, name in spaces[1:]:
        where = _differs(first, space, "label space")
        if where:
            hint = ""
            if where.startswith("label space.arrays"):
                hint = " (the estimator fitted arrays on each partition's own data)"
            raise InvalidInputError(
                f"{first_name} and {name} have different label spaces (at {where}){hint}: "
                "every partition must have the same tags, classes, label count and hierarchy"
            )
    return dict(first)
