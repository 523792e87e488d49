"""Type stubs of the native module ``bicrit._native`` (Rust, pyo3). Private: use the public API."""

__version__: str

def default_threads() -> int:
    """Number of threads of the native thread pool (what ``n_jobs=-1`` means)."""

def _panic_for_tests(message: str) -> None: ...
def _error_for_tests(kind: str, message: str) -> None: ...

# --- chain structure (issue 4, item 3) ---------------------------------------------------------
def chain_structure(
    n_states: int,
    n_features: int,
    outside: list[int] | None = None,
    loss: str = "hamming",
    tag_names: list[str] | None = None,
    scheme: str = "iob2",
) -> object:
    """A native ``chain`` structure (a ``NativeStructure``); see ``bicrit.structures.Chain``."""

# --- end chain structure -----------------------------------------------------------------------
