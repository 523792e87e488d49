"""The native module loads, and its errors and panics surface as Python exceptions."""

from __future__ import annotations

import pytest

import bicrit
from bicrit import _native
from bicrit.errors import (
    BicritError,
    IncompatibleError,
    InvalidInputError,
    InvalidParameterError,
    NativePanic,
    SolverError,
    UnsupportedQueryError,
)


def test_native_module_imports() -> None:
    assert bicrit.__version__ == _native.__version__
    assert _native.default_threads() >= 1


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_panic_becomes_exception(n_jobs: int) -> None:
    """On the calling thread, and (n_jobs=2) in a parallel pass on the learners' pool, where
    epochs run."""
    with pytest.raises(NativePanic, match="kaboom"):
        _native._panic_for_tests("kaboom", n_jobs)
    # and the interpreter is still usable afterwards
    assert _native.default_threads() >= 1


@pytest.mark.parametrize(
    ("kind", "cls", "base"),
    [
        ("input", InvalidInputError, ValueError),
        ("param", InvalidParameterError, ValueError),
        ("incompatible", IncompatibleError, ValueError),
        ("unsupported", UnsupportedQueryError, ValueError),
        ("solver", SolverError, RuntimeError),
    ],
)
def test_error_kinds_map_to_classes(kind: str, cls: type, base: type) -> None:
    with pytest.raises(cls, match="the message") as info:
        _native._error_for_tests(kind, "the message")
    assert isinstance(info.value, BicritError)
    assert isinstance(info.value, base)


def test_one_build_of_the_native_module() -> None:
    """Python prefers ``_native.cpython-3XX-….so`` to ``_native.abi3.so``: a stale per-version
    build left beside the abi3 one (a work tree from before the wheels were abi3) would be
    loaded instead of the current build."""
    from pathlib import Path

    builds = sorted(p.name for p in Path(bicrit.__file__).parent.glob("_native*.so"))
    assert len(builds) == 1, f"several builds of bicrit._native: {builds}; delete the stale ones"
