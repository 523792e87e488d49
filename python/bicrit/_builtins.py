"""bicrit's own contributions, registered through the same hooks as any plugin.

Each family module exposes ``register_builtins(registry)``; this module only forwards the hooks.
"""

from __future__ import annotations

from bicrit.hookspecs import hookimpl
from bicrit.registry import Registrar


@hookimpl
def bicrit_register_structures(registry: Registrar) -> None:
    from bicrit.structures import register_builtins

    register_builtins(registry)


@hookimpl
def bicrit_register_surrogates(registry: Registrar) -> None:
    from bicrit.surrogates import register_builtins

    register_builtins(registry)


@hookimpl
def bicrit_register_searches(registry: Registrar) -> None:
    from bicrit.searches import register_builtins

    register_builtins(registry)
