"""Structured losses for neural networks in PyTorch (``pip install bicrit[torch]``).

Every surrogate of bicrit — margin and slack rescaling, β-scaling, ProbLoss, the Micro-F1
surrogate, … — as a loss on score tensors, batched, with the inner loops native (GIL released,
both cores over the batch)::

    from bicrit.torch import ChainLoss
    loss_fn = ChainLoss(surrogate="slack", reduction="mean")
    loss = loss_fn(unary, transitions, gold, lengths=lengths)   # unary [B, T, S], gold [B, T]
    loss.backward()

Modules: :class:`ChainLoss`, :class:`TreeLoss`, :class:`MultiLabelLoss`, :class:`MulticlassLoss`,
:class:`HierarchyLoss` (per-node scores of a tree or DAG hierarchy); functional forms
:func:`chain_loss`, :func:`tree_loss`, :func:`multilabel_loss`, :func:`multiclass_loss`,
:func:`hierarchy_loss`; :class:`HierarchicalMLP`, an MLP encoder of per-node scores trained with
:class:`HierarchyLoss` (hierarchical multi-label classification); decoders :func:`chain_decode`,
:func:`chain_kbest`, :func:`tree_decode`, :func:`multilabel_decode`, :func:`multiclass_decode`,
returning tensors on the scores' device.

Which value the loss is (``search``): ``"auto"`` (default) is the exact maximum of ψ over the
integral labels — one loss-augmented Viterbi/Eisner/CLE call for margin rescaling, the convex hull
search with ban lists elsewhere (exact integral, 2-3 oracle calls on chains; the one-call frontier
search on multiclass and exact multi-label; ``search="frontier"`` on chains with the Hamming loss
gives the same value in one O(T²S²) DP); ``"convex-hull"`` is the maximum over the convex hull of
the labels' (h, g) points (an upper bound, whose answer may be a fractional point between two
labels: its gradient combines both); any registered search name works with its
``search_options``.

Inputs may live on any device: the scores are copied to the host for the native decoders, and
the gradient is built on the scores' device from the answer's indices. The operators are
``torch.library`` custom ops with registered autograd (``torch.ops.bicrit.chain_loss`` …), so
they run under ``torch.compile`` and pass ``torch.library.opcheck``.
"""

from __future__ import annotations

try:
    import torch  # noqa: F401
except ImportError as e:  # pragma: no cover - exercised only without torch
    raise ImportError(
        "bicrit.torch needs PyTorch: pip install 'bicrit[torch]' (or pip install torch)"
    ) from e

from bicrit.torch.decode import (
    chain_decode,
    chain_kbest,
    multiclass_decode,
    multilabel_decode,
    tree_decode,
)
from bicrit.torch.hierarchical_mlp import HierarchicalMLP
from bicrit.torch.losses import (
    ChainLoss,
    HierarchyLoss,
    MulticlassLoss,
    MultiLabelLoss,
    TreeLoss,
    chain_loss,
    hierarchy_loss,
    multiclass_loss,
    multilabel_loss,
    tree_loss,
)

__all__ = [
    "ChainLoss",
    "HierarchicalMLP",
    "HierarchyLoss",
    "MultiLabelLoss",
    "MulticlassLoss",
    "TreeLoss",
    "chain_decode",
    "chain_kbest",
    "chain_loss",
    "hierarchy_loss",
    "multiclass_decode",
    "multiclass_loss",
    "multilabel_decode",
    "multilabel_loss",
    "tree_decode",
    "tree_loss",
]
