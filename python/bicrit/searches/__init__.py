"""Searches: loss-augmented inference ``max_y ψ(h(y), g(y))`` through a λ-oracle
(docs/architecture.md, Searches).

Use :func:`bicrit.search`::

    oracle = bicrit.PointSetOracle(h=[0, 0.3, -0.2], g=[0, 2, 4])   # gold = the point (0, 0)
    result = bicrit.search("convex-hull", oracle, bicrit.surrogate("slack"))
    result.value, result.labels, result.weights, result.calls, result.upper_bound

Registered searches (their registry ``capabilities`` say what they need):

================== ============ ============================ ===================================
name               oracle       surrogate                    guarantee
================== ============ ============================ ===================================
sarawagi           λ            product form; needs ``xi``   approximate (cutting plane only)
binary             λ            product form                 approximate
bisecting          λ            product form                 approximate
angular            cone         ψ = (h + 1)·g                exact, ≤ 2M + 3 calls
convex-hull        λ            any quasi-concave increasing exact over the convex hull
convex-hull-ban    ban list     any                          exact integral
convex-hull-kbest  k-best       any                          exact integral
frontier           frontier     any non-decreasing in h      exact integral, 1 call
================== ============ ============================ ===================================

``frontier`` asks the oracle once for the *frontier by loss value* — for every attainable g, a
label of largest h — and returns the best of those points under ψ: every label is dominated by
the frontier point of its g, so for a ψ non-decreasing in h (every built-in surrogate) this is
the exact integral optimum, certified (``upper_bound == value``). Ties of ψ go to the larger h,
then to the smaller g; the gold label wins every tie. Structures: chains with the Hamming loss
(one O(T²·S²) DP over position, tag and number of wrong tokens), multiclass, point sets; the
surrogate's g must be the task loss (not Micro-F1, whose g counts ``|y|``) — refused with
:class:`~bicrit.errors.IncompatibleError` otherwise. On chains it replaces the ban-list loop,
which needs hundreds of calls per inference for ProbLoss on CoNLL.

``convex-hull`` also takes ``integral="ban" | "kbest"`` (same as the two other names). Other
options: ``max_calls``, ``lambda0``, ``eps`` (angular: stop at (1 + eps)-optimality), ``tol``
(bisecting/binary/sarawagi: relative width of the λ interval). ``warm=previous_result`` starts
from the previous inference of the same instance (its hull vertices / label cache, re-evaluated
through ``oracle.evaluate`` when the oracle has it, else its λ); ``xi`` is the slack ξ_i for
``sarawagi``. Combinations the design does not allow raise
:class:`~bicrit.errors.IncompatibleError` before any oracle call.

**Oracle protocol** (for oracles written in Python; :class:`PointSetOracle` implements it
natively):

* ``query(lam, ban=(), k=1, cone=None)`` → list of ``(label, h, g)``, best first under
  ``h + lam·g``, at most ``k`` long, empty when no label qualifies. ``lam == 0.0`` and
  ``lam == math.inf`` are lexicographic (largest h then largest g; largest g then largest h).
  ``ban`` holds labels previously returned; ``cone`` is a :class:`Cone` on (h + 1, g).
* ``capabilities`` (optional): dict or object with booleans ``ban``, ``kbest``, ``cone``,
  ``relaxed``, ``frontier``; missing ones are False.
* ``frontier()`` (with ``capabilities["frontier"]``): list of ``(label, h, g)``, one label of
  largest h for every attainable g (what the ``frontier`` search asks for).
* ``gold()`` (optional): the gold label ``(label, h, g)`` or None — the floor of every search.
* ``evaluate(labels)`` (optional): the current ``(h, g)`` of earlier labels, for warm starts.

Labels are opaque objects handed back in ``ban`` and in the result. Exceptions raised by a Python
oracle or surrogate propagate unchanged. Python callbacks need the GIL, so they run serialised.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial
from typing import Any

import numpy as np

from bicrit import _native
from bicrit.registry import Registrar
from bicrit.structures.base import Cone

__all__ = [
    "Cone",
    "PointSetOracle",
    "Search",
    "SearchResult",
    "register_builtins",
    "search",
]


class PointSetOracle(_native.PointSetOracle):
    """An explicit finite set of label points (h, g) in the surrogate's coordinates, answering the
    λ-oracle (exact lexicographic λ = 0 and ∞), the constrained λ-oracle, ban lists (by label),
    k-best and the frontier by loss value (the largest h for every distinct g) — the reference
    for tests, benchmarks and plots.

    ``labels`` (optional) are the objects returned for the points (default: their indices).
    ``gold`` is the index of the gold label; by default the first point (0, 0), if any (for
    margin, slack, β-scaling and ProbLoss h = m and g = L, so the gold label is (0, 0)).
    ``ban``/``kbest``/``cone``/``frontier`` switch capabilities off to test λ-only searches. Its own
    ``query(lam, ban=(), k=1, cone=None)`` takes point *indices* in ``ban`` and a cone as a
    ``(lo, lo_closed, hi, hi_closed)`` tuple; ``points()`` returns the coordinates; ``calls``
    counts the queries answered.
    """

    def __new__(
        cls,
        h: Any,
        g: Any,
        labels: Any = None,
        gold: int | None = None,
        ban: bool = True,
        kbest: bool = True,
        cone: bool = True,
        frontier: bool = True,
    ) -> PointSetOracle:
        hv = np.ascontiguousarray(np.asarray(h, dtype=float).ravel())
        gv = np.ascontiguousarray(np.asarray(g, dtype=float).ravel())
        return super().__new__(
            cls,
            hv,
            gv,
            None if labels is None else list(labels),
            gold,
            ban,
            kbest,
            cone,
            frontier,
        )


@dataclass(frozen=True)
class SearchResult:
    """The result of one inference.

    ``value`` is Φ at the answer; ``labels``/``weights``/``points`` hold one label for an integral
    answer and two for a fractional point on a hull edge (weights sum to 1); ``calls`` counts
    oracle calls by kind (``lambda``, ``extreme`` (λ = 0 / ∞), ``cone``, ``ban``, ``kbest``,
    ``frontier``, ``total``; ``evaluated`` counts warm-start labels re-evaluated, not calls);
    ``upper_bound`` is a certified bound on the optimum over the label set the method targets
    (None where the method gives none); ``warm`` seeds the next inference of the same instance.
    """

    value: float
    labels: list[Any]
    weights: list[float]
    points: list[tuple[float, float]]
    calls: dict[str, int]
    upper_bound: float | None
    lambda_: float | None
    is_gold: bool
    search: str
    trace: list[dict[str, Any]] = field(repr=False)
    warm: Any = field(repr=False)

    @property
    def label(self) -> Any:
        """The label of an integral answer; raises for a fractional one."""
        if len(self.labels) != 1:
            raise ValueError(
                f"the answer is fractional over {len(self.labels)} labels; use labels/weights"
            )
        return self.labels[0]

    @property
    def fractional(self) -> bool:
        """Whether the answer is a point inside a hull edge."""
        return len(self.labels) > 1


class Search(_native.SearchSpec):
    """A built-in search with its options (what the registry's factories return; the object
    itself is what the native learners run). ``name`` is its registry name."""

    options: dict[str, Any]

    def __new__(cls, name: str, **options: Any) -> Search:
        self = super().__new__(cls, name, options)
        self.options = dict(options)
        return self

    def requirements(self) -> dict[str, bool]:
        """What the search needs from the surrogate and the oracle."""
        return super().requirements()

    def check(self, oracle: Any, surrogate: Any) -> None:
        """Raises :class:`~bicrit.errors.IncompatibleError` for a combination it cannot run."""
        super().check(oracle, _as_surrogate(surrogate))

    def run(
        self, oracle: Any, surrogate: Any, *, warm: Any = None, xi: float | None = None
    ) -> SearchResult:
        """One inference."""
        if isinstance(warm, SearchResult):
            warm = warm.warm
        if warm is not None and not isinstance(warm, _native.WarmState):
            raise TypeError(f"warm must be a SearchResult or None, got {type(warm).__name__}")
        out = _native.run_search(self, oracle, _as_surrogate(surrogate), warm, xi)
        return SearchResult(search=self.name, **out)

    def __repr__(self) -> str:
        opts = "".join(f", {k}={v!r}" for k, v in self.options.items())
        return f"Search({self.name!r}{opts})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (_make, (self.name, self.options))


def _make(name: str, options: dict[str, Any]) -> Search:
    return Search(name, **options)


def _as_surrogate(surrogate: Any) -> Any:
    """A surrogate object from an object or a registered name (built-in or from a plugin)."""
    from bicrit import registry

    return registry.resolve("surrogate", surrogate)


def search(
    name: str,
    oracle: Any,
    surrogate: Any,
    *,
    warm: Any = None,
    xi: float | None = None,
    **options: Any,
) -> SearchResult:
    """Loss-augmented inference (``bicrit.search``): the search registered as ``name``, built with
    ``options``, over ``oracle`` for ``surrogate`` (a surrogate object or a registered name);
    ``warm`` is the previous result for the same instance, ``xi`` the slack for ``sarawagi``.
    A search contributed by a plugin is any object its factory returns with
    ``run(oracle, surrogate, *, warm, xi)``."""
    from bicrit import registry

    built = registry.create("search", name, **options)
    result: SearchResult = built.run(oracle, _as_surrogate(surrogate), warm=warm, xi=xi)
    return result


def register_builtins(registry: Registrar) -> None:
    """Registers bicrit's built-in searches, described by the native catalog."""
    registry.add_native("search", lambda name: partial(Search, name))
