"""Structures: label spaces with their joint feature map, loss, terms and oracles (DESIGN §4).

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


def _caps(*answered: str) -> dict[str, bool]:
    """Every optional query of :attr:`Structure.capabilities`, True for those ``answered``."""
    unknown = set(answered) - set(Structure.capabilities)
    if unknown:
        raise ValueError(f"unknown capabilities {sorted(unknown)}")
    return {k: k in answered for k in Structure.capabilities}


def register_builtins(registry: Registrar) -> None:
    """Registers bicrit's built-in structures."""
    registry.add_structure(
        "multiclass",
        Multiclass,
        description="one weight block per class, 0-1 loss, enumeration oracle",
        capabilities=_caps("ban", "kbest", "cone", "frontier"),
    )
    registry.add_structure(
        "chain",
        Chain,
        description="first-order linear chain (sequence labeling / NER): Viterbi, exact k-best, "
        "ban lists; token Hamming or chunk-level segment loss; frontier by loss value (best "
        "label for every number of wrong tokens, one DP) with the Hamming loss",
        # frontier: loss="hamming" only (the instance's .capabilities is exact)
        capabilities=_caps("ban", "kbest", "frontier"),
    )
    registry.add_structure(
        "hierarchy",
        HierarchyStructure,
        description=(
            "tree or DAG hierarchy, ancestor-closed (any or leaf-terminated) labels, node/leaf "
            "Hamming; tree DP, min-cut, LP + integer program"
        ),
        # cones: multilabel=False only (the instance's .capabilities is exact)
        capabilities=_caps("ban", "kbest"),
    )
    registry.add_structure(
        "dependency",
        Dependency,
        description="arc-factored dependency trees with labeled arcs, hashed arc features, "
        "head + label Hamming loss; projective Eisner or non-projective Chu-Liu-Edmonds, "
        "both with k-best lists and ban lists",
        capabilities=_caps("ban", "kbest"),
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
            **_caps("ban", "kbest", "cone", "relaxed"),
            "by_inference": {
                "exact": _caps("ban", "kbest", "cone"),
                "relaxed": _caps("cone", "relaxed"),
            },
        },
    )
