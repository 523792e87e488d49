"""The custom operators (``torch.library.custom_op``) behind :mod:`bicrit.torch`, with registered
autograd and fake (meta) implementations, so that they work under ``torch.compile`` and pass
``torch.library.opcheck``.

Each forward moves the scores to the host (float64), runs the native batch (GIL released, rayon
over the examples) and returns the loss with the loss-augmented answer as integer labels and
weights on the scores' device. The backward builds ∂ψ/∂m · (Σ_j weight_j·φ(ŷ_j) − φ(y)) on the
scores' device from those labels (scatter-adds): only indices and a few scalars per example cross
back from the host. Configuration (surrogate, search, options) travels as a JSON string.
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

import numpy as np
import torch
from torch import Tensor

from bicrit import _native

# Python objects (surrogates written in Python) passed to an operator by a token in its config.
_OBJECTS: dict[str, Any] = {}


def register_object(obj: Any) -> str:
    """A token standing for ``obj`` in an operator's configuration."""
    key = f"object:{id(obj)}"
    _OBJECTS[key] = obj
    return key


@lru_cache(maxsize=256)
def _config(config: str) -> tuple[Any, Any, dict[str, Any]]:
    c = json.loads(config)
    sur = c.pop("surrogate")
    params = c.pop("surrogate_params", None) or {}
    if sur in _OBJECTS:
        psi = _OBJECTS[sur]
    else:
        from bicrit import registry

        psi = registry.create("surrogate", sur, **params)
    search = c.pop("search", "auto")
    options = c.pop("search_options", None) or {}
    spec = None if search == "auto" else _native.SearchSpec(search, options)
    return psi, spec, c


def _np(t: Tensor) -> np.ndarray:
    return t.detach().to(device="cpu", dtype=torch.float64).contiguous().numpy()


def _np_int(t: Tensor) -> np.ndarray:
    return t.detach().to(device="cpu", dtype=torch.int64).contiguous().numpy()


def _native_loss(
    kind: str,
    arrays: dict[str, Any],
    gold: dict[str, Any],
    config: str,
    extra: dict[str, Any],
    ids: Tensor | None = None,
) -> dict[str, Any]:
    psi, spec, opts = _config(config)
    options = {**opts, **extra}
    # warm starts across batches: the cache travels as a token, the example ids as a tensor
    token = options.pop("warm_cache", None)
    if token is None or ids is None:
        return _native.scores_loss(kind, arrays, gold, options, psi, spec)
    cache = _OBJECTS[token]
    return _native.scores_loss(
        kind, arrays, gold, options, psi, spec, cache=cache, ids=_np_int(ids)
    )


def _outputs(out: dict[str, Any], label_keys: tuple[str, ...], like: Tensor) -> tuple[Tensor, ...]:
    dev, dt = like.device, like.dtype
    res = [torch.from_numpy(out["loss"]).to(device=dev, dtype=dt)]
    for k in label_keys:
        v = torch.from_numpy(out[k])
        res.append(v.to(dev) if v.dtype == torch.int64 else v.to(device=dev, dtype=dt))
    res.append(torch.from_numpy(out["weights"]).to(device=dev, dtype=dt))
    res.append(torch.from_numpy(out["coef"]).to(device=dev, dtype=dt))
    return tuple(res)


# ---------------------------------------------------------------------------------------------
# chain


@torch.library.custom_op("bicrit::chain_loss", mutates_args=())
def chain_loss(
    unary: Tensor,
    transitions: Tensor,
    start: Tensor | None,
    end: Tensor | None,
    gold: Tensor,
    lengths: Tensor,
    config: str,
    ids: Tensor | None = None,
) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """(loss [B], answer tags [B, 2, T], weights [B, 2], ∂ψ/∂m [B]); ``ids`` [B] name the
    examples for the warm-start cache the config names (if any)."""
    arrays = {"unary": _np(unary), "transitions": _np(transitions)}
    if start is not None:
        arrays["start"] = _np(start)
    if end is not None:
        arrays["end"] = _np(end)
    out = _native_loss(
        "chain", arrays, {"tags": _np_int(gold)}, config, {"lengths": _np_int(lengths)}, ids
    )
    return _outputs(out, ("tags",), unary)  # type: ignore[return-value]


@chain_loss.register_fake
def _(
    unary: Any,
    transitions: Any,
    start: Any,
    end: Any,
    gold: Any,
    lengths: Any,
    config: Any,
    ids: Any = None,
) -> Any:
    b, t, _ = unary.shape
    return (
        unary.new_empty((b,)),
        unary.new_empty((b, 2, t), dtype=torch.int64),
        unary.new_empty((b, 2)),
        unary.new_empty((b,)),
    )


def _chain_setup(ctx: Any, inputs: Any, output: Any) -> Any:
    unary, transitions, start, end, gold, lengths = inputs[:6]
    _, tags, weights, coef = output
    ctx.save_for_backward(gold, lengths, tags, weights, coef)
    ctx.shapes = (unary.shape, transitions.shape, start is not None, end is not None)


def _chain_backward(ctx: Any, g_loss: Any, *_: Any) -> Any:
    gold, lengths, tags, weights, coef = ctx.saved_tensors
    (b, t, s), tr_shape, has_start, has_end = ctx.shapes
    dt, dev = g_loss.dtype, g_loss.device
    c = (g_loss * coef).to(dt)
    paths = torch.cat([tags, gold.to(torch.int64).unsqueeze(1)], dim=1)  # [B, 3, T]
    wts = torch.cat([weights * c.unsqueeze(1), -c.unsqueeze(1)], dim=1)  # [B, 3]
    mask = (torch.arange(t, device=dev).unsqueeze(0) < lengths.unsqueeze(1)).to(dt)  # [B, T]
    wm = wts.unsqueeze(2) * mask.unsqueeze(1)  # [B, 3, T]
    paths = paths * (mask.unsqueeze(1) > 0)  # padding → tag 0 (weight 0)
    d_unary = torch.zeros((b, t, s), dtype=dt, device=dev)
    d_unary.scatter_add_(2, paths.transpose(1, 2), wm.transpose(1, 2))
    s2 = s * s
    if t > 1:
        flat = paths[:, :, :-1] * s + paths[:, :, 1:]  # [B, 3, T − 1]
        vals = wm[:, :, 1:]
        if len(tr_shape) == 2:
            d_tr = torch.zeros(s2, dtype=dt, device=dev).index_add_(
                0, flat.reshape(-1), vals.reshape(-1)
            )
        else:
            base = (
                torch.arange(b, device=dev).view(b, 1, 1) * (t - 1)
                + torch.arange(t - 1, device=dev).view(1, 1, t - 1)
            ) * s2
            d_tr = torch.zeros(b * (t - 1) * s2, dtype=dt, device=dev).index_add_(
                0, (base + flat).reshape(-1), vals.reshape(-1)
            )
        d_tr = d_tr.view(tr_shape)
    else:
        d_tr = torch.zeros(tr_shape, dtype=dt, device=dev)
    d_start = d_end = None
    if has_start:
        d_start = torch.zeros(s, dtype=dt, device=dev).index_add_(
            0, paths[:, :, 0].reshape(-1), wts.reshape(-1)
        )
    if has_end:
        last = paths.gather(2, (lengths - 1).view(b, 1, 1).expand(b, 3, 1)).reshape(-1)
        d_end = torch.zeros(s, dtype=dt, device=dev).index_add_(0, last, wts.reshape(-1))
    return d_unary, d_tr, d_start, d_end, None, None, None, None


torch.library.register_autograd("bicrit::chain_loss", _chain_backward, setup_context=_chain_setup)


# ---------------------------------------------------------------------------------------------
# tree


@torch.library.custom_op("bicrit::tree_loss", mutates_args=())
def tree_loss(
    arcs: Tensor,
    labels: Tensor | None,
    heads: Tensor,
    rels: Tensor | None,
    lengths: Tensor,
    config: str,
    ids: Tensor | None = None,
) -> tuple[Tensor, Tensor, Tensor, Tensor, Tensor]:
    """(loss [B], answer heads [B, 2, n], rels [B, 2, n], weights [B, 2], ∂ψ/∂m [B]); ``ids``
    as for the chain."""
    arrays = {"arcs": _np(arcs)}
    gold = {"heads": _np_int(heads)}
    if labels is not None:
        arrays["labels"] = _np(labels)
    if rels is not None:
        gold["rels"] = _np_int(rels)
    out = _native_loss("tree", arrays, gold, config, {"lengths": _np_int(lengths)}, ids)
    if "rels" not in out:
        out["rels"] = np.zeros_like(out["heads"])
    return _outputs(out, ("heads", "rels"), arcs)  # type: ignore[return-value]


@tree_loss.register_fake
def _(
    arcs: Any, labels: Any, heads: Any, rels: Any, lengths: Any, config: Any, ids: Any = None
) -> Any:
    b, n1, _ = arcs.shape
    return (
        arcs.new_empty((b,)),
        arcs.new_empty((b, 2, n1 - 1), dtype=torch.int64),
        arcs.new_empty((b, 2, n1 - 1), dtype=torch.int64),
        arcs.new_empty((b, 2)),
        arcs.new_empty((b,)),
    )


def _tree_setup(ctx: Any, inputs: Any, output: Any) -> Any:
    arcs, labels, heads, rels, lengths = inputs[:5]
    _, a_heads, a_rels, weights, coef = output
    ctx.save_for_backward(
        heads, rels if rels is not None else heads, lengths, a_heads, a_rels, weights, coef
    )
    ctx.shapes = (arcs.shape, None if labels is None else labels.shape)


def _tree_backward(ctx: Any, g_loss: Any, *_: Any) -> Any:
    heads, rels, lengths, a_heads, a_rels, weights, coef = ctx.saved_tensors
    arc_shape, lab_shape = ctx.shapes
    b, n1, _ = arc_shape
    n = n1 - 1
    dt, dev = g_loss.dtype, g_loss.device
    c = g_loss * coef
    mask = torch.arange(n, device=dev).unsqueeze(0) < lengths.unsqueeze(1)  # [B, n]
    hs = torch.cat([a_heads, heads.to(torch.int64).unsqueeze(1)], dim=1) * mask.unsqueeze(1)
    wts = torch.cat([weights * c.unsqueeze(1), -c.unsqueeze(1)], dim=1)
    wm = wts.unsqueeze(2) * mask.unsqueeze(1).to(dt)  # [B, 3, n]
    bi = torch.arange(b, device=dev).view(b, 1, 1)
    di = torch.arange(1, n1, device=dev).view(1, 1, n)
    cell = (bi * n1 + hs) * n1 + di  # flat index of arc h → d
    d_arcs = torch.zeros(b * n1 * n1, dtype=dt, device=dev).index_add_(
        0, cell.reshape(-1), wm.reshape(-1)
    )
    d_labels = None
    if lab_shape is not None:
        r = lab_shape[3]
        rs = torch.cat([a_rels, rels.to(torch.int64).unsqueeze(1)], dim=1) * mask.unsqueeze(1)
        d_labels = (
            torch.zeros(b * n1 * n1 * r, dtype=dt, device=dev)
            .index_add_(0, (cell * r + rs).reshape(-1), wm.reshape(-1))
            .view(lab_shape)
        )
    return d_arcs.view(arc_shape), d_labels, None, None, None, None, None


torch.library.register_autograd("bicrit::tree_loss", _tree_backward, setup_context=_tree_setup)


# ---------------------------------------------------------------------------------------------
# multi-label


@torch.library.custom_op("bicrit::multilabel_loss", mutates_args=())
def multilabel_loss(
    unary: Tensor, pairwise: Tensor | None, gold: Tensor, edges: Tensor, config: str
) -> tuple[Tensor, Tensor, Tensor, Tensor, Tensor]:
    """(loss [B], node marginals [B, 2, L], edge marginals [B, 2, E, 4], weights [B, 2], ∂ψ/∂m)."""
    arrays = {"unary": _np(unary)}
    if pairwise is not None:
        arrays["pairwise"] = _np(pairwise)
    out = _native_loss(
        "multilabel",
        arrays,
        {"labels": _np_int(gold)},
        config,
        {"edges": _np_int(edges).reshape(-1, 2)},
    )
    return _outputs(out, ("nodes", "edges"), unary)  # type: ignore[return-value]


@multilabel_loss.register_fake
def _(unary: Any, pairwise: Any, gold: Any, edges: Any, config: Any) -> Any:
    b, n_labels = unary.shape
    n_edges = edges.shape[0]
    return (
        unary.new_empty((b,)),
        unary.new_empty((b, 2, n_labels)),
        unary.new_empty((b, 2, n_edges, 4)),
        unary.new_empty((b, 2)),
        unary.new_empty((b,)),
    )


def _ml_setup(ctx: Any, inputs: Any, output: Any) -> Any:
    _, pairwise, gold, edges, _ = inputs
    _, nodes, emarg, weights, coef = output
    ctx.save_for_backward(gold, edges, nodes, emarg, weights, coef)
    ctx.pair_shape = None if pairwise is None else pairwise.shape


def _ml_backward(ctx: Any, g_loss: Any, *_: Any) -> Any:
    gold, edges, nodes, emarg, weights, coef = ctx.saved_tensors
    dt = g_loss.dtype
    c = g_loss * coef
    cw = weights * c.unsqueeze(1)  # [B, 2]
    goldf = gold.to(dt)
    d_unary = torch.einsum("ba,bal->bl", cw, nodes) - c.unsqueeze(1) * goldf
    d_pair = None
    if ctx.pair_shape is not None:
        e = edges.to(torch.int64)
        ge = torch.zeros(emarg.shape[0], e.shape[0], 4, dtype=dt, device=g_loss.device)
        state = (2 * gold[:, e[:, 0]] + gold[:, e[:, 1]]).to(torch.int64)  # [B, E]
        ge.scatter_(2, state.unsqueeze(2), 1.0)
        d = torch.einsum("ba,baes->bes", cw, emarg) - c.view(-1, 1, 1) * ge
        d = d.reshape(d.shape[0], -1, 2, 2)
        d_pair = d if len(ctx.pair_shape) == 4 else d.sum(0)
    return d_unary, d_pair, None, None, None


torch.library.register_autograd("bicrit::multilabel_loss", _ml_backward, setup_context=_ml_setup)


# ---------------------------------------------------------------------------------------------
# multiclass


@torch.library.custom_op("bicrit::multiclass_loss", mutates_args=())
def multiclass_loss(
    scores: Tensor, gold: Tensor, config: str
) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """(loss [B], answer classes [B, 2], weights [B, 2], ∂ψ/∂m [B])."""
    out = _native_loss("multiclass", {"scores": _np(scores)}, {"labels": _np_int(gold)}, config, {})
    return _outputs(out, ("labels",), scores)  # type: ignore[return-value]


@multiclass_loss.register_fake
def _(scores: Any, gold: Any, config: Any) -> Any:
    b = scores.shape[0]
    return (
        scores.new_empty((b,)),
        scores.new_empty((b, 2), dtype=torch.int64),
        scores.new_empty((b, 2)),
        scores.new_empty((b,)),
    )


def _mc_setup(ctx: Any, inputs: Any, output: Any) -> Any:
    scores, gold, _ = inputs
    _, labels, weights, coef = output
    ctx.save_for_backward(gold, labels, weights, coef)
    ctx.shape = scores.shape


def _mc_backward(ctx: Any, g_loss: Any, *_: Any) -> Any:
    gold, labels, weights, coef = ctx.saved_tensors
    c = g_loss * coef
    d = torch.zeros(ctx.shape, dtype=g_loss.dtype, device=g_loss.device)
    d.scatter_add_(1, labels, weights * c.unsqueeze(1))
    d.scatter_add_(1, gold.to(torch.int64).unsqueeze(1), -c.unsqueeze(1))
    return d, None, None


torch.library.register_autograd("bicrit::multiclass_loss", _mc_backward, setup_context=_mc_setup)


# ---------------------------------------------------------------------------------------------
# hierarchy


@torch.library.custom_op("bicrit::hierarchy_loss", mutates_args=())
def hierarchy_loss(
    scores: Tensor, gold: Tensor, config: str
) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """(loss [B], answer node indicators [B, 2, M], weights [B, 2], ∂ψ/∂m [B]); the hierarchy
    structure travels in ``config`` as a token (:func:`register_object`)."""
    psi, spec, opts = _config(config)
    options = {k: v for k, v in opts.items() if k != "structure"}
    options["structure"] = _OBJECTS[opts["structure"]]
    out = _native.scores_loss(
        "hierarchy",
        {"scores": _np(scores)},
        {"nodes": _np_int(gold)},
        options,
        psi,
        spec,
    )
    return _outputs(out, ("nodes",), scores)  # type: ignore[return-value]


@hierarchy_loss.register_fake
def _(scores: Any, gold: Any, config: Any) -> Any:
    b, m = scores.shape
    return (
        scores.new_empty((b,)),
        scores.new_empty((b, 2, m)),
        scores.new_empty((b, 2)),
        scores.new_empty((b,)),
    )


def _hier_setup(ctx: Any, inputs: Any, output: Any) -> Any:
    _, gold, _ = inputs
    _, nodes, weights, coef = output
    ctx.save_for_backward(gold, nodes, weights, coef)


def _hier_backward(ctx: Any, g_loss: Any, *_: Any) -> Any:
    # ∂ψ/∂m · (Σ_j weight_j·1[ŷ_j] − 1[y]): a label's score is the sum of its nodes' scores
    gold, nodes, weights, coef = ctx.saved_tensors
    c = g_loss * coef
    d = torch.einsum("ba,bam->bm", weights * c.unsqueeze(1), nodes)
    return d - c.unsqueeze(1) * gold.to(d.dtype), None, None


torch.library.register_autograd("bicrit::hierarchy_loss", _hier_backward, setup_context=_hier_setup)


def config_string(surrogate: Any, search: str, **options: Any) -> str:
    """The JSON configuration of an operator call (a surrogate object becomes a token)."""
    if not isinstance(surrogate, str):
        surrogate = register_object(surrogate)
    return json.dumps({"surrogate": surrogate, "search": search, **options}, sort_keys=True)
