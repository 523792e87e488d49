"""Type stubs of the native module ``bicrit._native`` (Rust, pyo3). Private: use the public API."""

__version__: str

def default_threads() -> int:
    """Number of threads of the native thread pool (what ``n_jobs=-1`` means)."""

def _panic_for_tests(message: str) -> None: ...
def _error_for_tests(kind: str, message: str) -> None: ...

# --- structures: dependency ---------------------------------------------------------------------
def dependency_structure(
    n_features: int, projective: bool, labeled: bool, n_relations: int, label_weight: float
) -> object:
    """The native ``dependency`` structure (a ``NativeStructure``); see
    ``bicrit.structures.dependency``."""

# --- end structures: dependency -----------------------------------------------------------------
