"""Structures: label spaces with their joint feature map, loss, terms and oracles (thesis
§"Structured Prediction"; docs/architecture.md).

``bicrit.structure(name, **params)`` builds any registered structure (built-in or from a plugin).
The protocol every structure follows is documented in :mod:`bicrit.structures.base`.
"""

from __future__ import annotations

from typing import Any

from bicrit.registry import Registrar
from bicrit.structures.base import TERMS, Answer, Cone, Structure
from bicrit.structures.chain import Chain
from bicrit.structures.dependency import Dependency
from bicrit.structures.hierarchy import HierarchyStructure
from bicrit.structures.multiclass import Multiclass
from bicrit.structures.multilabel import Multilabel

__all__ = [
    "TERMS",
    "Answer",
    "Chain",
    "Cone",
    "Dependency",
    "HierarchyStructure",
    "Multiclass",
    "Multilabel",
    "Structure",
    "register_builtins",
    "structure",
]


def structure(name: str, **params: Any) -> Any:
    """Builds the registered structure ``name`` with ``params``."""
    from bicrit import registry

    return registry.create("structure", name, **params)


#: The built-in structure classes; what each is and can answer comes from the native catalog.
BUILTIN_CLASSES: tuple[type[Structure], ...] = (
    Multiclass,
    Chain,
    HierarchyStructure,
    Dependency,
    Multilabel,
)


def register_builtins(registry: Registrar) -> None:
    """Registers bicrit's built-in structures, described by the native catalog."""
    registry.add_native("structure", {cls.name: cls for cls in BUILTIN_CLASSES}.__getitem__)
