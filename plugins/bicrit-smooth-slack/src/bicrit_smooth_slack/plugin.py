"""The hook implementation bicrit calls (entry point ``smooth_slack`` in the group ``bicrit``)."""

from __future__ import annotations

from bicrit.hookspecs import hookimpl
from bicrit.registry import Registrar

from bicrit_smooth_slack.surrogate import SmoothSlack

#: What the registry shows for this surrogate (``bicrit plugins``); the built-ins' keys plus
#: ``tangent`` and ``learners``.
CAPABILITIES = {
    "factors": "h = m, g = L",
    "params": {"tau": "> 0 (default 0.5)"},
    "product_form": False,
    "affine_in_h": False,
    "convex_in_h": True,  # g·τ·softplus((h+1)/τ) is convex in h for g ≥ 0
    "tangent": True,
    "searches": ["convex-hull", "convex-hull-ban", "convex-hull-kbest"],
    "learners": ["sgd"],
}


@hookimpl
def bicrit_register_surrogates(registry: Registrar) -> None:
    """Registers ``smooth-slack``."""
    registry.add_surrogate(
        SmoothSlack.name,
        SmoothSlack,
        description="smoothed slack rescaling ψ = g·τ·log(1 + e^((h+1)/τ)) (pure Python)",
        capabilities=CAPABILITIES,
    )
