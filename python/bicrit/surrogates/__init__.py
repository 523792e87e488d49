"""Surrogates ψ(h, g): bi-criteria surrogate losses (DESIGN §2, thesis table ``table:surrogate``).

A surrogate is ``max_y ψ(h(y), g(y))``; usually h = m (the margin) and g = L (the task loss).
Built-ins, registered under these names (``bicrit.surrogate(name, **params)``):

============== ====================================== =================================
name           ψ(h, g)                                parameters (domain)
============== ====================================== =================================
margin         h + g
slack          (h + 1)·g                              (product form: angular, bisecting…)
generalized    h·g^β + g^α                            β ≥ 0 and β ≤ α ≤ β + 1
beta           h·g^β + g                              β ∈ [0, 1]
log            g·log(1 + e^h)
probloss       2g·Φ_N(h/σ), σ² = 2g/π                 g = Hamming loss
probloss-convex ProbLoss for h ≤ 0, g + √g·h for h > 0
microf1        h/(−g), h = H + m, g = −(|y| + |y_i|)  Φ := 0 at |y| = |y_i| = 0
============== ====================================== =================================

Parameters outside the quasi-concave, increasing domain raise
:class:`~bicrit.errors.InvalidParameterError` naming the parameter and the domain (the thesis
prints the generalized-scaling domain with α and β swapped; DESIGN §2 has the corrected form).

A surrogate written in Python is any object with ``value(h, g)`` and ``grad(h, g)`` (returning
``(∂ψ/∂h, ∂ψ/∂g)``), optionally ``name``, ``product_shift`` (s when ψ = (h + s)·g exactly, else
None), ``affine_in_h`` (default False), ``convex_in_h`` (default True; False makes the
estimators warm up with margin rescaling) and ``tangent(h, g)`` (ψ_g/ψ_h where the gradient
underflows); it works in every search its form allows.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import numpy as np

from bicrit import _native
from bicrit.registry import Registrar

__all__ = ["Surrogate", "register_builtins", "surrogate"]


class Surrogate:
    """A built-in surrogate (native). ``value`` and ``grad`` accept scalars or numpy arrays."""

    def __init__(self, name: str, **params: float) -> None:
        self._native = _native.Surrogate(name, params)

    @property
    def name(self) -> str:
        """Registry name."""
        return self._native.name

    @property
    def params(self) -> dict[str, float]:
        """Parameters."""
        return self._native.params

    @property
    def product_shift(self) -> float | None:
        """s when ψ(h, g) = (h + s)·g exactly (slack rescaling: 1), else None."""
        return self._native.product_shift

    @property
    def affine_in_h(self) -> bool:
        """Whether ψ is affine in h (what BCFW and cutting plane need)."""
        return self._native.affine_in_h

    @property
    def convex_in_h(self) -> bool:
        """Whether ψ is convex in h, i.e. the loss convex in w (ProbLoss is not)."""
        return self._native.convex_in_h

    @staticmethod
    def _arrays(h: Any, g: Any) -> tuple[np.ndarray, np.ndarray, tuple[int, ...]]:
        hb, gb = np.broadcast_arrays(np.asarray(h, dtype=float), np.asarray(g, dtype=float))
        shape = hb.shape
        return np.ascontiguousarray(hb.ravel()), np.ascontiguousarray(gb.ravel()), shape

    def value(self, h: Any, g: Any) -> Any:
        """ψ(h, g); a float for scalar input, an array of the broadcast shape otherwise."""
        hv, gv, shape = self._arrays(h, g)
        out = self._native.value_array(hv, gv).reshape(shape)
        return float(out) if shape == () else out

    def grad(self, h: Any, g: Any) -> tuple[Any, Any]:
        """(∂ψ/∂h, ∂ψ/∂g) at (h, g)."""
        hv, gv, shape = self._arrays(h, g)
        dh, dg = self._native.grad_array(hv, gv)
        if shape == ():
            return float(dh[0]), float(dg[0])
        return dh.reshape(shape), dg.reshape(shape)

    def __call__(self, h: Any, g: Any) -> Any:
        return self.value(h, g)

    def __repr__(self) -> str:
        return repr(self._native)

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


_BUILTINS: dict[str, tuple[str, dict[str, Any]]] = {
    "margin": ("margin rescaling ψ = h + g", {"params": {}, "product_form": False}),
    "slack": ("slack rescaling ψ = (h + 1)·g", {"params": {}, "product_form": True}),
    "generalized": (
        "generalized scaling ψ = h·g^β + g^α",
        {"params": {"alpha": "β ≤ α ≤ β + 1", "beta": "β ≥ 0"}, "product_form": "α = β = 1"},
    ),
    "beta": ("β-scaling ψ = h·g^β + g", {"params": {"beta": "[0, 1]"}, "product_form": "β = 1"}),
    "log": ("loss-scaled log loss ψ = g·log(1 + e^h)", {"params": {}, "product_form": False}),
    "probloss": ("ProbLoss ψ = 2g·Φ_N(h/σ), σ² = 2g/π", {"params": {}, "product_form": False}),
    "probloss-convex": (
        "ProbLoss with its convex extension g + √g·h for h > 0",
        {"params": {}, "product_form": False},
    ),
    "microf1": (
        "Micro-F1 surrogate ψ = h/(−g), h = H + m, g = −(|y| + |y_i|)",
        {"params": {}, "product_form": False, "factors": "h = hamming + m, g = −(|y| + |y_i|)"},
    ),
}


def register_builtins(registry: Registrar) -> None:
    """Registers bicrit's built-in surrogates."""
    for name, (description, caps) in _BUILTINS.items():
        affine = name not in ("log", "probloss", "probloss-convex")
        capabilities = {
            "factors": "h = m, g = L",
            "affine_in_h": affine,
            "convex_in_h": name != "probloss",
            "searches": ["convex-hull", "convex-hull-ban", "convex-hull-kbest"]
            + (["angular", "bisecting", "binary", "sarawagi"] if caps["product_form"] else []),
            **caps,
        }
        registry.add_surrogate(
            name, partial(Surrogate, name), description=description, capabilities=capabilities
        )
