"""Smoothed slack rescaling: ψ_τ(h, g) = g · τ · log(1 + exp((h + 1)/τ)), τ > 0.

With h = m (the margin) and g = L (the task loss), slack rescaling is max_y L·(1 + m) — or, with
the gold label's zero floor, max_y L·max(0, 1 + m). Replacing the hinge max(0, 1 + m) by its
softplus smoothing at temperature τ gives ψ_τ:

* τ → 0: ψ_τ → g·max(0, h + 1) (slack rescaling, hinged); τ·softplus(z/τ) ≥ max(0, z) for all τ,
  so ψ_τ upper-bounds hinged slack rescaling and, at a label scoring at least as high as the gold
  one (m ≥ 0), the task loss itself;
* τ = 1 is bicrit's loss-scaled log loss g·log(1 + e^h) shifted by one unit of margin.

Properties (what a bicrit search needs; bicrit's docs/architecture.md, "Surrogates").
Write f(h) = τ·softplus((h + 1)/τ):
f > 0, f' = σ((h + 1)/τ) > 0, and f is log-concave (the integral of the log-concave sigmoid), so

* ψ is increasing in h (ψ_h = g·σ > 0 for g > 0) and in g (ψ_g = f > 0);
* ψ is quasi-concave on h ∈ ℝ, g ≥ 0: a super-level set {ψ ≥ c} is the whole domain for c ≤ 0 and
  {g ≥ c/f(h)} for c > 0, convex because 1/f = exp(−log f) is convex;
* ψ is convex in w for each label (softplus of an affine function times L ≥ 0), so the loss
  max_y ψ is a convex upper bound — but ψ is **not affine in h** (no BCFW, no cutting plane: SGD)
  and **not of the product form** (h + s)·g, so the angular, bisecting, binary and
  Sarawagi–Gupta searches refuse it: only the convex hull searches (with or without ban-list /
  k-best recovery of the integral optimum) apply.

g < 0 is outside the domain: ``value`` and ``grad`` return NaN there, which bicrit's searches
report as an error (as the built-in surrogates do).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from bicrit.errors import InvalidParameterError

__all__ = ["DEFAULT_TAU", "SmoothSlack"]

#: The default temperature: ψ(0, g) = 0.5·log(1 + e²)·g ≈ 1.06·g (slack rescaling: g).
DEFAULT_TAU = 0.5


def _softplus(z: Any) -> Any:
    """log(1 + e^z), without overflow."""
    return np.logaddexp(0.0, z)


def _sigmoid(z: Any) -> Any:
    """1/(1 + e^−z), without overflow and accurate in the left tail: e^z/(1 + e^z) there."""
    e = np.exp(-np.abs(z))
    return np.where(z >= 0, 1.0 / (1.0 + e), e / (1.0 + e))


def _softplus1(z: float) -> float:
    """Scalar log(1 + e^z) with the math module (bicrit's searches call ψ with Python floats:
    about 20 times faster than numpy on scalars)."""
    if z > 0.0:
        return z + math.log1p(math.exp(-z))
    return math.log1p(math.exp(z))


def _sigmoid1(z: float) -> float:
    """Scalar 1/(1 + e^−z)."""
    if z >= 0.0:
        return 1.0 / (1.0 + math.exp(-z))
    e = math.exp(z)
    return e / (1.0 + e)


def _softplus_over_sigmoid(z: float) -> float:
    """softplus(z)/σ(z) = softplus(z)·(1 + e^−z), accurate where both underflow (→ 1 as z → −∞)."""
    if z >= 0.0:
        return _softplus1(z) * (1.0 + math.exp(-z))
    u = math.exp(z)  # in [0, 1)
    if u == 0.0:
        return 1.0
    return math.log1p(u) / u * (1.0 + u)


class SmoothSlack:
    """ψ_τ(h, g) = g·τ·log(1 + e^((h + 1)/τ)) — smoothed slack rescaling (a bicrit surrogate
    written in pure Python).

    Parameters
    ----------
    tau:
        The temperature τ, a finite number > 0 (default 0.5). Small τ approaches slack rescaling
        g·max(0, h + 1); large τ smooths more.

    ``value`` and ``grad`` accept Python floats (how bicrit's native searches call them) or numpy
    arrays (broadcast), and return floats for scalar input.
    """

    #: Registry name.
    name = "smooth-slack"
    #: Not of the product form (h + s)·g: product-form searches refuse this surrogate.
    product_shift: float | None = None
    #: Not affine in h: BCFW and cutting plane refuse it; SGD works.
    affine_in_h = False

    def __init__(self, tau: float = DEFAULT_TAU, **unknown: Any) -> None:
        if unknown:
            names = ", ".join(sorted(unknown))
            raise InvalidParameterError(
                f"surrogate 'smooth-slack' has no parameter {names} (its parameters: tau)"
            )
        if isinstance(tau, bool) or not isinstance(tau, int | float | np.integer | np.floating):
            raise InvalidParameterError(
                f"surrogate 'smooth-slack': parameter tau must be a number, got {tau!r}"
            )
        tau = float(tau)
        if not math.isfinite(tau) or tau <= 0.0:
            raise InvalidParameterError(
                f"surrogate 'smooth-slack': parameter tau = {tau} must be finite and > 0"
            )
        self.tau = tau

    @property
    def params(self) -> dict[str, float]:
        """The parameters, by name."""
        return {"tau": self.tau}

    @staticmethod
    def _scalar(h: Any, g: Any) -> bool:
        return np.ndim(h) == 0 and np.ndim(g) == 0

    def value(self, h: Any, g: Any) -> Any:
        """ψ_τ(h, g); NaN where g < 0 (outside the domain)."""
        if type(h) is float and type(g) is float:  # the native searches' calls
            if not g >= 0.0:
                return math.nan
            return g * self.tau * _softplus1((h + 1.0) / self.tau)
        hv, gv = np.asarray(h, dtype=float), np.asarray(g, dtype=float)
        f = self.tau * _softplus((hv + 1.0) / self.tau)
        with np.errstate(invalid="ignore"):
            out = np.where(gv < 0.0, np.nan, gv * f)
        return float(out) if self._scalar(h, g) else out

    def grad(self, h: Any, g: Any) -> tuple[Any, Any]:
        """(∂ψ/∂h, ∂ψ/∂g) = (g·σ((h + 1)/τ), τ·softplus((h + 1)/τ)); NaN where g < 0."""
        if type(h) is float and type(g) is float:  # the native searches' calls
            if not g >= 0.0:
                return math.nan, math.nan
            z = (h + 1.0) / self.tau
            return g * _sigmoid1(z), self.tau * _softplus1(z)
        hv, gv = np.asarray(h, dtype=float), np.asarray(g, dtype=float)
        z = (hv + 1.0) / self.tau
        bad = gv < 0.0
        dh = np.where(bad, np.nan, gv * _sigmoid(z))
        dg = np.where(bad, np.nan, self.tau * _softplus(z) + 0.0 * gv)
        if self._scalar(h, g):
            return float(dh), float(dg)
        return dh, dg

    def tangent(self, h: float, g: float) -> float | None:
        """The slope λ = ψ_g/ψ_h of the level curve's normal at (h, g), computed where both
        components underflow (h far below −1 − 700τ): τ·softplus(z)/(g·σ(z)) → τ/g as
        z = (h + 1)/τ → −∞. None where it is undefined (g ≤ 0): the search then uses ``grad``."""
        h, g = float(h), float(g)
        if not (g > 0.0) or math.isnan(h):
            return None
        return self.tau * _softplus_over_sigmoid((h + 1.0) / self.tau) / g

    def __call__(self, h: Any, g: Any) -> Any:
        return self.value(h, g)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SmoothSlack) and other.tau == self.tau

    def __hash__(self) -> int:
        return hash((SmoothSlack, self.tau))

    def __repr__(self) -> str:
        return f"SmoothSlack(tau={self.tau!r})"
