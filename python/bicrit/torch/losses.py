"""Structured losses as functions and ``torch.nn`` modules (see :mod:`bicrit.torch`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import torch
from torch import Tensor, nn

from bicrit import _native
from bicrit.errors import InvalidInputError
from bicrit.torch import _check, _ops


def _config(
    surrogate: Any,
    search: str,
    surrogate_params: Mapping[str, float] | None,
    search_options: Mapping[str, Any] | None,
    **options: Any,
) -> str:
    return _ops.config_string(
        surrogate,
        search,
        surrogate_params=dict(surrogate_params or {}),
        search_options=dict(search_options or {}),
        **{k: v for k, v in options.items() if v is not None},
    )


def _warm(ids: Any, warm_cache: Any, b: int) -> tuple[Tensor | None, str | None]:
    """The CPU ids and the cache's config token (both None without a cache)."""
    if (ids is None) != (warm_cache is None):
        raise InvalidInputError(
            "a warm-start cache needs the examples' ids and ids need a warm_cache: "
            "pass both or neither"
        )
    if warm_cache is None:
        return None, None
    if not isinstance(warm_cache, _native.WarmCache):
        raise InvalidInputError(
            f"warm_cache must be a bicrit.scores.WarmCache, got {type(warm_cache).__name__}"
        )
    return _check.ids(ids, b), _ops.register_object(warm_cache)


def chain_loss(
    unary: Tensor,
    transitions: Tensor,
    gold: Tensor,
    *,
    lengths: Tensor | None = None,
    mask: Tensor | None = None,
    start: Tensor | None = None,
    end: Tensor | None = None,
    surrogate: Any = "margin",
    reduction: str = "mean",
    search: str = "auto",
    task_loss: str = "hamming",
    tag_names: Sequence[str] | None = None,
    scheme: str = "iob2",
    outside: Sequence[int] | None = None,
    surrogate_params: Mapping[str, float] | None = None,
    search_options: Mapping[str, Any] | None = None,
    ids: Any = None,
    warm_cache: Any = None,
) -> Tensor:
    """Structured loss of a linear chain: ``unary`` [B, T, S], ``transitions`` [S, S] (or
    [B, T − 1, S, S]: the scores of moving into position t are ``transitions[:, t − 1]``),
    ``gold`` [B, T] integer tags, ``lengths`` [B] or a ``mask`` [B, T] as pytorch-crf takes it,
    optional ``start``/``end`` [S]. ``task_loss``: ``"hamming"`` (tokens) or ``"segment"``
    (chunks, needs ``tag_names``); ``outside``: the O tags (Micro-F1 counts the others).
    ``ids`` [B] (integers naming the examples, the same in every epoch) with a ``warm_cache``
    (:data:`bicrit.scores.WarmCache`): warm starts across batches — the same loss, fewer
    oracle calls once the examples come back."""
    _check.reduction(reduction)
    _check.floating("unary", unary, (3,))
    b, t, s = unary.shape
    _check.floating("transitions", transitions, (2, 4))
    want = (s, s) if transitions.dim() == 2 else (b, max(t - 1, 0), s, s)
    _check.same_float("transitions", transitions, unary, want)
    _check.same_float("start", start, unary, (s,))
    _check.same_float("end", end, unary, (s,))
    lens = _check.lengths_of(lengths, mask, b, t, unary)
    gold = _check.integer("gold", gold, (b, t), unary)
    ids, token = _warm(ids, warm_cache, b)
    cfg = _config(
        surrogate,
        search,
        surrogate_params,
        search_options,
        task_loss=task_loss,
        tag_names=list(tag_names) if tag_names is not None else None,
        scheme=scheme,
        outside=list(outside) if outside is not None else None,
        warm_cache=token,
    )
    loss = torch.ops.bicrit.chain_loss(unary, transitions, start, end, gold, lens, cfg, ids)[0]
    return _check.reduce(loss, reduction, lens)


def tree_loss(
    arcs: Tensor,
    heads: Tensor,
    *,
    lengths: Tensor | None = None,
    mask: Tensor | None = None,
    labels: Tensor | None = None,
    rels: Tensor | None = None,
    surrogate: Any = "margin",
    reduction: str = "mean",
    search: str = "auto",
    projective: bool = False,
    multi_root: bool = False,
    label_weight: float = 1.0,
    surrogate_params: Mapping[str, float] | None = None,
    search_options: Mapping[str, Any] | None = None,
    ids: Any = None,
    warm_cache: Any = None,
) -> Tensor:
    """Structured loss of dependency trees: ``arcs`` [B, n + 1, n + 1] with ``arcs[b, h, d]`` the
    score of the arc h → d (0 is the root), ``heads`` [B, n] with ``heads[b, j]`` the head of
    token j + 1, ``lengths`` [B] (tokens, root excluded) or a ``mask`` [B, n]; with relation
    scores ``labels`` [B, n + 1, n + 1, R] also ``rels`` [B, n]. Decoding: Chu–Liu–Edmonds, or
    Eisner when ``projective``; one child of the root unless ``multi_root``. Task loss per token:
    1 for a wrong head, ``label_weight`` for a right head with a wrong relation. ``ids`` and
    ``warm_cache``: warm starts across batches, as for :func:`chain_loss`."""
    _check.reduction(reduction)
    _check.floating("arcs", arcs, (3,))
    b, n1, n2 = arcs.shape
    if n1 != n2 or n1 < 2:
        raise InvalidInputError(
            f"arcs must have shape [B, n + 1, n + 1] with n ≥ 1, got {list(arcs.shape)}"
        )
    n = n1 - 1
    if labels is not None:
        _check.floating("labels", labels, (4,))
        _check.same_float("labels", labels, arcs, (b, n1, n1, labels.shape[3]))
        if rels is None:
            raise InvalidInputError("labels (relation scores) need gold rels")
        rels = _check.integer("rels", rels, (b, n), arcs)
    elif rels is not None:
        raise InvalidInputError("rels given without relation scores (labels)")
    lens = _check.lengths_of(lengths, mask, b, n, arcs, what="n")
    heads = _check.integer("heads", heads, (b, n), arcs)
    ids, token = _warm(ids, warm_cache, b)
    cfg = _config(
        surrogate,
        search,
        surrogate_params,
        search_options,
        projective=bool(projective),
        multi_root=bool(multi_root),
        label_weight=float(label_weight),
        warm_cache=token,
    )
    loss = torch.ops.bicrit.tree_loss(arcs, labels, heads, rels, lens, cfg, ids)[0]
    return _check.reduce(loss, reduction, lens)


def _edges(edges: Any, n_labels: int, device: torch.device) -> Tensor:
    e = torch.as_tensor(edges if edges is not None else [], dtype=torch.int64).reshape(-1, 2)
    if e.numel() and (int(e.min()) < 0 or int(e.max()) >= n_labels):
        raise InvalidInputError(f"edges must be pairs of labels in 0..{n_labels - 1}")
    return e.to(device)


def multilabel_loss(
    unary: Tensor,
    gold: Tensor,
    *,
    pairwise: Tensor | None = None,
    edges: Any = None,
    surrogate: Any = "margin",
    reduction: str = "mean",
    search: str = "auto",
    inference: str = "auto",
    solver: str = "qpbo",
    surrogate_params: Mapping[str, float] | None = None,
    search_options: Mapping[str, Any] | None = None,
) -> Tensor:
    """Structured loss of a pairwise multi-label MRF: ``unary`` [B, L] (score of y_k = 1),
    ``gold`` [B, L] in {0, 1}, ``pairwise`` [E, 2, 2] or [B, E, 2, 2] over ``edges`` [E, 2]
    (i < j). ``inference``: ``"exact"`` (enumeration, L ≤ 16), ``"relaxed"`` (QPBO or LP over the
    local polytope: fractional answers) or ``"auto"``. Task loss: Hamming."""
    _check.reduction(reduction)
    _check.floating("unary", unary, (2,))
    b, n_labels = unary.shape
    e = _edges(edges, n_labels, unary.device)
    if pairwise is not None:
        _check.floating("pairwise", pairwise, (3, 4))
        want = (e.shape[0], 2, 2) if pairwise.dim() == 3 else (b, e.shape[0], 2, 2)
        _check.same_float("pairwise", pairwise, unary, want)
    elif e.shape[0]:
        raise InvalidInputError("edges given without pairwise scores")
    gold = _check.integer("gold", gold, (b, n_labels), unary)
    cfg = _config(
        surrogate, search, surrogate_params, search_options, inference=inference, solver=solver
    )
    loss = torch.ops.bicrit.multilabel_loss(unary, pairwise, gold, e, cfg)[0]
    return _check.reduce(loss, reduction, None)


def multiclass_loss(
    scores: Tensor,
    gold: Tensor,
    *,
    surrogate: Any = "margin",
    reduction: str = "mean",
    search: str = "auto",
    surrogate_params: Mapping[str, float] | None = None,
    search_options: Mapping[str, Any] | None = None,
) -> Tensor:
    """Structured loss of multiclass scores [B, K] with ``gold`` classes [B] (0-1 task loss)."""
    _check.reduction(reduction)
    _check.floating("scores", scores, (2,))
    gold = _check.integer("gold", gold, (scores.shape[0],), scores)
    cfg = _config(surrogate, search, surrogate_params, search_options)
    loss = torch.ops.bicrit.multiclass_loss(scores, gold, cfg)[0]
    return _check.reduce(loss, reduction, None)


def _native_hierarchy(structure: Any) -> Any:
    """The native hierarchy structure of ``structure`` (``bicrit.structure('hierarchy', ...)``
    built with ``n_features``: any value, the scores are given)."""
    native = getattr(structure, "_native", None)
    if native is None or getattr(structure, "name", None) != "hierarchy":
        raise InvalidInputError(
            "structure must be an initialised hierarchy structure, e.g. "
            "bicrit.structure('hierarchy', parents, n_features=1)"
        )
    return native


def hierarchy_loss(
    scores: Tensor,
    gold: Tensor,
    *,
    structure: Any,
    surrogate: Any = "margin",
    reduction: str = "mean",
    search: str = "auto",
    surrogate_params: Mapping[str, float] | None = None,
    search_options: Mapping[str, Any] | None = None,
) -> Tensor:
    """Structured loss of hierarchical labels on per-node scores: ``scores`` [B, M] (the score
    of a label is the sum of its nodes' scores), ``gold`` [B, M] node indicators in {0, 1}
    (ancestor-closed, root included). ``structure`` (a hierarchy structure,
    :class:`bicrit.structures.hierarchy.HierarchyStructure`) gives the label space and the task
    loss: the node Hamming loss with its per-node costs λ_n of a wrongly predicted node and
    μ_n of a missed one (``node_loss_weight``, ``node_miss_weight``), or the leaf Hamming loss.
    Loss-augmented inference: a dynamic program on trees, a min-cut on DAGs."""
    _check.reduction(reduction)
    _check.floating("scores", scores, (2,))
    b, m = scores.shape
    native = _native_hierarchy(structure)
    if m != structure.n_nodes:
        raise InvalidInputError(
            f"scores must have one column per node of the hierarchy ({structure.n_nodes}), got {m}"
        )
    gold = _check.integer("gold", gold, (b, m), scores)
    cfg = _config(
        surrogate, search, surrogate_params, search_options, structure=_ops.register_object(native)
    )
    loss = torch.ops.bicrit.hierarchy_loss(scores, gold, cfg)[0]
    return _check.reduce(loss, reduction, None)


class _Loss(nn.Module):
    def __init__(
        self,
        surrogate: Any = "margin",
        reduction: str = "mean",
        search: str = "auto",
        surrogate_params: Mapping[str, float] | None = None,
        search_options: Mapping[str, Any] | None = None,
        **options: Any,
    ) -> None:
        super().__init__()
        _check.reduction(reduction)
        self.surrogate = surrogate
        self.reduction = reduction
        self.search = search
        self.surrogate_params = dict(surrogate_params or {})
        self.search_options = dict(search_options or {})
        self.options = options

    def _kw(self) -> dict[str, Any]:
        return {
            "surrogate": self.surrogate,
            "reduction": self.reduction,
            "search": self.search,
            "surrogate_params": self.surrogate_params,
            "search_options": self.search_options,
            **self.options,
        }

    def extra_repr(self) -> str:
        name = self.surrogate if isinstance(self.surrogate, str) else type(self.surrogate).__name__
        return f"surrogate={name!r}, reduction={self.reduction!r}, search={self.search!r}"


class _WarmLoss(_Loss):
    """A loss whose searches warm-start across batches when ``forward`` gets example ``ids``:
    the module keeps its own :data:`bicrit.scores.WarmCache` of at most ``cache_bytes``."""

    def __init__(self, *args: Any, cache_bytes: int = 64 << 20, **kw: Any) -> None:
        super().__init__(*args, **kw)
        self.warm_cache = _native.WarmCache(int(cache_bytes))

    def _warm_kw(self, ids: Any) -> dict[str, Any]:
        return {**self._kw(), "ids": ids, "warm_cache": None if ids is None else self.warm_cache}


class ChainLoss(_WarmLoss):
    """:func:`chain_loss` as a module: ``ChainLoss(surrogate="slack")(unary, transitions, gold,
    lengths=None, mask=None, start=None, end=None, ids=None)``. Options: ``task_loss``,
    ``tag_names``, ``scheme``, ``outside``, ``cache_bytes``. ``ids`` [B]: integers naming the
    examples (the same in every epoch), which warm-starts their searches from the previous visit
    (the same loss, fewer oracle calls)."""

    def forward(
        self,
        unary: Tensor,
        transitions: Tensor,
        gold: Tensor,
        lengths: Tensor | None = None,
        mask: Tensor | None = None,
        start: Tensor | None = None,
        end: Tensor | None = None,
        ids: Tensor | None = None,
    ) -> Tensor:
        return chain_loss(
            unary,
            transitions,
            gold,
            lengths=lengths,
            mask=mask,
            start=start,
            end=end,
            **self._warm_kw(ids),
        )


class TreeLoss(_WarmLoss):
    """:func:`tree_loss` as a module: ``TreeLoss(surrogate="probloss")(arcs, heads, lengths=None,
    mask=None, labels=None, rels=None, ids=None)``. Options: ``projective``, ``multi_root``,
    ``label_weight``, ``cache_bytes``; ``ids`` as for :class:`ChainLoss`."""

    def forward(
        self,
        arcs: Tensor,
        heads: Tensor,
        lengths: Tensor | None = None,
        mask: Tensor | None = None,
        labels: Tensor | None = None,
        rels: Tensor | None = None,
        ids: Tensor | None = None,
    ) -> Tensor:
        return tree_loss(
            arcs,
            heads,
            lengths=lengths,
            mask=mask,
            labels=labels,
            rels=rels,
            **self._warm_kw(ids),
        )


class MultiLabelLoss(_Loss):
    """:func:`multilabel_loss` as a module: ``MultiLabelLoss(edges=[[0, 1]])(unary, gold,
    pairwise=None)``. Options: ``edges``, ``inference``, ``solver``."""

    def forward(self, unary: Tensor, gold: Tensor, pairwise: Tensor | None = None) -> Tensor:
        return multilabel_loss(unary, gold, pairwise=pairwise, **self._kw())


class MulticlassLoss(_Loss):
    """:func:`multiclass_loss` as a module: ``MulticlassLoss(surrogate="slack")(scores, gold)``."""

    def forward(self, scores: Tensor, gold: Tensor) -> Tensor:
        return multiclass_loss(scores, gold, **self._kw())


class HierarchyLoss(_Loss):
    """:func:`hierarchy_loss` as a module: ``HierarchyLoss(structure, surrogate="margin")(scores,
    gold)`` with per-node ``scores`` [B, M] and gold node indicators [B, M]."""

    def __init__(self, structure: Any, **kw: Any) -> None:
        _native_hierarchy(structure)
        super().__init__(**kw)
        self.structure = structure

    def forward(self, scores: Tensor, gold: Tensor) -> Tensor:
        return hierarchy_loss(scores, gold, structure=self.structure, **self._kw())
