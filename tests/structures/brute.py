"""Brute-force reference for structure oracles: enumerate every label, score it through the
structure's own ``joint_feature`` and ``terms`` (independent of the oracle code), and apply the
query semantics (ban list, cone, k-best, lexicographic tie-break) literally."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from bicrit.structures.base import Cone


def objective(
    margin: float, terms: Mapping[str, float], margin_coef: float, coef: Mapping[str, float]
) -> float:
    return margin_coef * margin + sum(c * terms[t] for t, c in coef.items())


def brute_force(
    s: Any,
    w: np.ndarray,
    x: Any,
    y_true: Any,
    labels: Iterable[Any],
    coef: Mapping[str, float] | None = None,
    *,
    margin_coef: float = 1.0,
    tiebreak: tuple[float, Mapping[str, float]] | None = None,
    ban: Sequence[Any] = (),
    cone: Cone | None = None,
    same: Callable[[Any, Any], bool] = lambda a, b: bool(np.array_equal(a, b)),
) -> list[tuple[float, float, Any, float, dict[str, float]]]:
    """All admissible labels as (primary, secondary, label, margin, terms), best first."""
    coef = dict(coef or {})
    gold = float(np.dot(w, s.joint_feature(x, y_true)))
    out = []
    for y in labels:
        if any(same(y, b) for b in ban):
            continue
        m = float(np.dot(w, s.joint_feature(x, y))) - gold
        t = s.terms(y, y_true)
        if cone is not None and not cone.contains(m, t["loss"]):
            continue
        p = objective(m, t, margin_coef, coef)
        q = 0.0 if tiebreak is None else objective(m, t, tiebreak[0], tiebreak[1])
        out.append((p, q, y, m, t))
    out.sort(key=lambda r: (-r[0], -r[1]))
    return out


def assert_matches(
    found: Sequence[Any],
    expected: Sequence[tuple[float, float, Any, float, dict[str, float]]],
    k: int,
    coef: Mapping[str, float] | None,
    margin_coef: float,
    tiebreak: tuple[float, Mapping[str, float]] | None,
    tol: float = 1e-9,
) -> None:
    """The oracle's answers have the brute-force values, in order (labels may differ on ties)."""
    coef = dict(coef or {})
    assert len(found) == min(k, len(expected)), (len(found), len(expected))
    for a, e in zip(found, expected, strict=False):
        p = objective(a.margin, a.terms, margin_coef, coef)
        scale = 1.0 + abs(e[0])
        assert abs(p - e[0]) <= tol * scale, (p, e[0], a, e)
        if tiebreak is not None:
            q = objective(a.margin, a.terms, tiebreak[0], tiebreak[1])
            assert abs(q - e[1]) <= tol * (1.0 + abs(e[1])), (q, e[1])
