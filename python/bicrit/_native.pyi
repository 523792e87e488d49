"""Type stubs of the native module ``bicrit._native`` (Rust, pyo3). Private: use the public API."""

__version__: str

def default_threads() -> int:
    """Number of threads of the native thread pool (what ``n_jobs=-1`` means)."""

def _panic_for_tests(message: str) -> None: ...
def _error_for_tests(kind: str, message: str) -> None: ...

# ---- surrogates and searches (rust/bicrit-py/src/{surrogates,searches}.rs) ----

from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

SURROGATE_NAMES: list[str]
SEARCH_NAMES: list[str]

class Surrogate:
    """A built-in surrogate ψ(h, g) by registry name."""

    def __init__(self, name: str, params: dict[str, float] | None = None) -> None: ...
    @property
    def name(self) -> str: ...
    @property
    def params(self) -> dict[str, float]: ...
    @property
    def product_shift(self) -> float | None: ...
    @property
    def affine_in_h(self) -> bool: ...
    def value_array(self, h: np.ndarray, g: np.ndarray) -> np.ndarray: ...
    def grad_array(self, h: np.ndarray, g: np.ndarray) -> tuple[np.ndarray, np.ndarray]: ...

class SearchSpec:
    """A search by name with its options (checked on construction)."""

    def __init__(self, name: str, options: dict[str, Any] | None = None) -> None: ...
    @property
    def name(self) -> str: ...
    def requirements(self) -> dict[str, bool]: ...
    def check(self, oracle: Any, surrogate: Any) -> None: ...

class PointSetOracle:
    """An explicit point set as an oracle (labels: indices or the given objects)."""

    def __new__(
        cls,
        h: np.ndarray,
        g: np.ndarray,
        labels: list[Any] | None = None,
        gold: int | None = None,
        ban: bool = True,
        kbest: bool = True,
        cone: bool = True,
    ) -> PointSetOracle: ...
    def without_gold(self) -> PointSetOracle: ...
    def __len__(self) -> int: ...
    def points(self) -> tuple[list[float], list[float]]: ...
    @property
    def gold_index(self) -> int | None: ...
    @property
    def calls(self) -> int: ...
    @property
    def capabilities(self) -> dict[str, bool]: ...
    def query(
        self,
        lam: float,
        ban: list[int] = ...,
        k: int = 1,
        cone: tuple[float, bool, float, bool] | None = None,
    ) -> list[tuple[Any, float, float]]: ...

class WarmState:
    """What a search needs to warm-start the next inference (opaque)."""

    @property
    def lambda_(self) -> float | None: ...
    def __len__(self) -> int: ...

def run_search(
    spec: SearchSpec,
    oracle: Any,
    surrogate: Any,
    warm: WarmState | None = None,
    xi: float | None = None,
) -> dict[str, Any]: ...
