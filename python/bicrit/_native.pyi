"""Type stubs of the native module ``bicrit._native`` (Rust, pyo3). Private: use the public API."""

__version__: str

def default_threads() -> int:
    """Number of threads of the native thread pool (what ``n_jobs=-1`` means)."""

def _panic_for_tests(message: str) -> None: ...
def _error_for_tests(kind: str, message: str) -> None: ...

# --- hierarchy structure -------------------------------------------------------------------------
from typing import Any  # noqa: E402

def hierarchy_structure(
    parents: list[list[int]],
    root: int,
    n_features: int,
    *,
    labels: str = "any",
    multilabel: bool = True,
    loss: str = "node",
    node_scale: list[float] | None = None,
    node_loss_weight: list[float] | None = None,
    layout: str = "node",
    names: list[str] | None = None,
) -> Any: ...
def hierarchy_info(s: Any) -> dict[str, Any]: ...
def hierarchy_relaxation(
    s: Any,
    w: Any,
    x: Any,
    y_true: Any,
    coef: dict[str, float] | None = None,
    margin_coef: float = 1.0,
) -> tuple[float, Any]: ...
def hierarchy_closure(s: Any, nodes: list[int]) -> Any: ...
def hierarchy_batch_oracle_scores(
    s: Any,
    scores: Any,
    y_true: Any,
    coef: dict[str, float] | None = None,
    *,
    margin_coef: float = 1.0,
    tiebreak: tuple[float, dict[str, float]] | None = None,
    k: int = 1,
    cone: tuple[float, bool, float, bool] | None = None,
    n_jobs: int | None = None,
) -> list[list[tuple[Any, float, dict[str, float]]]]: ...

# --- end hierarchy structure ---------------------------------------------------------------------
