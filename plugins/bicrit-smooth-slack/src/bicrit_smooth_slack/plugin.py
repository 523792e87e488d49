"""The hook implementation bicrit calls (entry point ``smooth_slack`` in the group ``bicrit``)."""

from __future__ import annotations

from bicrit.hookspecs import hookimpl
from bicrit.registry import Registrar
from bicrit.surrogates import capabilities

from bicrit_smooth_slack.surrogate import SmoothSlack

#: What the registry shows for this surrogate (``bicrit plugins``): what the native core accepts it
#: with (affine/convex in h, searches, learners — judged as for the built-ins, from the class's
#: ``affine_in_h``/``convex_in_h``), plus its factors, parameters and ``tangent``.
CAPABILITIES = {
    "factors": "h = m, g = L",
    "params": {"tau": "> 0 (default 0.5)"},
    "tangent": True,
    **capabilities(SmoothSlack()),
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
