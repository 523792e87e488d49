"""Decoders on score tensors: the highest-scoring (or k best) labels as tensors on the scores'
device (no gradient). Padding positions hold ``-1``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
from torch import Tensor

from bicrit import _native
from bicrit.errors import InvalidInputError
from bicrit.torch import _check
from bicrit.torch._ops import _np, _np_int


def _pad(a: np.ndarray, lengths: np.ndarray, axis_len: int) -> np.ndarray:
    """Sets positions ≥ length (last axis) to −1."""
    pos = np.arange(axis_len)
    shape = (len(lengths),) + (1,) * (a.ndim - 2) + (axis_len,)
    keep = (pos.reshape(1, -1) < lengths.reshape(-1, 1)).reshape(shape)
    return np.where(keep, a, -1)


def _chain_arrays(
    unary: Tensor, transitions: Tensor, start: Tensor | None, end: Tensor | None
) -> dict[str, Any]:
    _check.floating("unary", unary, (3,))
    b, t, s = unary.shape
    _check.floating("transitions", transitions, (2, 4))
    want = (s, s) if transitions.dim() == 2 else (b, max(t - 1, 0), s, s)
    _check.same_float("transitions", transitions, unary, want)
    arrays = {"unary": _np(unary), "transitions": _np(transitions)}
    for name, v in (("start", start), ("end", end)):
        if v is not None:
            _check.same_float(name, v, unary, (s,))
            arrays[name] = _np(v)
    return arrays


@torch.no_grad()
def chain_decode(
    unary: Tensor,
    transitions: Tensor,
    *,
    lengths: Tensor | None = None,
    mask: Tensor | None = None,
    start: Tensor | None = None,
    end: Tensor | None = None,
) -> Tensor:
    """Viterbi: the best tags [B, T] (−1 past each length)."""
    arrays = _chain_arrays(unary, transitions, start, end)
    b, t, _ = unary.shape
    lens = _np_int(_check.lengths_of(lengths, mask, b, t, unary))
    out = _native.scores_decode("chain", arrays, {"lengths": lens})
    return torch.from_numpy(_pad(out["tags"][:, 0], lens, t)).to(unary.device)


@torch.no_grad()
def chain_kbest(
    unary: Tensor,
    transitions: Tensor,
    k: int,
    *,
    lengths: Tensor | None = None,
    mask: Tensor | None = None,
    start: Tensor | None = None,
    end: Tensor | None = None,
) -> tuple[Tensor, Tensor]:
    """The ``k`` best tag sequences [B, k, T], best first, and their scores [B, k] (−inf where a
    sequence has fewer than k labels)."""
    if int(k) < 1:
        raise InvalidInputError(f"k must be at least 1, got {k}")
    arrays = _chain_arrays(unary, transitions, start, end)
    b, t, _ = unary.shape
    lens = _np_int(_check.lengths_of(lengths, mask, b, t, unary))
    out = _native.scores_decode("chain", arrays, {"lengths": lens}, int(k))
    tags = torch.from_numpy(_pad(out["tags"], lens, t)).to(unary.device)
    return tags, torch.from_numpy(out["scores"]).to(device=unary.device, dtype=unary.dtype)


@torch.no_grad()
def tree_decode(
    arcs: Tensor,
    *,
    lengths: Tensor | None = None,
    mask: Tensor | None = None,
    labels: Tensor | None = None,
    projective: bool = False,
    multi_root: bool = False,
) -> Tensor | tuple[Tensor, Tensor]:
    """The best tree of every sentence: heads [B, n] (Chu–Liu–Edmonds, or Eisner when
    ``projective``), and relations [B, n] when relation scores ``labels`` are given."""
    _check.floating("arcs", arcs, (3,))
    b, n1, _ = arcs.shape
    arrays = {"arcs": _np(arcs)}
    if labels is not None:
        _check.floating("labels", labels, (4,))
        _check.same_float("labels", labels, arcs, (b, n1, n1, labels.shape[3]))
        arrays["labels"] = _np(labels)
    lens = _np_int(_check.lengths_of(lengths, mask, b, n1 - 1, arcs, what="n"))
    out = _native.scores_decode(
        "tree",
        arrays,
        {"lengths": lens, "projective": bool(projective), "multi_root": bool(multi_root)},
    )
    heads = torch.from_numpy(_pad(out["heads"][:, 0], lens, n1 - 1)).to(arcs.device)
    if labels is None:
        return heads
    return heads, torch.from_numpy(_pad(out["rels"][:, 0], lens, n1 - 1)).to(arcs.device)


@torch.no_grad()
def multilabel_decode(
    unary: Tensor,
    *,
    pairwise: Tensor | None = None,
    edges: Sequence[Sequence[int]] | Any = None,
    inference: str = "auto",
) -> Tensor:
    """The best labeling [B, L] (0/1) of a pairwise MRF (enumeration, or QPBO with rounding)."""
    _check.floating("unary", unary, (2,))
    arrays = {"unary": _np(unary)}
    e = np.asarray(edges if edges is not None else [], dtype=np.int64).reshape(-1, 2)
    if pairwise is not None:
        _check.same_float("pairwise", pairwise, unary, None)
        arrays["pairwise"] = _np(pairwise)
    out = _native.scores_decode("multilabel", arrays, {"edges": e, "inference": inference})
    return torch.from_numpy(out["nodes"][:, 0].round().astype(np.int64)).to(unary.device)


@torch.no_grad()
def multiclass_decode(scores: Tensor) -> Tensor:
    """argmax over classes [B] (first maximum on ties)."""
    _check.floating("scores", scores, (2,))
    return scores.argmax(dim=1)
