"""Surrogates ψ(h, g): bi-criteria surrogate losses (thesis §``sec:quasi_convex_surrogate``,
table ``table:surrogate``).

A surrogate is ``max_y ψ(h(y), g(y))``; usually h = m (the margin) and g = L (the task loss).
The built-ins are native (``rust/bicrit-surrogates``) and registered under their names
(``bicrit.surrogate(name, **params)``); ``bicrit plugins --kind surrogate`` and
``docs/capabilities.md`` list each one's formula, the domain of its parameters, whether it is
affine or convex in h, and the searches and learners it combines with — all read from the
native core (:func:`bicrit._native.catalog`), where they are decided.

Parameters outside the quasi-concave, increasing domain raise
:class:`~bicrit.errors.InvalidParameterError` naming the parameter and the domain (the thesis
prints the generalized-scaling domain with α and β swapped; the domain here is the one under
which ψ is quasi-concave and increasing).

A surrogate written in Python is any object with ``value(h, g)`` and ``grad(h, g)`` (returning
``(∂ψ/∂h, ∂ψ/∂g)``), optionally ``name``, ``product_shift`` (s when ψ = (h + s)·g exactly, else
None), ``affine_in_h`` (default False), ``convex_in_h`` (default True; False makes the
estimators warm up with margin rescaling) and ``tangent(h, g)`` (ψ_g/ψ_h where the gradient
underflows); it works in every search its form allows, and the registry computes its
capabilities from these declarations as it does for the built-ins.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import numpy as np

from bicrit import _native
from bicrit.registry import Registrar

__all__ = ["Surrogate", "capabilities", "register_builtins", "surrogate"]


class Surrogate(_native.Surrogate):
    """A built-in surrogate (native; the object itself is what the native searches and learners
    run). ``value`` and ``grad`` accept scalars or numpy arrays. Inherited from the native class:
    ``name``, ``params``, ``product_shift`` (s when ψ = (h + s)·g exactly), ``affine_in_h`` (what
    BCFW and cutting plane need) and ``convex_in_h`` (False for ProbLoss)."""

    def __new__(cls, name: str, **params: float) -> Surrogate:
        return super().__new__(cls, name, params)

    @staticmethod
    def _arrays(h: Any, g: Any) -> tuple[np.ndarray, np.ndarray, tuple[int, ...]]:
        hb, gb = np.broadcast_arrays(np.asarray(h, dtype=float), np.asarray(g, dtype=float))
        shape = hb.shape
        return np.ascontiguousarray(hb.ravel()), np.ascontiguousarray(gb.ravel()), shape

    def value(self, h: Any, g: Any) -> Any:
        """ψ(h, g); a float for scalar input, an array of the broadcast shape otherwise."""
        hv, gv, shape = self._arrays(h, g)
        out = self.value_array(hv, gv).reshape(shape)
        return float(out) if shape == () else out

    def grad(self, h: Any, g: Any) -> tuple[Any, Any]:
        """(∂ψ/∂h, ∂ψ/∂g) at (h, g)."""
        hv, gv, shape = self._arrays(h, g)
        dh, dg = self.grad_array(hv, gv)
        if shape == ():
            return float(dh[0]), float(dg[0])
        return dh.reshape(shape), dg.reshape(shape)

    def __call__(self, h: Any, g: Any) -> Any:
        return self.value(h, g)

    def __reduce__(self) -> tuple[Any, ...]:
        return (_make, (self.name, self.params))


def surrogate(name: str, **params: float) -> Any:
    """The surrogate registered as ``name``, built with ``params`` (``bicrit.surrogate``);
    parameters outside the admissible domain raise
    :class:`~bicrit.errors.InvalidParameterError`."""
    from bicrit import registry

    return registry.create("surrogate", name, **params)


def _make(name: str, params: dict[str, float]) -> Surrogate:
    return Surrogate(name, **params)


def capabilities(surrogate: Any) -> dict[str, Any]:
    """What the native core accepts ``surrogate`` with (affine/convex in h, product form, the
    searches and learners it combines with), judged exactly as for the built-ins. A plugin surrogate
    declares these as its registry capabilities (``registrar.add_surrogate(..., capabilities=)``),
    so ``bicrit plugins`` and the docs' tables show what the core will actually run."""
    return dict(_native.surrogate_capabilities(surrogate))


def register_builtins(registry: Registrar) -> None:
    """Registers bicrit's built-in surrogates, described by the native catalog."""
    registry.add_native("surrogate", lambda name: partial(Surrogate, name))
