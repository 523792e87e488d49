"""Structures: label spaces with their joint feature map, loss, terms and oracles (DESIGN §4).

``bicrit.structure(name, **params)`` builds any registered structure (built-in or from a plugin).
The protocol every structure follows is documented in :mod:`bicrit.structures.base`.
"""

from __future__ import annotations

from typing import Any

from bicrit.registry import Registrar
from bicrit.structures.base import TERMS, Answer, Cone, Structure
from bicrit.structures.multiclass import Multiclass
from bicrit.structures.multilabel import Multilabel

__all__ = [
    "TERMS",
    "Answer",
    "Cone",
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


def register_builtins(registry: Registrar) -> None:
    """Registers bicrit's built-in structures."""
    registry.add_structure(
        "multiclass",
        Multiclass,
        description="one weight block per class, 0-1 loss, enumeration oracle",
        capabilities={"ban": True, "kbest": True, "cone": True, "relaxed": False},
    )
    registry.add_structure(
        "multilabel",
        Multilabel,
        description=(
            "pairwise binary MRF over K labels (edges full/tree/chain/explicit), Hamming loss; "
            "inference='exact' enumerates (K ≤ 16: ban list, k-best, cone), 'relaxed' solves "
            "the local-polytope LP by QPBO max-flow (cone via the LP; answers may be fractional)"
        ),
        # union over the inference modes; an instance's .capabilities is exact for its mode
        capabilities={
            "ban": True,
            "kbest": True,
            "cone": True,
            "relaxed": True,
            "by_inference": {
                "exact": {"ban": True, "kbest": True, "cone": True, "relaxed": False},
                "relaxed": {"ban": False, "kbest": False, "cone": True, "relaxed": True},
            },
        },
    )
