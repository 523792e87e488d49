"""Exceptions raised by bicrit.

Every error bicrit raises derives from :class:`BicritError`; input and parameter errors also
derive from :class:`ValueError` so that code written for scikit-learn keeps working. The native
core maps its errors onto these classes in one place (``rust/bicrit-py/src/errors.rs``), and a Rust
panic surfaces as :class:`NativePanic`, never as a crash.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

__all__ = [
    "BicritError",
    "BrokenPluginWarning",
    "DataFormatError",
    "IncompatibleError",
    "InvalidInputError",
    "InvalidParameterError",
    "ModelFormatError",
    "NativePanic",
    "PluginError",
    "PluginTypeError",
    "RegistryError",
    "SolverError",
    "UnknownNameError",
    "UnsupportedQueryError",
]


class BicritError(Exception):
    """Base class of every bicrit error."""


class InvalidInputError(BicritError, ValueError):
    """Malformed input: shape mismatch, NaN or inf, label outside the structure, empty sequence."""


class InvalidParameterError(BicritError, ValueError):
    """A parameter outside its admissible domain."""


class IncompatibleError(BicritError, ValueError):
    """Pieces that do not combine (a search with a surrogate it was not derived for, …)."""


class UnsupportedQueryError(BicritError, ValueError):
    """An oracle was asked for a capability it does not declare (ban list, k-best, cone)."""


class ModelFormatError(BicritError, ValueError):
    """A saved model cannot be read: corrupted or truncated file, checksum mismatch, missing entry,
    a format version newer than this bicrit reads, or a plugin it needs is not installed."""


class SolverError(BicritError, RuntimeError):
    """A numerical solver (LP, QP, IP, max-flow) failed."""


class PluginError(BicritError, RuntimeError):
    """A plugin raised while called back from native code (when its exception was lost)."""


class PluginTypeError(InvalidInputError, TypeError):
    """A plugin's callback answered with a value of the wrong type (an oracle returning a dict
    instead of ``(label, margin, terms)`` answers, a surrogate's ``value`` returning a string,
    …). Raised where the answer enters bicrit; the message names the plugin object, the
    method, the type expected and what came back."""


class NativePanic(BicritError, RuntimeError):
    """A bug in bicrit's native code: a Rust panic caught at the boundary."""


class RegistryError(BicritError, LookupError):
    """The plugin registry is inconsistent (two packages registering one name, …)."""


class UnknownNameError(RegistryError, KeyError):
    """A lookup of a name that nothing registered; the message lists the known names."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


class DataFormatError(InvalidInputError):
    """A data file is malformed. ``path`` and ``line`` (1-based, or None) locate the problem."""

    def __init__(self, path: object, line: int | None, message: str) -> None:
        self.path = str(path)
        self.line = line
        where = f"{self.path}, line {line}" if line is not None else self.path
        super().__init__(f"{where}: {message}")


class BrokenPluginWarning(UserWarning):
    """A plugin package failed to load and was skipped; the others still load."""


def check_choice(name: str, value: Any, choices: Iterable[Any]) -> None:
    """Raises :class:`InvalidParameterError` unless the parameter ``name`` is one of
    ``choices``."""
    options = tuple(choices)
    if value not in options:
        *first, last = map(repr, options)
        listed = f"{'one of ' if len(first) > 1 else ''}{', '.join(first)} or {last}"
        raise InvalidParameterError(f"{name} must be {listed if first else last}, got {value!r}")


def check_flag(name: str, value: Any) -> None:
    """Raises :class:`InvalidParameterError` unless the parameter ``name`` is a boolean."""
    import numpy as np

    if not isinstance(value, bool | np.bool_):
        raise InvalidParameterError(f"{name} must be True or False, got {value!r}")
