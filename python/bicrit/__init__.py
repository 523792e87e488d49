"""bicrit: structured SVMs with any bi-criteria surrogate loss, at margin-rescaling speed.

The public API is listed in ``__all__``; everything else is private. Families mirror the design
and the Rust crates: surrogates, searches, structures, learners, hierarchy.
"""

from __future__ import annotations

from typing import Any

from bicrit import _native, errors, registry
from bicrit.errors import BicritError
from bicrit.searches import Cone, PointSetOracle, SearchResult
from bicrit.surrogates import Surrogate

__version__: str = _native.__version__


def surrogate(name: str, **params: float) -> Any:
    """The surrogate ``name`` from the registry, built with ``params`` (see
    :mod:`bicrit.surrogates`); parameters outside the admissible domain raise
    :class:`~bicrit.errors.InvalidParameterError`."""
    return registry.create("surrogate", name, **params)


def search(
    name: str,
    oracle: Any,
    surrogate: Any,
    *,
    warm: Any = None,
    xi: float | None = None,
    **options: Any,
) -> SearchResult:
    """Loss-augmented inference: the search ``name`` (see :mod:`bicrit.searches`) over
    ``oracle`` for ``surrogate`` (a surrogate object or a registered name), with ``options``;
    ``warm`` is the previous result for the same instance, ``xi`` the slack for ``sarawagi``."""
    from bicrit.searches import run

    return run(name, oracle, surrogate, warm=warm, xi=xi, **options)


__all__ = [
    "BicritError",
    "Cone",
    "PointSetOracle",
    "SearchResult",
    "Surrogate",
    "__version__",
    "errors",
    "registry",
    "search",
    "surrogate",
]
