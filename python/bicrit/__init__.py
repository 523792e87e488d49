"""bicrit: structured SVMs with any bi-criteria surrogate loss, at margin-rescaling speed.

The public API is listed in ``__all__``; everything else is private. Families mirror the design
and the Rust crates: surrogates, searches, structures, learners, hierarchy.
"""

from __future__ import annotations

from bicrit import _native, errors, registry
from bicrit.errors import BicritError
from bicrit.searches import Cone, PointSetOracle, SearchResult, search
from bicrit.surrogates import Surrogate, surrogate

__version__: str = _native.__version__

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
