"""What a partition is made of, read on the worker that holds it: a dataset object, an
``(X, Y)`` pair, or the path of a dataset file (:func:`bicrit.datasets.read_file`)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from bicrit.errors import InvalidInputError

__all__ = ["PartitionError", "describe", "materialize", "split"]


class PartitionError(InvalidInputError):
    """A partition could not be read or prepared; the message names it (index and source)."""


def describe(index: int, source: Any) -> str:
    """``partition 3 (data/part-3.conll)``: how errors name a partition."""
    if isinstance(source, str | os.PathLike):
        return f"partition {index} ({os.fspath(source)})"
    key = getattr(source, "key", None)
    return f"partition {index}" + (f" ({key})" if key is not None else "")


def materialize(source: Any) -> Any:
    """The partition's data: a file read here (paths), else the object itself."""
    if isinstance(source, str | os.PathLike):
        from bicrit.datasets import read_file

        path = Path(source)
        if not path.is_file():
            raise InvalidInputError(f"no such file on this worker: {path}")
        return read_file(path)
    return source


def split(data: Any) -> tuple[Any, Any]:
    """``(X, Y)`` of a partition: a pair as given, a dataset object as ``X`` with ``Y=None``
    (the estimator splits it)."""
    if isinstance(data, tuple):
        if len(data) != 2:
            raise InvalidInputError(
                f"a partition given as a tuple must be (X, Y), got a tuple of {len(data)}"
            )
        return data
    return data, None
