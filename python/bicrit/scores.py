"""Structured losses on score arrays (``bicrit.scores``): every surrogate and search on the scores
of a neural network or any model, numpy in and out.

A score-level structure takes its scores as arrays instead of w·φ(x, y); the λ-oracle of one
example is then a Viterbi, Eisner, Chu–Liu–Edmonds, MRF or tree-DP call on those scores, and every
search drives it unchanged (thesis eq. ``lambda_oracle``). Kinds and their arrays (batch first):

=========== ============================================= =====================================
kind        scores                                        gold
=========== ============================================= =====================================
chain       unary [B, T, S], transitions [S, S] or        tags [B, T] (int)
            [B, T − 1, S, S], optional start, end [S]
tree        arcs [B, n + 1, n + 1] (arcs[b, h, d]: h → d, heads [B, n] (heads[b, j]: head of
            0 = root), labels [B, n + 1, n + 1, R]        token j + 1), rels [B, n] with labels
multilabel  unary [B, L] (score of y_k = 1), pairwise     labels [B, L] in {0, 1}
            [E, 2, 2] or [B, E, 2, 2] over edges [E, 2]
multiclass  scores [B, K]                                 labels [B]
hierarchy   node scores [B, M] over ``structure``         node indicators [B, M]
=========== ============================================= =====================================

Ragged batches: ``lengths`` [B] (chains: tokens; trees: words); entries past a length are ignored.
Task losses: chains ``"hamming"`` (per token) or ``"segment"`` (chunks, needs ``tag_names``);
trees the Hamming loss per arc, labelled when label scores are given (``label_weight`` for a right
head with a wrong relation); multilabel Hamming; multiclass 0-1; hierarchy its structure's loss.

Which value the loss is (``search``):

* ``"auto"`` (default): the exact maximum of ψ over the integral labels — one loss-augmented call
  for margin rescaling; the one-call frontier search where the frontier costs one pass over the
  labels (multiclass, multi-label with exact inference); otherwise the convex hull search with
  ban lists (exact integral; 1 to 3 oracle calls per sequence on chains). On chains with the
  Hamming loss ``search="frontier"`` gives the same value in one frontier DP, O(T²S²) instead of
  the Viterbi's O(T·S²): faster only for very short sequences (``benches/torch``). Relaxed
  multi-label inference (L > 16) has no ban list: there it is the maximum over the local
  polytope's hull.
* ``"convex-hull"``: the maximum over the convex hull of the labels' (h, g) points (an upper bound
  of the integral maximum; the answer may be a fractional point on a hull edge, two labels with
  weights).
* any registered search name with its options (``search_options``).

The gradient with respect to each score array is ∂ψ/∂m · (Σ_j weight_j·φ(ŷ_j) − φ(y)), where φ(y)
is the indicator of the score entries label y uses, m the margin, and the ŷ_j the answer's labels.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import numpy as np

from bicrit import _native
from bicrit.errors import InvalidInputError

__all__ = ["KINDS", "Answer", "LossResult", "WarmCache", "decode", "kbest", "loss"]

#: Warm starts by example id across batches (``loss(..., cache=WarmCache(), ids=...)``): the
#: labels an example's last search found, re-evaluated under the new scores before the search
#: asks the oracle. A hint only: the loss is exact with or without it; it saves oracle calls
#: when a training loop revisits its examples (every epoch). ``WarmCache(max_bytes=64 << 20)``
#: bounds its memory (least recently used examples dropped past it); ``len``, ``nbytes``,
#: ``hits``, ``misses``, ``clear()``. One cache per kind of structure.
WarmCache = _native.WarmCache

#: Score array names of each kind, required ones first.
KINDS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "chain": (("unary", "transitions"), ("start", "end")),
    "tree": (("arcs",), ("labels",)),
    "multilabel": (("unary",), ("pairwise",)),
    "multiclass": (("scores",), ()),
    "hierarchy": (("scores",), ()),
}

_GOLD = {
    "chain": "tags",
    "tree": "heads",
    "multilabel": "labels",
    "multiclass": "labels",
    "hierarchy": "nodes",
}
_OPTIONS = {
    "chain": {"lengths", "task_loss", "tag_names", "scheme", "outside"},
    "tree": {"lengths", "projective", "multi_root", "label_weight"},
    "multilabel": {"edges", "inference", "solver"},
    "multiclass": set(),
    "hierarchy": {"structure"},
}


@dataclass
class Answer:
    """The loss-augmented answer of every example: ``labels`` by name (chains ``tags`` [B, 2, T],
    trees ``heads``/``rels`` [B, 2, n], multi-label ``nodes`` [B, 2, L] and ``edges`` [B, 2, E, 4]
    marginals, multiclass ``labels`` [B, 2], hierarchy ``nodes`` [B, 2, M]), the ``weights`` [B, 2]
    of a fractional answer (integral answers: (1, 0), the second label a copy), their (h, g)
    ``points`` [B, 2, 2] and ``is_gold`` (the answer is the gold label: zero loss)."""

    labels: dict[str, np.ndarray]
    weights: np.ndarray
    points: np.ndarray
    is_gold: np.ndarray


@dataclass
class LossResult:
    """``loss`` [B], the ``answer``, the ``grad`` of the loss of each example summed over the batch
    (one array per score array, same shapes), ``coef`` [B] = ∂ψ/∂m at the answer, the ``method``
    that computed it and the oracle ``calls`` [B]."""

    loss: np.ndarray
    answer: Answer
    grad: dict[str, np.ndarray]
    coef: np.ndarray
    method: str
    calls: np.ndarray
    upper_bound: np.ndarray = field(repr=False)


@lru_cache(maxsize=64)
def _registered(name: str) -> Any:
    from bicrit import registry

    return registry.create("surrogate", name)


def _surrogate(surrogate: Any) -> Any:
    return _registered(surrogate) if isinstance(surrogate, str) else surrogate


@lru_cache(maxsize=64)
def _spec_cached(name: str, options: tuple[tuple[str, Any], ...]) -> Any:
    return _native.SearchSpec(name, dict(options))


def _spec(search: str | None, options: Mapping[str, Any] | None) -> Any:
    if search is None or search == "auto":
        if options:
            raise InvalidInputError("search_options need a named search, not search='auto'")
        return None
    if not isinstance(search, str):
        raise TypeError(
            f"search must be a registered search name or 'auto', got {type(search).__name__}"
        )
    return _spec_cached(search, tuple(sorted((options or {}).items())))


def _arrays(kind: str, scores: Any) -> dict[str, np.ndarray]:
    if kind not in KINDS:
        raise InvalidInputError(f"unknown kind {kind!r}; known kinds: {', '.join(KINDS)}")
    required, optional = KINDS[kind]
    if not isinstance(scores, Mapping):
        if len(required) != 1:
            raise InvalidInputError(
                f"kind {kind!r} takes a dict of score arrays {required + optional}, got one array"
            )
        scores = {required[0]: scores}
    unknown = set(scores) - set(required) - set(optional)
    if unknown:
        raise InvalidInputError(
            f"unknown score arrays {sorted(unknown)} for kind {kind!r} "
            f"(arrays: {required + optional})"
        )
    out = {}
    for name in required + optional:
        v = scores.get(name)
        if v is None:
            if name in required:
                raise InvalidInputError(f"kind {kind!r} needs the score array {name!r}")
            continue
        a = np.asarray(v)
        if not np.issubdtype(a.dtype, np.floating):
            raise InvalidInputError(
                f"score array {name!r} must be floating point, got dtype {a.dtype}"
            )
        out[name] = np.ascontiguousarray(a, dtype=np.float64)
    return out


def _int_array(name: str, v: Any) -> np.ndarray:
    a = np.asarray(v)
    if a.dtype == bool:
        a = a.astype(np.int64)
    if not np.issubdtype(a.dtype, np.integer):
        raise InvalidInputError(f"{name} must be integers, got dtype {a.dtype}")
    return np.ascontiguousarray(a, dtype=np.int64)


def _gold(kind: str, gold: Any) -> dict[str, np.ndarray]:
    if kind == "tree":
        if isinstance(gold, Mapping):
            heads, rels = gold.get("heads"), gold.get("rels")
        elif isinstance(gold, tuple):
            heads, rels = gold
        else:
            heads, rels = gold, None
        out = {"heads": _int_array("gold heads", heads)}
        if rels is not None:
            out["rels"] = _int_array("gold rels", rels)
        return out
    return {_GOLD[kind]: _int_array("gold labels", gold)}


def _options(kind: str, options: dict[str, Any]) -> dict[str, Any]:
    unknown = set(options) - _OPTIONS[kind]
    if unknown:
        raise InvalidInputError(
            f"unknown options {sorted(unknown)} for kind {kind!r} "
            f"(options: {sorted(_OPTIONS[kind])})"
        )
    out = {k: v for k, v in options.items() if v is not None}
    if "lengths" in out:
        out["lengths"] = _int_array("lengths", out["lengths"])
    if kind == "multilabel" and "edges" not in out:
        out["edges"] = np.zeros((0, 2), dtype=np.int64)
    if "edges" in out:
        e = _int_array("edges", out["edges"])
        out["edges"] = e.reshape(0, 2) if e.size == 0 else e
    if "structure" in out:
        s = out["structure"]
        native = getattr(s, "_native", s)
        if native is None:
            raise InvalidInputError(
                "the hierarchy structure is not initialised: build it with n_features (any value; "
                "the scores are given), e.g. bicrit.structure('hierarchy', parents, n_features=1)"
            )
        out["structure"] = native
    return out


def loss(
    kind: str,
    scores: Any,
    gold: Any,
    *,
    surrogate: Any = "margin",
    search: str | None = "auto",
    task_loss: str | None = None,
    search_options: Mapping[str, Any] | None = None,
    cache: Any = None,
    ids: Any = None,
    **options: Any,
) -> LossResult:
    """The structured loss max_y ψ(h(y), g(y)) of every example, its answer and its gradient.

    ``scores``: a dict of score arrays (see the module table; one array for multiclass and
    hierarchy); ``gold``: the gold labels; ``surrogate``: a registered name or surrogate object;
    ``search``: ``"auto"``, ``"convex-hull"`` or any registered search (options in
    ``search_options``); ``task_loss``: chains ``"hamming"`` or ``"segment"``; ``options``: the
    kind's options (``lengths``, ``tag_names``, ``scheme``, ``outside``, ``projective``,
    ``multi_root``, ``label_weight``, ``edges``, ``inference``, ``solver``, ``structure``);
    ``cache`` a :data:`WarmCache` with ``ids`` [B] (integers naming the examples, the same id for
    the same example in every epoch): warm starts across batches (the same values, fewer oracle
    calls; the one-call margin loss does not use it)."""
    arrays = _arrays(kind, scores)
    if (cache is None) != (ids is None):
        raise InvalidInputError(
            "a warm-start cache needs the examples' ids and ids need a cache: pass both or neither"
        )
    if cache is not None and not isinstance(cache, WarmCache):
        raise InvalidInputError(
            f"cache must be a bicrit.scores.WarmCache, got {type(cache).__name__}"
        )
    if task_loss is not None:
        if kind != "chain":
            raise InvalidInputError(
                "task_loss is chosen for chains only ('hamming' or 'segment'); "
                f"kind {kind!r} has its own"
            )
        options["task_loss"] = task_loss
    opts = _options(kind, options)
    out = _native.scores_loss(
        kind,
        arrays,
        _gold(kind, gold),
        opts,
        _surrogate(surrogate),
        _spec(search, search_options),
        gradient=True,
        cache=cache,
        ids=None if ids is None else _int_array("ids", ids),
    )
    return _result(kind, arrays, out)


_LABEL_KEYS = {
    "chain": ("tags",),
    "tree": ("heads", "rels"),
    "multilabel": ("nodes", "edges"),
    "multiclass": ("labels",),
    "hierarchy": ("nodes",),
}


def _result(kind: str, arrays: dict[str, np.ndarray], out: dict[str, Any]) -> LossResult:
    labels = {k: out[k] for k in _LABEL_KEYS[kind] if k in out}
    answer = Answer(labels, out["weights"], out["points"], np.asarray(out["is_gold"], dtype=bool))
    # the native gradient of the summed loss, flat in the order of the score arrays
    sizes = np.cumsum([a.size for a in arrays.values()])[:-1]
    parts = np.split(out["grad"], sizes)
    grad = {n: g.reshape(a.shape) for (n, a), g in zip(arrays.items(), parts, strict=True)}
    return LossResult(
        out["loss"], answer, grad, out["coef"], out["method"], out["calls"], out["upper_bound"]
    )


def decode(kind: str, scores: Any, **options: Any) -> dict[str, np.ndarray]:
    """The highest-scoring label of every example: a dict with the label arrays (chains ``tags``
    [B, T], trees ``heads`` (and ``rels``) [B, n], multi-label ``nodes`` [B, L], multiclass
    ``labels`` [B], hierarchy ``nodes`` [B, M]; padding holds 0) and their ``scores`` [B]."""
    arrays = _arrays(kind, scores)
    out = _native.scores_decode(kind, arrays, _options(kind, options))
    res = {k: v[:, 0] for k, v in out.items() if k not in ("scores", "count")}
    res["scores"] = out["scores"][:, 0]
    return res


def kbest(kind: str, scores: Any, k: int, **options: Any) -> dict[str, np.ndarray]:
    """The ``k`` highest-scoring labels of every example, best first: label arrays with a k axis
    after the batch axis, their ``scores`` [B, k] (−inf where an example has fewer labels) and
    ``count`` [B], the number of labels found."""
    if int(k) < 1:
        raise InvalidInputError(f"k must be at least 1, got {k}")
    arrays = _arrays(kind, scores)
    return dict(_native.scores_decode(kind, arrays, _options(kind, options), int(k)))
