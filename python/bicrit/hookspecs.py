"""Hook specifications of the ``bicrit`` plugin system (pluggy, entry-point group ``bicrit``).

A plugin is any module or object with functions named like the hooks below, marked with
:data:`hookimpl`. A package contributes it through an entry point::

    [project.entry-points.bicrit]
    my_plugin = "my_package.bicrit_plugin"

Each hook receives a :class:`bicrit.registry.Registrar` bound to the calling plugin, so every
contribution is recorded with the package and version it came from. bicrit's own structures,
surrogates and searches register through these very hooks (``bicrit._builtins``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pluggy

if TYPE_CHECKING:
    from bicrit.registry import Registrar

__all__ = [
    "PROJECT",
    "bicrit_register_searches",
    "bicrit_register_structures",
    "bicrit_register_surrogates",
    "hookimpl",
    "hookspec",
]

#: The pluggy project name, which is also the entry-point group.
PROJECT = "bicrit"

#: Marks the hook specifications below.
hookspec = pluggy.HookspecMarker(PROJECT)
#: Marks a plugin's hook implementations: ``@hookimpl def bicrit_register_structures(...)``.
hookimpl = pluggy.HookimplMarker(PROJECT)


@hookspec
def bicrit_register_structures(registry: Registrar) -> None:
    """Contribute label structures with ``registry.add_structure(name, factory, ...)``."""


@hookspec
def bicrit_register_surrogates(registry: Registrar) -> None:
    """Contribute ψ surrogates with ``registry.add_surrogate(name, factory, ...)``."""


@hookspec
def bicrit_register_searches(registry: Registrar) -> None:
    """Contribute searches (loss-augmented inference) with ``registry.add_search(...)``."""
