"""Type stubs of the native module ``bicrit._native`` (Rust, pyo3). Private: use the public API."""

__version__: str

def default_threads() -> int:
    """Number of threads of the native thread pool (what ``n_jobs=-1`` means)."""

def _panic_for_tests(message: str) -> None: ...
def _error_for_tests(kind: str, message: str) -> None: ...

# --- structures: multilabel -------------------------------------------------------------------

def multilabel_structure(
    n_labels: int,
    n_features: int,
    edges: str | list[tuple[int, int]],
    inference: str = "auto",
    relaxed_solver: str = "qpbo",
) -> object:
    """The ``multilabel`` structure (a ``NativeStructure``); ``edges`` is ``"full"``, ``"chain"``
    or (i, j) pairs."""

def multilabel_chow_liu(y: object) -> list[tuple[int, int]]:
    """Chow–Liu tree (i < j pairs) of an (n, K) int64 0/1 label matrix."""

# --- end multilabel ---------------------------------------------------------------------------
